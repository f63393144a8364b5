"""`maestro mail send|reply|broadcast|inbox|show|thread|wait`: the office's mailbox.

The sender is the calling session (``MAESTRO_SESSION_ID``; unset: the person, ``user``);
in a confined spoke, the command runs through its door as its own session (``bus.door``).
Output is compact on purpose: a model reads it, and an empty check costs two tokens.
"""

from __future__ import annotations

import argparse
from typing import Any

from maestro.bus import addressing
from maestro.bus.addressing import caller
from maestro.bus.mailbox import Mailbox
from maestro.bus.mailwait import wait_for_mail
from maestro.bus.messages import PRIORITIES, TYPES, mail_id, parse_mail_id, reads_for
from maestro.bus.sessions import USER, SessionStore, current_id
from maestro.cli.argtypes import count, seconds
from maestro.cli.context import Context, Result
from maestro.cli.verbs import verb_adder
from maestro.errors import MaestroError, NotFound
from maestro.install.invocation import current

DEFAULT_WAIT_S = 100.0

EXAMPLES = f"""\
  maestro mail send --to-coordinator --type query --subject "Token format?" --message "JWT or opaque?"
  maestro mail send --to t4-9f3c2a,t5-11aa02 --type directive --priority critical --message "Stop: spec changed"
  maestro mail reply m12 --message "JWT, RS256; see docs/auth.md"
  maestro mail broadcast --scope my-workers --type notification --message "API frozen at v2"
  maestro mail inbox --unread
  maestro mail show m12            the message and its receipts (delivered, read by whom, when)
  maestro mail thread m12
  maestro mail wait --timeout 90

The sender is MAESTRO_SESSION_ID (unset: the person, `user`, whose inbox also holds the
mail addressed to runs). Reading a message marks it read; the sender sees the receipt.
mail wait returns as soon as mail arrives (critical first), without polling; without
--timeout it returns after {DEFAULT_WAIT_S:g}s, under a shell tool's 2-minute limit.

Unless the coordinator is gone, mail wait ends with the exact command to wait again
(`next: ...`; "next" in --json), counting up with --poll so no two calls are the same.

exit codes (mail wait): 0 mail was printed; 11 the timeout passed with no mail; 12 your
coordinator's session is gone (nobody will answer); 1 an error."""

VERBS = ("send", "reply", "broadcast", "inbox", "show", "thread", "wait")


def _content(parser: argparse.ArgumentParser, *, subject: bool = True) -> None:
    if subject:
        parser.add_argument(
            "--type",
            choices=TYPES,
            default="notification",
            help="kind of message (default notification)",
        )
        parser.add_argument(
            "--priority", choices=PRIORITIES, default="normal", help="default normal"
        )
        parser.add_argument("--subject", help="one line (default: the message's first line)")
    parser.add_argument("--message", help="the text (default: read from stdin)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verb = verb_adder(parser)

    send = verb(
        "send",
        "send a message to sessions",
        '--to-coordinator --type query --subject "Token format?" --message "JWT or opaque?"',
    )
    to = send.add_mutually_exclusive_group(required=True)
    to.add_argument("--to", metavar="ID[,ID...]", help="session ids, comma-separated")
    to.add_argument("--to-coordinator", action="store_true", help="your coordinator session")
    to.add_argument(
        "--to-siblings", action="store_true", help="the live sessions sharing your coordinator"
    )
    _content(send)
    send.add_argument("--thread", metavar="MAILID", help="continue the thread of this mail")
    reply = verb(
        "reply",
        "answer a message (to its sender, in its thread)",
        'm12 --message "JWT, RS256; see docs/auth.md"',
    )
    reply.add_argument("mail", metavar="MAILID")
    _content(reply, subject=False)
    broadcast = verb(
        "broadcast",
        "send to a scope: my-workers (sessions I spawned), team, all",
        '--scope my-workers --type notification --message "API frozen at v2"',
    )
    broadcast.add_argument("--scope", choices=("my-workers", "team", "all"), required=True)
    _content(broadcast)
    inbox = verb("inbox", "list your mail by priority then time; unread ones in full", "--unread")
    inbox.add_argument("--unread", action="store_true", help="only mail not read yet")
    show = verb("show", "a message with its receipts", "m12")
    show.add_argument("mail", metavar="MAILID")
    thread = verb("thread", "every message of a thread, oldest first", "m12")
    thread.add_argument("mail", metavar="ID", help="a mail id of the thread")
    wait = verb("wait", "block until mail arrives, then print it (critical first)", "--timeout 90")
    wait.add_argument(
        "--timeout",
        type=seconds,
        default=DEFAULT_WAIT_S,
        metavar="S",
        help=f"return after S seconds at most (default {DEFAULT_WAIT_S:g}; 0 checks once)",
    )
    wait.add_argument(
        "--poll",
        type=count,
        default=1,
        metavar="N",
        help="this is the Nth wait in a row (the `next` line counts up)",
    )


# -- text ------------------------------------------------------------------------------


def header(message: Any, *, to: bool = False) -> str:
    kind = message.type if message.priority == "normal" else f"{message.type} {message.priority}"
    line = f"{mail_id(message.id)} {kind} from {message.sender}"
    if to:
        line += " to " + ",".join(message.to)
    if message.reply_to:
        line += f" re {mail_id(message.reply_to)}"
    return f"{line}: {message.subject}"


def full(message: Any, reader: str | None = None, *, to: bool = False) -> str:
    lines = [header(message, to=to)]
    lines += ["  " + text for text in message.body.splitlines() or [""]]
    if reader is not None and message.type in ("query", "blocked") and message.sender != reader:
        lines.append(f'  answer: maestro mail reply {mail_id(message.id)} --message "..."')
    return "\n".join(lines)


def _garbled_lines(garbled: list[Any]) -> list[str]:
    return [f"{item.id}: garbled ({item.problem}); skipped" for item in garbled]


def _subject(args: argparse.Namespace, body: str) -> str:
    # One line: a subject is shown on its message's header line.
    subject = " ".join((args.subject or body.strip().splitlines()[0]).split())
    return subject if len(subject) <= 80 else subject[:77] + "..."


# -- verbs -----------------------------------------------------------------------------


def _sent(message: Any, notes: list[str]) -> Result:
    text = f"sent {mail_id(message.id)} to {','.join(message.to)}"
    text += "".join(f"\nwarning: {note}" for note in notes)
    return Result("mail", {"verb": "send", "mail": message.to_dict(), "warnings": notes}, text)


def _send(args: argparse.Namespace, ctx: Context, me: Any, store: Any) -> Result:
    """``send``, and ``broadcast`` to a scope's live sessions (nothing to warn about)."""
    notes: list[str] = []
    if args.verb == "broadcast":
        recipients = addressing.scope(store, me, args.scope, ctx.env)
    else:
        if args.to_coordinator:
            recipients = [addressing.coordinator_of(me, ctx.env)]
        elif args.to_siblings:
            recipients = addressing.siblings(store, me, ctx.env)
        else:
            recipients = [part.strip() for part in args.to.split(",") if part.strip()]
        notes = addressing.check_recipients(store, recipients)
    body = ctx.text(args.message)
    mailbox = Mailbox(ctx.paths)
    thread = parse_mail_id(args.thread) if getattr(args, "thread", None) else None
    if thread is not None and me.id != USER:
        _mine(mailbox, thread, me)  # a session goes on only with a thread of its own mail
    message = mailbox.send(
        me.id,
        recipients,
        type=args.type,
        priority=args.priority,
        subject=_subject(args, body),
        body=body,
        thread=thread,
    )
    return _sent(message, notes)


def _reply(args: argparse.Namespace, ctx: Context, me: Any, store: Any) -> Result:
    mailbox = Mailbox(ctx.paths)
    number = parse_mail_id(args.mail)
    original = _mine(mailbox, number, me)
    notes = addressing.check_recipients(store, [original.sender])
    body = ctx.text(args.message)
    # An answer to an urgent question is as urgent as it; otherwise normal.
    priority = (
        original.priority
        if PRIORITIES.index(original.priority) < PRIORITIES.index("normal")
        else "normal"
    )
    subject = original.subject if original.subject.startswith("Re: ") else f"Re: {original.subject}"
    mailbox.mark_read([number], me.id)
    message = mailbox.send(
        me.id,
        [original.sender],
        type="answer",
        priority=priority,
        subject=subject[:80],
        body=body,
        thread=original.thread,
        reply_to=number,
    )
    return _sent(message, notes)


def _listing(
    verb: str, me: str, messages: list[Any], garbled: list[Any], empty: str, exit_code: int = 0
) -> Result:
    lines = [full(m, me) if m.new else f"{header(m)} (read)" for m in messages]
    lines += _garbled_lines(garbled)
    data = {
        "verb": verb,
        "session": me,
        "messages": [m.to_dict() for m in messages],
        "garbled": [g.to_dict() for g in garbled],
    }
    return Result("mail", data, "\n".join(lines) if lines else empty, exit_code=exit_code)


def _inbox(args: argparse.Namespace, ctx: Context, me: Any, store: Any) -> Result:
    messages, garbled = Mailbox(ctx.paths).inbox(me.id, unread_only=args.unread)
    return _listing(
        "inbox", me.id, messages, garbled, "no unread mail" if args.unread else "no mail"
    )


def _yours(me: Any, message: Any) -> bool:
    """A session reads the mail it sent or received; the person, all of the project's."""
    return me.id == USER or message.sender == me.id or any(reads_for(me.id, r) for r in message.to)


def _not_yours(number: int) -> NotFound:
    return NotFound(f"no mail {mail_id(number)} of yours.", "`maestro mail inbox` lists yours.")


def _mine(mailbox: Mailbox, number: int, me: Any) -> Any:
    """Mail ``number``, when ``me`` may read it (``_yours``): a session is told the same
    of another's mail as of mail that is not there."""
    try:
        message = mailbox.get(number)[0]
    except NotFound:
        if me.id == USER:
            raise
        raise _not_yours(number) from None
    if not _yours(me, message):
        raise _not_yours(number)
    return message


def _show(args: argparse.Namespace, ctx: Context, me: Any, store: Any) -> Result:
    mailbox = Mailbox(ctx.paths)
    number = parse_mail_id(args.mail)
    message = _mine(mailbox, number, me)
    if any(reads_for(me.id, r) for r in message.to):
        mailbox.mark_read([number], me.id)
    message, receipts = mailbox.get(number)
    lines = [full(message, me.id, to=True)]
    for receipt in receipts:
        state = f"read {receipt.read_at} by {receipt.read_by}" if receipt.read_at else "unread"
        lines.append(f"{receipt.recipient}: delivered {receipt.delivered}, {state}")
    data = {"verb": "show", "mail": message.to_dict(), "receipts": [r.to_dict() for r in receipts]}
    return Result("mail", data, "\n".join(lines))


def _thread(args: argparse.Namespace, ctx: Context, me: Any, store: Any) -> Result:
    mailbox = Mailbox(ctx.paths)
    number = parse_mail_id(args.mail)
    _mine(mailbox, number, me)  # the thread of a mail of one's own
    messages, garbled = mailbox.thread(number)
    messages = [m for m in messages if _yours(me, m)]
    # A row that does not read cannot be told to be anyone's: the person's to see.
    garbled = garbled if me.id == USER else []
    mailbox.mark_read([m.id for m in messages if any(reads_for(me.id, r) for r in m.to)], me.id)
    lines = [full(m, to=True) for m in messages] + _garbled_lines(garbled)
    data = {
        "verb": "thread",
        "messages": [m.to_dict() for m in messages],
        "garbled": [g.to_dict() for g in garbled],
    }
    return Result("mail", data, "\n".join(lines))


def _wait(args: argparse.Namespace, ctx: Context, me: Any, store: Any) -> Result:
    coordinator = me.coordinator if me.id != "user" else None
    alive = None
    if coordinator and coordinator != "user":

        def alive() -> bool:
            try:
                return bool(store.peek(coordinator).status in ("working", "idle"))
            except MaestroError:
                return False

    outcome = wait_for_mail(ctx.paths, me.id, args.timeout, coordinator_alive=alive)
    if outcome.state == "timeout":
        empty = f"no mail after {args.timeout:g}s"
    else:
        empty = f"no mail; your coordinator {coordinator} is gone: finish with what you have and report it in your answer"
    result = _listing("wait", me.id, outcome.messages, outcome.garbled, empty, outcome.exit_code)
    if outcome.state != "coordinator_gone":
        # The exact next call, never the same twice in a row (hosts stop a model that
        # repeats one: Gemini CLI after 5), as `maestro wait` does for runs.

        timeout = [] if args.timeout == DEFAULT_WAIT_S else ["--timeout", f"{args.timeout:g}"]
        words = [
            current(),
            "mail",
            "wait",
            *(["--json"] if ctx.json else []),
            *timeout,
            "--poll",
            str(args.poll + 1),
        ]
        result.data["next"] = " ".join(words)
        result.text += f"\nnext: {result.data['next']}"
    return result


_VERBS = {
    "send": _send,
    "reply": _reply,
    "broadcast": _send,
    "inbox": _inbox,
    "show": _show,
    "thread": _thread,
    "wait": _wait,
}


def run(args: argparse.Namespace, ctx: Context) -> Result:
    store = SessionStore(ctx.paths)
    me = caller(store, current_id(ctx.env))
    return _VERBS[args.verb](args, ctx, me, store)

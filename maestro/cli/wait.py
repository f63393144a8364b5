"""`maestro wait`: block until the run reports something, print it, say if it goes on."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result

DEFAULT_TIMEOUT_S = 100.0

EXAMPLES = f"""\
  maestro run --detach && maestro wait
  maestro wait --timeout 540          at most 9 minutes (stay under your shell tool's limit)
  maestro wait --json                 the same events as JSON objects
  maestro wait --run 20261121T120000Z-1a2b
  maestro wait --json --run 20261121T120000Z-1a2b --after 4 --poll 3   as a `next:` line says

Each answer ends with the exact command to run next (`next: ...`; "next" in --json),
until the run has ended. Run it as printed: it names the run, the last event shown
(--after, so a repeated call gives the same answer) and counts the calls (--poll), so no
two calls in a row are identical (hosts stop a model that repeats one: Gemini CLI after 5).

Returns as soon as a task finishes, fails or is blocked, a decision is needed, a worker
asks a question or reports a blocker (printed with the exact `maestro mail reply` line
that answers it), or the run ends; events and mail already shown are not shown again. Without --timeout it returns after
{DEFAULT_TIMEOUT_S:g}s, under the 2-minute default of a host's shell tool.

exit codes: 0 the run has ended (nothing more will happen); 10 the run is still going:
call `maestro wait` again; 11 the timeout passed with no task finished (still going);
1 an error (no run, bad flag)."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError("the timeout must be from 0 to 86400 seconds")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"return after S seconds at most (default {DEFAULT_TIMEOUT_S:g}; 0 checks once)",
    )
    parser.add_argument("--run", metavar="RUN_ID", help="follow this run (default: the latest)")
    parser.add_argument(
        "--after",
        type=_count,
        metavar="SEQ",
        help="show the events after this one (default: those not shown yet)",
    )
    parser.add_argument(
        "--poll",
        type=_count,
        metavar="N",
        help="this is the Nth call following the run (default: one more than the last)",
    )


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (0 or more)")
    return int(text)


def next_command(run_id: str, *, after: int, poll: int, as_json: bool) -> str:
    """The exact command line a hub runs next to follow ``run_id``: this same program,
    and never the same words twice in a row (``--poll`` counts up)."""
    from maestro.install.invocation import current

    mode = " --json" if as_json else ""
    return f"{current()} wait{mode} --run {run_id} --after {after} --poll {poll}"


def reply_command(mail_number: int) -> str:
    """The exact command that answers a worker's message, with this same program."""
    from maestro.bus.mailbox import mail_id
    from maestro.install.invocation import current

    return f'{current()} mail reply {mail_id(mail_number)} --message "..."'


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from maestro.engine.progress import describe
    from maestro.engine.rundir import find_run
    from maestro.engine.waiting import wait_for

    run_dir = find_run(ctx.paths, args.run)
    outcome = wait_for(run_dir, args.timeout, after=args.after, poll=args.poll)
    from maestro.cli.mail import full

    # A blocker is an event and mail to answer: shown once, as the mail with its reply line.
    answering = {message.id for message in outcome.mail}
    lines = [
        describe(event)
        for event in outcome.events
        if not (event.get("kind") == "task_report" and event.get("mail") in answering)
    ]
    mail = []
    for message in outcome.mail:
        reply = reply_command(message.id)
        mail.append({**message.to_dict(), "reply": reply})
        lines.append(full(message) + f"\n  answer: {reply}")
    if outcome.state == "ended" and not outcome.events:
        lines.append(
            "nothing new; "
            + (describe(outcome.ended) if outcome.ended else f"run {run_dir.run_id} has ended.")
        )
    if outcome.state == "running":
        lines.append(f"run {run_dir.run_id} is still going.")
    elif outcome.state == "timeout":
        news = "no task finished" if outcome.events else "nothing new"
        lines.append(f"{news} after {args.timeout:g}s; run {run_dir.run_id} is still going.")
    data: dict[str, object] = {
        "run_id": run_dir.run_id,
        "state": outcome.state,
        "events": outcome.events,
        "ended": outcome.ended,
        "last_seq": outcome.last_seq,
        "mail": mail,
    }
    if outcome.state != "ended":
        data["next"] = next_command(
            run_dir.run_id, after=outcome.last_seq, poll=outcome.poll + 1, as_json=ctx.json
        )
        lines.append(f"next: {data['next']}")
    return Result("wait", data, "\n".join(lines), exit_code=outcome.exit_code)

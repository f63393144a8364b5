"""`maestro task report progress|blocked|complete "<message>"`: a worker tells its
coordinator how its task goes. The task and the coordinator come from the session."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result
from maestro.cli.verbs import verb_adder
from maestro.errors import MaestroError

EXAMPLES = """\
  maestro task report progress "parser done, starting on the tests"
  maestro task report blocked "need the token format from task 3"
  maestro task report complete "added JWT auth; 14 tests pass"

progress goes as a status_update (normal), blocked as blocked (high), complete as a
status_update (high) and marks your session completed. Run from a spoke's shell
(MAESTRO_SESSION_ID set); a session without a coordinator reports to the person."""

# kind -> (mail type, priority)
KINDS = {
    "progress": ("status_update", "normal"),
    "blocked": ("blocked", "high"),
    "complete": ("status_update", "high"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    report = verb_adder(parser)(
        "report", "report progress, a blocker or completion to your coordinator"
    )
    report.add_argument("kind", choices=tuple(KINDS))
    report.add_argument("message", help="what to say, in one or a few lines")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from maestro.bus.addressing import caller, check_recipients
    from maestro.bus.mailbox import Mailbox, mail_id
    from maestro.bus.sessions import COORDINATOR_VAR, USER, SessionStore, current_id

    store = SessionStore(ctx.paths)
    me = caller(store, current_id(ctx.env))
    if me.id == USER:
        raise MaestroError(
            "task report is for a dispatched session, and MAESTRO_SESSION_ID is not set.",
            "run it from a spoke's shell, or use `maestro mail send` as the person.",
        )
    text = args.message.strip()
    if not text:
        raise MaestroError(
            "the report is empty.", 'say what happened: maestro task report progress "..."'
        )
    to = ctx.env.get(COORDINATOR_VAR, "").strip() or me.coordinator or USER
    notes = check_recipients(store, [to])
    kind, priority = KINDS[args.kind]
    tasks = ",".join(me.task_ids)
    label = f"task {tasks} {args.kind}" if tasks else args.kind
    first = text.splitlines()[0]
    subject = f"{label}: {first}" if len(first) <= 60 else f"{label}: {first[:57]}..."
    message = Mailbox(ctx.paths).send(
        me.id, [to], type=kind, priority=priority, subject=subject, body=text
    )
    if args.kind == "complete":
        store.update(me.id, status="completed")
    result = f"reported {args.kind} to {to} ({mail_id(message.id)})" + "".join(
        f"\nwarning: {n}" for n in notes
    )
    return Result(
        "task",
        {"verb": "report", "kind": args.kind, "mail": message.to_dict(), "warnings": notes},
        result,
    )

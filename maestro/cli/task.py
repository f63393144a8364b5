"""`maestro task report progress|blocked|complete "<message>"`: a worker tells its
coordinator how its task goes. `maestro task spawn --title ... --files ... --criteria ...`:
a coordinating task's spoke adds a subtask under its task, which the running engine
dispatches as its worker (maestro/engine/hierarchy.py). The task, the coordinator and
the run come from the session. `maestro task stop N --reason=TEXT`: stop a task that runs
or waits to run (maestro/engine/stoptask.py)."""

from __future__ import annotations

import argparse

from maestro.bus.addressing import caller, check_recipients
from maestro.bus.mailbox import Mailbox
from maestro.bus.messages import mail_id
from maestro.bus.sessions import COORDINATOR_VAR, USER, SessionStore, current_id
from maestro.cli.context import Context, Result
from maestro.cli.verbs import verb_adder
from maestro.engine.hierarchy import SpawnRequest, spawn
from maestro.engine.stoptask import stop_task
from maestro.errors import MaestroError
from maestro.state.model import SPECIALISTS, TASK_MODES, TOOLS

EXAMPLES = """\
  maestro task report progress "parser done, starting on the tests"
  maestro task report blocked "need the token format from task 3"
  maestro task report complete "added JWT auth; 14 tests pass"

  maestro task spawn --title "Add the login form" --files src/login.py,tests/test_login.py \
      --criteria "pytest tests/test_login.py passes" --validation "pytest -q tests/test_login.py"
  maestro task spawn --title "Wire the form into the app" --files src/app.py \
      --criteria "GET /login returns 200" --depends 4.1

  maestro task stop 4 --reason "requirements changed"

progress goes as a status_update (normal), blocked as blocked (high), complete as a
status_update (high) and marks your session completed. Run from a spoke's shell
(MAESTRO_SESSION_ID set); a session without a coordinator reports to the person.
spawn is for the spoke of a task with `Mode: coordinate`: the subtask's files lie within
your task's, it depends only on your other subtasks or on done tasks, and it reports to
you (`maestro mail wait`). Your task finishes when its subtasks have.
stop ends a running task's spoke (as `maestro session stop` does), or has the live run
never start a task that waits for a slot; either way the task is blocked with the reason."""

# kind -> (mail type, priority)
KINDS = {
    "progress": ("status_update", "normal"),
    "blocked": ("blocked", "high"),
    "complete": ("status_update", "high"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verb = verb_adder(parser)
    report = verb(
        "report",
        "report progress, a blocker or completion to your coordinator",
        'progress "parser done, starting on the tests"',
    )
    report.add_argument("kind", choices=tuple(KINDS))
    report.add_argument("message", help="what to say, in one or a few lines")
    spawn = verb(
        "spawn",
        "add a subtask under your coordinating task; the run dispatches it to a worker",
        '--title "Add the login form" --files src/login.py --criteria "GET /login returns 200"',
    )
    spawn.add_argument("--title", required=True, help="one atomic outcome, one line")
    spawn.add_argument(
        "--files",
        action="append",
        default=[],
        metavar="FILE[,FILE]",
        help="files it owns, within your task's (comma-separated or repeated)",
    )
    spawn.add_argument(
        "--criteria",
        action="append",
        default=[],
        metavar="TEXT",
        help="a testable success criterion (repeat for more)",
    )
    spawn.add_argument(
        "--depends",
        action="append",
        default=[],
        metavar="ID[,ID]",
        help="your earlier subtasks (or done tasks) it waits for",
    )
    spawn.add_argument("--validation", help="one shell command that checks it (exit 0 = pass)")
    spawn.add_argument("--specialist", choices=SPECIALISTS)
    spawn.add_argument("--agent", help="persona from `maestro agents list`")
    spawn.add_argument("--tool", choices=TOOLS, help="the spoke CLI (default: routed)")
    spawn.add_argument(
        "--mode",
        choices=TASK_MODES,
        default="execute",
        help="coordinate: the subtask splits itself again (within max_depth)",
    )
    stop = verb(
        "stop",
        "stop a task that runs or waits to run; it is blocked with the reason",
        '4 --reason "requirements changed"',
    )
    stop.add_argument("id", metavar="ID", help="the task's id")
    stop.add_argument("--reason", default="no reason given", help="recorded with the task")


def _split(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.verb == "spawn":
        return _spawn(args, ctx)
    if args.verb == "stop":
        data = stop_task(ctx.paths, ctx.env, args.id, args.reason)
        text = (
            f"stopped Task {data['task']} ({data['session']}, {data['process']}): {data['reason']}"
            if data["was"] == "running"
            else f"Task {data['task']} will not start in run {data['run']}: {data['reason']}"
        )
        return Result("task", {"verb": "stop", **data}, text)
    return _report(args, ctx)


def _spawn(args: argparse.Namespace, ctx: Context) -> Result:
    data = spawn(
        ctx.paths,
        ctx.env,
        SpawnRequest(
            title=args.title,
            files=_split(args.files),
            criteria=list(args.criteria),
            depends=_split(args.depends),
            validation=args.validation,
            specialist=args.specialist,
            agent=args.agent,
            tool=args.tool,
            mode=args.mode,
        ),
    )
    task = data["task"]
    facts = [f"files {', '.join(task['files'])}" if task["files"] else "no files"]
    if task["depends"]:
        facts.append(f"after {', '.join(task['depends'])}")
    text = (
        f"spawned Task {task['id']} under Task {task['parent']}: {task['title']} ({'; '.join(facts)})\n"
        "the run dispatches it as your worker; its reports come to you: maestro mail wait"
        + "".join(f"\nwarning: {w}" for w in data["warnings"])
    )
    return Result("task", {"verb": "spawn", **data}, text)


def _report(args: argparse.Namespace, ctx: Context) -> Result:
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

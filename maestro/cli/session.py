"""`maestro session list|show|whoami|stop`: who is at work in this project."""

from __future__ import annotations

import argparse
from typing import Any

from maestro.bus.addressing import caller, coordinator_of
from maestro.bus.sessions import SessionStore, current_id
from maestro.cli.context import Context, Result
from maestro.cli.verbs import verb_adder
from maestro.tables import aligned

EXAMPLES = """\
  maestro session whoami
  maestro session list                 every session, its mode, status and task
  maestro session list --siblings      the sessions sharing your coordinator
  maestro session list --mine          the sessions you spawned
  maestro session show t4-9f3c2a --json
  maestro session stop t4-9f3c2a --reason "requirements changed"

Your session is MAESTRO_SESSION_ID (unset: the person at the shell, `user`). A session
whose process is gone shows as dead."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    verb = verb_adder(parser)

    listing = verb("list", "the project's sessions", "--mine")
    listing.add_argument(
        "--siblings", action="store_true", help="only those sharing your coordinator"
    )
    listing.add_argument("--mine", action="store_true", help="only those you spawned")
    verb("show", "one session's manifest and status", "t4-9f3c2a --json").add_argument(
        "id", metavar="ID"
    )
    verb("whoami", "the calling session", "")
    stop = verb(
        "stop",
        "end a session's process group and mark it stopped",
        't4-9f3c2a --reason "requirements changed"',
    )
    stop.add_argument("id", metavar="ID")
    stop.add_argument(
        "--reason", default="no reason given", help="recorded with the session (and its task)"
    )


def _row(session: Any) -> str:
    task = ",".join(session.task_ids)
    parts = [session.id, session.mode, session.status]
    if task:
        parts.append(f"task {task}")
    if session.data.get("cli"):
        parts.append(str(session.data["cli"]))
    if session.coordinator:
        parts.append(f"coordinator {session.coordinator}")
    return " ".join(parts)


def _table(sessions: list[Any]) -> list[str]:
    head = ("ID", "MODE", "STATUS", "TASK", "CLI", "COORDINATOR")
    rows = [
        [
            s.id,
            s.mode,
            s.status,
            ",".join(s.task_ids) or "-",
            str(s.data.get("cli") or "-"),
            s.coordinator or "-",
        ]
        for s in sessions
    ]
    return aligned(head, rows) if rows else ["no sessions"]


def _describe(session: Any) -> str:
    data = session.data
    lines = [_row(session)]
    for key in (
        "strategy",
        "tier",
        "parent_session_id",
        "run_id",
        "agent",
        "created",
        "updated",
        "reason",
    ):
        if data.get(key):
            lines.append(f"  {key}: {data[key]}")
    process = data.get("process") or {}
    if process:
        lines.append(f"  pid: {process.get('pid')} ({'alive' if session.alive else 'gone'})")
    caps = [name for name, on in (data.get("capabilities") or {}).items() if on]
    if caps:
        lines.append("  capabilities: " + ", ".join(caps))
    directive = data.get("directive")
    if directive:
        lines.append(f"  directive from {directive['from']}: {directive['subject']}")
        lines += ["    " + line for line in directive["message"].splitlines()]
    lines += [f"  note: {note}" for note in data.get("notes") or []]
    return "\n".join(lines)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    store = SessionStore(ctx.paths)
    me = caller(store, current_id(ctx.env))
    if args.verb == "whoami":
        session = store.get(me.id)
        text = (
            "user (the person at a shell; no MAESTRO_SESSION_ID)"
            if me.id == "user"
            else _describe(session)
        )
        return Result("session", {"verb": "whoami", "session": session.to_dict()}, text)
    if args.verb == "show":
        session = store.get(args.id)
        return Result("session", {"verb": "show", "session": session.to_dict()}, _describe(session))
    if args.verb == "stop":
        session, outcome = store.stop(args.id, args.reason, me.id)
        return Result(
            "session",
            {"verb": "stop", "session": session.to_dict(), "process": outcome},
            f"stopped {session.id} ({outcome}): {session.data['reason']}",
        )
    sessions, broken = store.all()
    if args.siblings:
        lead = coordinator_of(me, ctx.env)
        sessions = [s for s in sessions if s.coordinator == lead and s.id != me.id]
    if args.mine:
        sessions = [s for s in sessions if s.parent == me.id]
    lines = _table(sessions)
    lines += [f"{sid}: unreadable manifest: {problem}" for sid, problem in broken]
    data = {
        "verb": "list",
        "sessions": [s.to_dict() for s in sessions],
        "broken": [{"id": sid, "problem": problem} for sid, problem in broken],
    }
    return Result("session", data, "\n".join(lines))

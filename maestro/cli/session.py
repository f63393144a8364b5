"""`maestro session list|show|whoami|stop`: who is at work in this project."""

from __future__ import annotations

import argparse
from typing import Any

from maestro.bus.addressing import caller, coordinator_of
from maestro.bus.sessions import USER, SessionStore, current_id
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


def _row(seen: dict[str, Any]) -> str:
    parts = [seen["id"], seen["mode"], seen["status"]]
    if seen.get("task_ids"):
        parts.append(f"task {','.join(seen['task_ids'])}")
    if seen.get("cli"):
        parts.append(str(seen["cli"]))
    if seen.get("coordinator_session_id"):
        parts.append(f"coordinator {seen['coordinator_session_id']}")
    return " ".join(parts)


def _table(seen: list[dict[str, Any]]) -> list[str]:
    head = ("ID", "MODE", "STATUS", "TASK", "CLI", "COORDINATOR")
    rows = [
        [
            s["id"],
            s["mode"],
            s["status"],
            ",".join(s.get("task_ids") or []) or "-",
            str(s.get("cli") or "-"),
            s.get("coordinator_session_id") or "-",
        ]
        for s in seen
    ]
    return aligned(head, rows) if rows else ["no sessions"]


def _describe(seen: dict[str, Any]) -> str:
    """A session as its viewer may see it (``Session.seen_by``): another's is its row."""
    lines = [_row(seen)]
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
        if seen.get(key):
            lines.append(f"  {key}: {seen[key]}")
    process = seen.get("process") or {}
    if process:
        lines.append(f"  pid: {process.get('pid')} ({'alive' if seen['alive'] else 'gone'})")
    caps = [name for name, on in (seen.get("capabilities") or {}).items() if on]
    if caps:
        lines.append("  capabilities: " + ", ".join(caps))
    directive = seen.get("directive")
    if directive:
        lines.append(f"  directive from {directive['from']}: {directive['subject']}")
        lines += ["    " + line for line in directive["message"].splitlines()]
    lines += [f"  note: {note}" for note in seen.get("notes") or []]
    return "\n".join(lines)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    store = SessionStore(ctx.paths)
    me = caller(store, current_id(ctx.env))
    if args.verb == "whoami":
        seen = store.get(me.id).seen_by(me.id)
        text = (
            "user (the person at a shell; no MAESTRO_SESSION_ID)"
            if me.id == USER
            else _describe(seen)
        )
        return Result("session", {"verb": "whoami", "session": seen}, text)
    if args.verb == "show":
        seen = store.get(args.id).seen_by(me.id)
        return Result("session", {"verb": "show", "session": seen}, _describe(seen))
    if args.verb == "stop":
        session, outcome = store.stop(args.id, args.reason, me.id)
        return Result(
            "session",
            {"verb": "stop", "session": session.seen_by(me.id), "process": outcome},
            f"stopped {session.id} ({outcome}): {session.data['reason']}",
        )
    sessions, broken = store.all()
    if args.siblings:
        lead = coordinator_of(me, ctx.env)
        sessions = [s for s in sessions if s.coordinator == lead and s.id != me.id]
    if args.mine:
        sessions = [s for s in sessions if s.parent == me.id]
    # Why another's manifest does not read is the person's to see, not a session's.
    broken = [(sid, problem) for sid, problem in broken if me.id in (USER, sid)]
    shown = [s.seen_by(me.id) for s in sessions]
    lines = _table(shown)
    lines += [f"{sid}: unreadable manifest: {problem}" for sid, problem in broken]
    data = {
        "verb": "list",
        "sessions": shown,
        "broken": [{"id": sid, "problem": problem} for sid, problem in broken],
    }
    return Result("session", data, "\n".join(lines))

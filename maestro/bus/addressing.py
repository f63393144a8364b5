"""Who a message goes to: named sessions, the coordinator, siblings, broadcast scopes.

An unknown recipient is an error, never a silent success; a recipient that has ended or
died is delivered to (it may be resumed, and the record stays) with a warning saying
nobody is there to read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from maestro.bus.sessions import COORDINATOR_VAR, USER, Session, SessionStore, check_id
from maestro.errors import MaestroError

SCOPES = ("my-workers", "team", "all")
_LIVE = ("working", "idle")


def _everyone(store: SessionStore) -> list[Session]:
    found = []
    for session_id in store.ids():
        try:
            found.append(store.peek(session_id))
        except MaestroError:
            continue  # a broken manifest: `session list` reports it
    return found


def caller(store: SessionStore, session_id: str) -> Session:
    """The calling session, which must exist (a mistyped MAESTRO_SESSION_ID would
    otherwise send mail as nobody)."""
    if session_id != USER and not store.exists(session_id):
        raise MaestroError(
            f"MAESTRO_SESSION_ID={session_id} names no session of this project.",
            "unset it to act as the person (user), or use the id your coordinator gave you.",
        )
    return store.peek(session_id)


def coordinator_of(me: Session, env: Mapping[str, str]) -> str:
    coordinator = env.get(COORDINATOR_VAR, "").strip() or me.coordinator
    if not coordinator:
        who = (
            "the person at a shell (no MAESTRO_SESSION_ID)"
            if me.id == USER
            else f"session {me.id} ({me.mode})"
        )
        raise MaestroError(f"{who} has no coordinator.", "name the recipient with --to ID.")
    return check_id(coordinator, COORDINATOR_VAR)


def siblings(store: SessionStore, me: Session, env: Mapping[str, str]) -> list[str]:
    """Live sessions sharing my coordinator, not me."""
    coordinator = coordinator_of(me, env)
    found = [
        s.id
        for s in _everyone(store)
        if s.coordinator == coordinator and s.id != me.id and s.status in _LIVE
    ]
    if not found:
        raise MaestroError(
            f"session {me.id} has no live siblings under {coordinator}.",
            "`maestro session list --siblings` shows them; send to --to-coordinator instead.",
        )
    return found


def scope(store: SessionStore, me: Session, name: str, env: Mapping[str, str]) -> list[str]:
    """Recipients of a broadcast: ``my-workers`` the live sessions I spawned; ``team`` my
    coordinator and its live workers (for a top-level session, its own workers); ``all``
    every live session of the project, and the person. Never the sender."""
    if name not in SCOPES:
        raise MaestroError(f"unknown scope {name!r}.", f"use one of: {', '.join(SCOPES)}.")
    everyone = [s for s in _everyone(store) if s.id != me.id and s.status in _LIVE]
    if name == "my-workers":
        found = [s.id for s in everyone if s.parent == me.id]
    elif name == "team":
        lead = env.get(COORDINATOR_VAR, "").strip() or me.coordinator or me.id
        found = [s.id for s in everyone if s.coordinator == lead]
        if lead != me.id:
            found.insert(0, lead)
    else:
        found = ([USER] if me.id != USER else []) + [s.id for s in everyone]
    if not found:
        raise MaestroError(
            f"nobody live in scope {name} of session {me.id}.",
            "`maestro session list` shows who is working.",
        )
    return list(dict.fromkeys(found))


def check_recipients(store: SessionStore, ids: Sequence[str]) -> list[str]:
    """Refuse unknown recipients; return a warning for each that will not read."""
    notes = []
    for session_id in ids:
        check_id(session_id, "recipient")
        if not store.exists(session_id):
            raise store.unknown(session_id)
        if session_id == USER:
            continue
        session = store.peek(session_id)
        if session.status not in _LIVE:
            notes.append(
                f"{session_id} is {session.status}: nobody will read it unless it is resumed"
            )
    return notes

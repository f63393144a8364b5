"""Sessions: every dispatch, every run, and the person at a shell (``user``).

``.ai/maestro/sessions/<id>/`` holds ``manifest.json`` (schema in ``bus.schema``),
``alive.lock`` (held while the session's process lives: ``bus.liveness``) and
``edit.lock`` (around read-modify-write of the manifest). A session's identity comes from
the environment (``MAESTRO_SESSION_ID``; unset means the person, ``user``), so the same
commands work in a spoke's shell, in its worktree or a subfolder, with no flags.

An unconfined spoke writes that folder itself (a confined one only through its door,
``bus.door``, as its own session), so a manifest says only what a session may change
about itself (``OWN_FIELDS``). Everything else, what Maestro set
when it made the session (mode, capabilities, coordinator, tasks) or started its process
(the pid ``stop`` signals), is read from Maestro's record of it, ``sessions/<id>.json`` in
the project's private folder (``ProjectPaths.private_dir``), where no spoke's sandbox
reaches: editing a manifest raises no session's capabilities and points ``stop`` at no
other process. A session Maestro has no record of (a manifest written by hand or by an
unconfined spoke) has no capabilities and no process to signal.

The engine calls ``start_run_session``, ``spoke_env`` and ``end_session`` (bus/workers.py)
and opens each dispatch's session through ``engine.dispatch.Dispatch``.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maestro import clock
from maestro.agents.tiers import TIERS
from maestro.bus import sessionschema
from maestro.bus.liveness import Lease, ProcessMark, lock_held
from maestro.errors import MaestroError, NotFound
from maestro.fsutil import atomic_write, file_lock, private_folder, read_private
from maestro.paths import ID_PATTERN, ProjectPaths
from maestro.pids import group_alive, signal_group, stop_gracefully
from maestro.prompts.sessionmanifest import SessionManifest

USER = "user"
SESSION_VAR = "MAESTRO_SESSION_ID"
COORDINATOR_VAR = "MAESTRO_COORDINATOR_SESSION_ID"
STOP_GRACE_S = 3.0
_ID = re.compile(ID_PATTERN)
# What a session may change in its own manifest (`task report complete`, a coordinator's
# `session stop` from its spoke's shell), and the format it is written in; every other
# field is Maestro's record's.
OWN_FIELDS = ("format_version", "status", "reason", "updated")
# What a session may know of another: who it is, what it does and for whom (to address
# it), and whether anyone is there to read its mail. Its process, directive, reason, CLI,
# agent and times are its own and the person's (docs/office.md, "What a session sees").
SEEN_BY_OTHERS = ("id", "mode", "status", "coordinator_session_id", "parent_session_id", "task_ids")


def check_id(session_id: str, what: str = "session id") -> str:
    if not _ID.match(session_id):
        raise MaestroError(
            f"{what} {session_id!r} is not a session id.",
            "use letters, digits, '.', '_' and '-' (as `maestro session list` shows them).",
        )
    return session_id


def current_id(env: Mapping[str, str]) -> str:
    """The calling session: ``MAESTRO_SESSION_ID``, or ``user`` for a person at a shell."""
    value = env.get(SESSION_VAR, "").strip()
    return check_id(value, SESSION_VAR) if value else USER


def new_id(prefix: str) -> str:
    """``<prefix>-<6 hex>``; the prefix (a kind, a task id) made safe for a folder name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "", prefix)[:48] or "s"
    return f"{safe}-{secrets.token_hex(3)}"


def resolve_mode(mode: str, coordinator: str | None, tier: str | None) -> SessionManifest:
    """The four-mode manifest (``prompts.sessionmanifest``) for these values, the
    capabilities derived once from mode and tier."""

    if tier is not None and tier not in TIERS:
        raise MaestroError(f"unknown tier {tier!r}.", f"use one of: {', '.join(TIERS)}.")
    shell = tier is None or tier in ("read+shell", "full")
    manifest = SessionManifest(mode=mode, coordinator_session_id=coordinator, shell=shell)
    coordinated = manifest.mode.startswith("coordinated-")
    if coordinated and not coordinator:
        raise MaestroError(
            f"a {manifest.mode} needs a coordinator session.",
            f"name it, or use mode {manifest.mode.removeprefix('coordinated-')}.",
        )
    if coordinator and not coordinated:
        raise MaestroError(
            f"a {manifest.mode} has no coordinator, but {coordinator!r} was named.",
            f"use mode coordinated-{manifest.mode}.",
        )
    return manifest


@dataclass
class Session:
    """One manifest as read, with the liveness seen at that moment."""

    data: dict[str, Any]
    alive: bool

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def mode(self) -> str:
        return str(self.data["mode"])

    @property
    def recorded_status(self) -> str:
        return str(self.data["status"])

    @property
    def status(self) -> str:
        """What the session is doing: a working or idle session whose process is gone is dead."""
        status = self.recorded_status
        return "dead" if status not in sessionschema.ENDED and not self.alive else status

    @property
    def coordinator(self) -> str | None:
        return self.data.get("coordinator_session_id")

    @property
    def parent(self) -> str | None:
        return self.data.get("parent_session_id")

    @property
    def task_ids(self) -> list[str]:
        return list(self.data.get("task_ids") or [])

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.data,
            "status": self.status,
            "recorded_status": self.recorded_status,
            "alive": self.alive,
        }

    def seen_by(self, viewer: str) -> dict[str, Any]:
        """The session as session ``viewer`` may see it: whole to itself and to the
        person, only ``SEEN_BY_OTHERS`` to any other."""
        whole = self.to_dict()
        if viewer in (USER, self.id):
            return whole
        return {key: whole[key] for key in SEEN_BY_OTHERS if key in whole}


def user_session() -> Session:
    """The person at a shell: no manifest, never dead, coordinator of what it starts."""
    data = {
        "format_version": sessionschema.FORMAT_VERSION,
        "id": USER,
        "mode": "coordinator",
        "strategy": "default",
        "capabilities": {},
        "status": "idle",
        "created": "",
        "coordinator_session_id": None,
        "parent_session_id": None,
        "task_ids": [],
    }
    return Session(data, True)


def _write_manifest(path: Path, data: dict[str, Any]) -> None:
    # Not fsynced: a manifest is a record of processes that a crash of the machine ends
    # anyway; atomic, so it is never read half-written. A dispatch writes three.
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", durable=False)


class SessionStore:
    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.root = paths.machine_dir / "sessions"
        self.records = paths.private_dir / "sessions"

    def folder(self, session_id: str) -> Path:
        return self.root / check_id(session_id)

    def manifest_path(self, session_id: str) -> Path:
        return self.folder(session_id) / "manifest.json"

    def alive_lock(self, session_id: str) -> Path:
        return self.folder(session_id) / "alive.lock"

    def record_path(self, session_id: str) -> Path:
        return self.records / f"{check_id(session_id)}.json"

    # -- reading ---------------------------------------------------------------------

    def exists(self, session_id: str) -> bool:
        return session_id == USER or self.manifest_path(session_id).is_file()

    def _read(self, session_id: str) -> dict[str, Any]:
        path = self.manifest_path(session_id)
        return sessionschema.check(self._load(session_id), path)

    def _load(self, session_id: str) -> Any:
        path = self.manifest_path(session_id)
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise self.unknown(session_id) from None
        except (ValueError, UnicodeDecodeError):
            raise MaestroError(
                "the session manifest is not valid JSON.",
                "delete that session folder; it is only a record.",
                file=path,
            ) from None
        if not isinstance(manifest, dict):
            return manifest  # the schema names the problem
        try:
            record = json.loads(read_private(self.record_path(session_id)) or b"null")
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("id") != session_id:
            return {**manifest, "capabilities": {}, "process": None}
        return {**record, **{k: manifest[k] for k in OWN_FIELDS if k in manifest}}

    def _record(self, data: dict[str, Any]) -> None:
        """Keep what Maestro set for the session where no spoke writes (see the module
        doc). Inside a spoke's sandbox it cannot be written: that session is unrecorded."""
        if private_folder(self.records, create=True):
            with contextlib.suppress(OSError, MaestroError):
                atomic_write(
                    self.record_path(data["id"]),
                    json.dumps(data, ensure_ascii=False) + "\n",
                    mode=0o600,
                    durable=False,
                )

    def peek(self, session_id: str) -> Session:
        """The session as recorded, with only a structural check (no jsonschema import):
        for the mail commands' look-ups, which must start in milliseconds. Manifests are
        schema-checked when written and when ``session`` commands show them."""
        if session_id == USER:
            return user_session()
        data = self._load(check_id(session_id))
        if (
            not isinstance(data, dict)
            or data.get("id") != session_id
            or data.get("status") not in sessionschema.STATUSES
        ):
            return Session(self._read(session_id), False)  # let the schema name the problem
        return Session(data, self._alive(data))

    def get(self, session_id: str) -> Session:
        if session_id == USER:
            return user_session()
        data = self._read(check_id(session_id))
        return Session(data, self._alive(data))

    def _alive(self, data: dict[str, Any]) -> bool:
        if lock_held(self.alive_lock(data["id"])):
            return True
        mark = ProcessMark.from_dict(data.get("process") or {})
        return mark is not None and mark.alive()

    def ids(self) -> list[str]:
        try:
            return sorted(
                entry.name
                for entry in os.scandir(self.root)
                if entry.is_dir() and _ID.match(entry.name)
            )
        except FileNotFoundError:
            return []

    def all(self) -> tuple[list[Session], list[tuple[str, str]]]:
        """Every session, oldest first, and the ones whose manifest cannot be read
        (id, the error), reported instead of failing the whole listing."""
        sessions, broken = [], []
        for session_id in self.ids():
            try:
                sessions.append(self.get(session_id))
            except NotFound:
                continue  # a folder being created right now
            except MaestroError as exc:
                broken.append((session_id, str(exc)))
        sessions.sort(key=lambda s: (str(s.data.get("created", "")), s.id))
        return sessions, broken

    def of_task(self, task_id: str) -> list[Session]:
        """The sessions that worked on Task ``task_id``, oldest first, each read with
        ``peek``'s check (one that does not read is left out)."""
        found = []
        for session_id in self.ids():
            with contextlib.suppress(MaestroError):  # gone meanwhile, or unreadable
                session = self.peek(session_id)
                if task_id in session.task_ids:
                    found.append(session)
        return sorted(found, key=lambda s: (str(s.data.get("created", "")), s.id))

    def unknown(self, session_id: str) -> NotFound:
        known = self.ids()
        close = difflib.get_close_matches(session_id, known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        return NotFound(
            f"no session {session_id} in this project.",
            f"{hint}`maestro session list` shows the sessions.",
        )

    # -- writing ---------------------------------------------------------------------

    def create(
        self,
        *,
        mode: str,
        session_id: str | None = None,
        tier: str | None = None,
        coordinator: str | None = None,
        parent: str | None = None,
        run_id: str | None = None,
        task_ids: Sequence[str] = (),
        cli: str | None = None,
        agent: str | None = None,
        directive: Mapping[str, str] | None = None,
        status: str = "working",
    ) -> Session:
        manifest = resolve_mode(mode, coordinator, tier)
        for other in (coordinator, parent):
            if other is not None and not self.exists(check_id(other)):
                raise self.unknown(other)
        session_id = check_id(session_id or new_id("s"))
        if session_id == USER:
            raise MaestroError(
                "'user' is the person at a shell, not a session to create.", "choose another id."
            )
        now = clock.iso()
        data: dict[str, Any] = {
            "format_version": sessionschema.FORMAT_VERSION,
            "id": session_id,
            "mode": manifest.mode,
            "strategy": manifest.strategy,
            "tier": tier,
            "capabilities": dict(manifest.capabilities),
            "coordinator_session_id": coordinator,
            "parent_session_id": parent or coordinator,
            "run_id": run_id,
            "task_ids": [str(t) for t in task_ids],
            "cli": cli,
            "agent": agent,
            "process": None,
            "status": status,
            "reason": None,
            "created": now,
            "updated": now,
            "directive": dict(directive) if directive else None,
            "notes": [],
        }
        path = self.manifest_path(session_id)
        sessionschema.check(data, path)
        with file_lock(self.folder(session_id) / "edit.lock"):
            if path.exists():
                raise MaestroError(f"session {session_id} already exists.", "choose another id.")
            self._record(data)
            _write_manifest(path, data)
        return Session(data, self._alive(data))

    def update(self, session_id: str, **fields: Any) -> Session:
        """Change manifest fields under the session's lock; validated before writing."""
        return self._edit(session_id, fields)

    def _edit(
        self, session_id: str, fields: Mapping[str, Any], *, keep_stopped: bool = False
    ) -> Session:
        """The read-modify-write of a manifest, under its lock. With ``keep_stopped`` a
        session already stopped is left as it is: checked inside the lock, so a stop
        recorded a moment earlier is never written over."""
        path = self.manifest_path(session_id)
        with file_lock(self.folder(session_id) / "edit.lock"):
            data = self._read(session_id)
            if keep_stopped and data["status"] == "stopped":
                return Session(data, self._alive(data))
            data.update(fields, updated=clock.iso())
            sessionschema.check(data, path)
            if not set(fields) <= set(OWN_FIELDS):
                self._record(data)
            _write_manifest(path, data)
        return Session(data, self._alive(data))

    def lease(self, session_id: str) -> Lease:
        """Hold this session's liveness lock (see ``Lease``)."""
        return Lease(self.alive_lock(session_id))

    def attach_process(self, session_id: str, pid: int) -> Session:
        """Record the process that runs the session (once it is started): its pid with the
        start time that makes it unique, and its process group (for ``stop``)."""
        mark = ProcessMark.of(pid)
        try:
            pgid: int | None = os.getpgid(pid)
        except OSError:
            pgid = None
        return self.update(session_id, process={**mark.to_dict(), "pgid": pgid})

    def end(self, session_id: str, status: str, reason: str | None = None) -> Session:
        """Mark a session finished. A session already stopped keeps that status and its
        reason: the engine's later "failed" says less than why it was stopped."""
        if status not in sessionschema.ENDED or status == "dead":
            raise MaestroError(
                f"{status!r} is not an end status.", "use completed, failed or stopped."
            )
        return self._edit(session_id, {"status": status, "reason": reason}, keep_stopped=True)

    def stop(self, session_id: str, reason: str, by: str) -> tuple[Session, str]:
        """Mark a session stopped with the reason, then end its process group for real.
        Returns the session and what was done to its process.

        The mark comes first: whoever waits on the process (the run engine) reads why it
        ended as soon as it has, with no window in which the spoke is gone but the
        reason not yet written."""
        target = self.get(session_id)
        if session_id == USER:
            raise MaestroError(
                "'user' is the person at a shell; it cannot be stopped.", "name a session."
            )
        if by != USER and by not in self.ancestors(target):
            raise MaestroError(
                f"session {by} may not stop {session_id}: only its coordinators or the person can.",
                "ask your coordinator: `maestro mail send --to-coordinator --type blocked ...`.",
            )
        stopped = self.update(session_id, status="stopped", reason=f"stopped by {by}: {reason}")
        return stopped, _kill(target, by)

    def ancestors(self, session: Session) -> list[str]:
        """Coordinators and parents up the chain (cycles and missing links end it)."""
        seen: list[str] = []
        frontier = [session.coordinator, session.parent]
        while frontier:
            current = frontier.pop()
            if not current or current in seen:
                continue
            seen.append(current)
            if current == USER or not self.exists(current):
                continue
            try:
                upper = self.get(current)
            except MaestroError:
                continue
            frontier += [upper.coordinator, upper.parent]
        return seen


NO_PROCESS = "no live process"  # what stop() did when the session had none


def _kill(session: Session, by: str) -> str:
    """SIGTERM the session's process group, SIGKILL what is left after a grace period.
    Only a process proven to be the session's (pid with its start time) is signalled: a
    recycled pid is never killed. What was done names the process for the person only
    (a pid is the session's own record, not its coordinator's)."""

    mark = ProcessMark.from_dict(session.data.get("process") or {})
    if mark is None or not mark.alive():
        return NO_PROCESS
    pgid = (session.data.get("process") or {}).get("pgid")
    # Signal the group only when the session leads its own (the runner starts every
    # spoke with start_new_session); else only the process, never the engine's group.
    group = pgid if pgid == mark.pid else None

    def send(sig: int) -> None:
        if group is not None:
            signal_group(group, sig)
        else:
            try:
                os.kill(mark.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def running() -> bool:
        return mark.alive() or (group is not None and group_alive(group))

    verb = "killed" if stop_gracefully(send, running, STOP_GRACE_S) else "ended"
    what = "process group" if group else "process"
    return f"{verb} {what} {group or mark.pid}" if by == USER else f"{verb} its {what}"

"""The sessions a run makes, as its engine calls them: the run's coordinator session
(``run-<id>``), one worker session per dispatch with its process attached, and what a
spoke needs to reach the office: its environment, the folders it may write, and the
``maestro`` its shell finds (the shim, in the user's state folder)."""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path

from maestro.bus.liveness import Lease
from maestro.bus.sessions import COORDINATOR_VAR, SESSION_VAR, USER, Session, SessionStore
from maestro.fsutil import atomic_write
from maestro.install.invocation import here
from maestro.paths import ProjectPaths, user_state_dir


def run_session_id(run_id: str) -> str:
    return f"run-{run_id}"


def start_run_session(paths: ProjectPaths, run_id: str, *, goal: str | None = None) -> Lease:
    """The run as the coordinator session of its workers, started by the person (its
    parent is ``user``). The returned lease is held by the engine for the run's life;
    release it (``end_session`` first) when the run ends."""
    store = SessionStore(paths)
    session_id = run_session_id(run_id)
    if not store.exists(session_id):
        directive = {"subject": "goal", "message": goal, "from": USER} if goal else None
        store.create(
            mode="coordinator",
            session_id=session_id,
            parent=USER,
            run_id=run_id,
            directive=directive,
        )
    lease = store.lease(session_id)
    store.attach_process(session_id, os.getpid())
    store.update(session_id, status="working")
    return lease


def end_session(
    paths: ProjectPaths,
    session_id: str,
    status: str,
    reason: str | None = None,
    lease: Lease | None = None,
) -> None:
    """Mark the end (completed, failed or stopped) and let go of the liveness lock."""
    try:
        SessionStore(paths).end(session_id, status, reason)
    finally:
        if lease is not None:
            lease.release()


def office_dirs(paths: ProjectPaths, *, create: bool = True) -> list[Path]:
    """The office's store (made now, with ``create``): what an unconfined spoke's `maestro
    mail` and `task report` write, and no more of the state dir; hidden from a confined
    one, whose commands go through its door (``bus.door``)."""
    folders = [paths.machine_dir / "mail", paths.machine_dir / "sessions"]
    for folder in folders if create else ():
        folder.mkdir(parents=True, exist_ok=True)
    return folders


def spoke_env(paths: ProjectPaths, session: Session, *, path: str | None = None) -> dict[str, str]:
    """The environment entries a spoke needs so that ``maestro mail``/``task report``
    typed in its shell find this project's state and know who is speaking, from its
    worktree or any subfolder, with no flags. With ``path`` (the PATH the spoke would
    get) also a PATH on which a bare ``maestro`` is this Maestro (``shim``): the one its
    prompt names, wherever Maestro was installed."""
    env = {
        SESSION_VAR: session.id,
        "MAESTRO_PROJECT_DIR": str(paths.root),
        "MAESTRO_STATE_DIR": str(paths.state_dir_name),
    }
    if path is not None:
        env["PATH"] = os.pathsep.join(p for p in (str(shim()), path) if p)
    if session.coordinator:
        env[COORDINATOR_VAR] = session.coordinator
    state = Path(paths.state_dir_name)
    if state.is_absolute() and not state.resolve().is_relative_to(paths.root.resolve()):
        env["MAESTRO_STATE_DIR_OUTSIDE"] = "1"
    return env


def shim() -> Path:
    """A folder holding one ``maestro`` that runs the Maestro dispatching the spokes. A
    spoke's shell has the user's PATH, which need not hold the virtualenv or pipx folder
    Maestro runs from (the hub's command files name it by its full path for the same
    reason); the folder holds nothing else, so the spoke's own ``python`` and tools stay
    the user's. It lies in the user's state folder, named by what it runs: never in the
    project's ``.ai/maestro``, which a Codex spoke's sandbox may write, where one spoke
    could replace it and have the next spoke's shell run its script outside that
    sandbox. Checked before every dispatch, rewritten when it differs."""

    text = (
        "#!/bin/sh\n"
        "# Written by Maestro for the shells of the spokes it dispatches.\n"
        f'exec {shlex.join(here())} "$@"\n'
    )
    shims = user_state_dir(create=True) / "shims"
    folder = shims / hashlib.sha256(text.encode()).hexdigest()[:16]
    script = folder / "maestro"
    try:
        current = script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if current != text or not os.access(script, os.X_OK):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(script, text, mode=0o755)
    return folder

"""A session for each dispatch outside a run: a challenge, a review, a plan asked of a CLI.

A run's task attempts are coordinated workers of the run (``workers.create_worker_session``).
The other dispatches are standalone ``worker`` sessions of whoever asked (the person, or
the session whose shell ran the command), so `maestro session list` shows every CLI
Maestro has started, what it was asked, and how it ended:

    with dispatch_session(paths, kind="challenge", cli="gemini", env=env,
                          subject="Challenge the plan", message=goal) as office:
        request.env_extra = {**request.env_extra, **office.env}
        result = spoke.dispatch(request, base_env=env, on_start=office.started)
        office.finish(result.success, result.error)

The session is ``working`` from the start, holds its liveness lease until the dispatch
ends (so a Maestro killed meanwhile leaves it ``dead``, not a stale "working"), records
the spoke's process when it starts, and ends ``completed`` or ``failed`` (an exception
out of the block fails it with the error's message).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from maestro.bus.liveness import Lease
from maestro.bus.sessions import USER, Session, SessionStore, current_id, new_id
from maestro.bus.workers import attach_process, end_session, spoke_env
from maestro.paths import ProjectPaths


@dataclass
class DispatchSession:
    paths: ProjectPaths
    session: Session
    lease: Lease
    env: dict[str, str]  # to merge into the spoke's environment (``env_extra``)
    outcome: tuple[str, str | None] | None = None

    def started(self, pid: int) -> None:
        """The runner's ``on_start``: the spoke's process becomes the session's."""
        if pid != os.getpid():
            attach_process(self.paths, self.session.id, pid)

    def finish(self, ok: bool, reason: str | None = None) -> None:
        """How the dispatch ended, recorded when the block exits."""
        self.outcome = ("completed", None) if ok else ("failed", reason or "the CLI failed")


@contextmanager
def dispatch_session(
    paths: ProjectPaths,
    *,
    kind: str,
    cli: str,
    env: Mapping[str, str],
    subject: str,
    message: str,
    task_ids: Sequence[str] = (),
    tier: str = "read-only",
) -> Iterator[DispatchSession]:
    """A ``worker`` session named ``<kind>-<random>`` for one dispatch to ``cli``, its
    parent the calling session (``MAESTRO_SESSION_ID`` in ``env``, else the person), its
    initial directive what the CLI is asked (``subject``, ``message``)."""
    store = SessionStore(paths)
    caller = current_id(env)
    parent = caller if store.exists(caller) else USER
    session = store.create(
        mode="worker",
        session_id=new_id(kind),
        tier=tier,
        parent=parent,
        task_ids=task_ids,
        cli=cli,
        directive={"subject": subject, "message": message, "from": parent},
    )
    lease = store.lease(session.id)
    office = DispatchSession(
        paths, session, lease, spoke_env(paths, session, path=env.get("PATH", os.defpath))
    )
    try:
        yield office
    except BaseException as exc:
        end_session(paths, session.id, "failed", str(exc) or type(exc).__name__, lease=lease)
        raise
    status, reason = office.outcome or ("completed", None)
    end_session(paths, session.id, status, reason, lease=lease)

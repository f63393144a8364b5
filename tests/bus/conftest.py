"""An office: a run session (held alive by this test process) and its workers."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from maestro.bus import sessions, workers
from maestro.bus.liveness import Lease
from maestro.engine.dispatch import Dispatch
from maestro.paths import ProjectPaths


@dataclass
class Office:
    root: Path
    paths: ProjectPaths
    run: str
    leases: dict[str, Lease] = field(default_factory=dict)

    def worker(self, task: str, message: str = "") -> sessions.Session:
        """A run's task at work: its dispatch's session, its lease held by this process."""
        dispatch = Dispatch(
            self.paths,
            {},
            cli="claude",
            kind=f"t{task}",
            subject=f"task {task}",
            message=message,
            tier="full",
            task=task,
            mode="coordinated-worker",
            coordinator=self.run,
            run_id="R1",
            agent="coder",
        ).__enter__()
        self.leases[dispatch.session.id] = dispatch.lease
        return dispatch.session

    def become(self, monkeypatch: pytest.MonkeyPatch, session_id: str | None) -> None:
        """Act as that session in this process (None: the person)."""
        if session_id is None:
            monkeypatch.delenv(sessions.SESSION_VAR, raising=False)
            monkeypatch.delenv(sessions.COORDINATOR_VAR, raising=False)
            return
        session = sessions.SessionStore(self.paths).get(session_id)
        for key, value in workers.spoke_env(self.paths, session).items():
            monkeypatch.setenv(key, value)

    def env(self, session_id: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")}
        if session_id is not None:
            env.update(
                workers.spoke_env(self.paths, sessions.SessionStore(self.paths).get(session_id))
            )
        else:
            env["MAESTRO_PROJECT_DIR"] = str(self.root)
        return env

    def maestro(
        self,
        session_id: str | None,
        *argv: str,
        timeout: float = 30,
        cwd: Path | None = None,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """`maestro ...` as a separate process, the way a spoke's shell runs it."""
        return subprocess.run(
            [sys.executable, "-m", "maestro", *argv],
            env=self.env(session_id),
            cwd=cwd or self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            check=False,
        )


@pytest.fixture
def office(project: Path):
    paths = ProjectPaths(project)
    lease = workers.start_run_session(paths, "R1", goal="ship it")
    office = Office(project, paths, workers.run_session_id("R1"), {"run-R1": lease})
    yield office
    for held in office.leases.values():
        held.release()

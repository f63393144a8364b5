"""The one way Maestro runs a spoke, whoever asks: a run's task attempt, a challenger, a
reviewer, `plan "goal"`.

Each dispatch is a session of the office (`maestro session list` shows every CLI Maestro
started, what it was asked, how it ended): ``Dispatch`` opens it (``working``, its lease
held so a Maestro killed meanwhile leaves it ``dead``), builds the request, waits for the
stagger, runs the spoke with its process recorded, and ends the session ``completed``,
``failed`` (also on an exception) or ``stopped``. ``log_row`` writes the row once the asker
has judged the answer. How the askers differ is data: whom the session answers to (a
run's task: its ``coordinator``; else the calling session or the person), the ``tier``, a
run's marks (``run_id``: in its spoke's environment and its session, which recovery
reads to stop a spoke a dead engine left), the ``stagger`` (a run's; none otherwise), and
``recorded`` (false: a dry run, which writes nothing, not even its session).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from maestro import clock, sandbox
from maestro.bus.door import Door
from maestro.bus.liveness import Lease
from maestro.bus.sessions import (
    COORDINATOR_VAR,
    SESSION_VAR,
    USER,
    Session,
    SessionStore,
    current_id,
    new_id,
)
from maestro.bus.workers import end_session, office_dirs, spoke_env
from maestro.config import Settings
from maestro.engine.rundir import recording
from maestro.engine.stagger import Stagger
from maestro.install.invocation import here
from maestro.logfile import ExecutionLog, LogRow
from maestro.paths import ProjectPaths
from maestro.process import run_process
from maestro.sandbox import Rules
from maestro.spokes.base import Spoke
from maestro.spokes.contract import DispatchRequest, SpokeResult
from maestro.spokes.registry import get_spoke

DEFAULT_TIMEOUT_S = 600.0


def timeout_s(settings: Settings) -> float:
    """A challenger's, reviewer's or planner's time: the agents' timeout, else 10 minutes."""
    minutes = settings.agent_timeout
    return float(minutes) * 60 if minutes else DEFAULT_TIMEOUT_S


class HeldBack(Exception):
    """The run began stopping while the spoke waited for the stagger (why: its args)."""


@dataclass
class Dispatch:
    """One spoke dispatch as a session of the office (see the module doc)."""

    paths: ProjectPaths
    env: Mapping[str, str]  # the asker's: the spoke's base environment, and who asks
    cli: str
    kind: str  # the session id's prefix: t3, challenge, review-t3, plan
    subject: str  # the session's directive: what the CLI is asked
    message: str
    tier: str = "read-only"
    task: str | None = None
    mode: str = "worker"
    coordinator: str | None = None
    run_id: str | None = None
    agent: str | None = None
    keep_session: bool = False  # a task's CLI session: a review may send findings back to it
    stagger: Stagger = field(default_factory=lambda: Stagger(0.0))
    stopping: Callable[[], str | None] = lambda: None
    recorded: bool = True
    # How the spoke is confined (a run's, from its start); ``ask`` takes the settings'.
    sandbox: Rules | None = None
    session: Session = field(init=False)  # made when the block starts (unless not recorded)
    outcome: tuple[str, str | None] = field(default=("completed", None), init=False)
    lease: Lease = field(init=False)

    def __enter__(self) -> Self:
        if not self.recorded:
            return self
        store = SessionStore(self.paths)
        asker = self.coordinator or current_id(self.env)
        parent = asker if store.exists(asker) else USER
        self.session = store.create(
            mode=self.mode,
            session_id=new_id(self.kind),
            tier=self.tier,
            coordinator=self.coordinator,
            parent=parent,
            run_id=self.run_id,
            task_ids=[self.task] if self.task else [],
            cli=self.cli,
            agent=self.agent,
            directive={"subject": self.subject, "message": self.message, "from": parent},
        )
        self.lease = store.lease(self.session.id)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if not self.recorded:
            return
        status, reason = self.outcome
        if error is not None:
            status, reason = "failed", str(error) or type(error).__name__
        end_session(self.paths, self.session.id, status, reason, lease=self.lease)

    def finish(self, status: str, reason: str | None = None) -> None:
        """How it ended, recorded at the block's end (``run`` sets it from the result)."""
        self.outcome = (status, reason)

    @property
    def extra_env(self) -> dict[str, str]:
        """What the spoke's environment gets: its session, and a run's marks."""
        if not self.recorded:
            return {}
        env = spoke_env(self.paths, self.session, path=self.env.get("PATH", os.defpath))
        if self.run_id is not None:
            env.update({"MAESTRO_RUN_ID": self.run_id, "MAESTRO_TASK_ID": self.task or ""})
        return env

    def request(self, **asked: Any) -> DispatchRequest:
        """The spoke's request: what it is ``asked`` (``DispatchRequest``'s fields), as
        this dispatch's session, tier and task."""
        return DispatchRequest(
            **asked,
            tier=self.tier,
            task_id=self.task,
            keep_session=self.keep_session,
            env_extra=self.extra_env,
            sandbox=self.sandbox,
            hidden_dirs=self.office_store(),
        )

    def office_store(self) -> list[Path]:
        """Confined, the office's store is not the spoke's to read: its door is. Made
        first, so a folder created during the dispatch is hidden too (a dry run writes
        nothing)."""
        return [] if self.sandbox is None else office_dirs(self.paths, create=self.recorded)

    def ask(self, settings: Settings, *, stream: Path | None = None, **asked: Any) -> SpokeResult:
        """A reader's dispatch (a challenger, a reviewer, a planner): the CLI as ``settings``
        has it, under the agents' timeout and turn limit; with ``stream``, streaming, each
        line it prints kept there as it comes."""
        limits = {"timeout_s": timeout_s(settings), "max_turns": settings.max_turns}
        self.sandbox = sandbox.rules(settings, self.env)
        request = self.request(**limits, stream=stream is not None, **asked)
        return self.run(get_spoke(self.cli, settings), request, stream=stream)

    def run(
        self, spoke: Spoke, request: DispatchRequest, *, stream: Path | None = None
    ) -> SpokeResult:
        """Wait for the stagger, then run the spoke while its process is recorded (and,
        with ``stream``, each line it prints appended there as it comes: what the board
        shows). Raises ``HeldBack`` when the run began stopping meanwhile: the spoke
        never started."""
        start = self.stagger.start(self.cli, stopping=self.stopping)
        if start is None:
            self.finish("stopped", self.stopping() or "stopped")
            raise HeldBack(self.outcome[1])
        try:
            with self.door(request) as door:
                result = spoke.dispatch(
                    replace(request, door=door.folder) if door else request,
                    runner=run_process if stream is None else recording(run_process, stream),
                    base_env=dict(self.env),
                    on_start=self.started,
                )
        finally:
            start.ended()
        if stream is not None and result.stdout and not stream.exists():
            # A spoke that answers in-process (the sim) runs no process for the runner to
            # record: what it printed is kept as a CLI's lines are, once it is done.
            stream.write_text(result.stdout, encoding="utf-8")
        failed = ("failed", result.error or "the CLI failed")
        self.finish(*(("completed", None) if result.success else failed))
        return result

    def door(self, request: DispatchRequest) -> contextlib.AbstractContextManager[Door | None]:
        """A confined spoke's door to the office (``bus.door``): what it says there, it
        says as this dispatch's session, whatever its environment claims."""
        if request.sandbox is None or not self.recorded:
            return contextlib.nullcontext()
        env = {k: v for k, v in self.env.items() if k not in (SESSION_VAR, COORDINATOR_VAR)}
        return Door(here(), {**env, **self.extra_env}, self.paths.root)

    def started(self, pid: int) -> None:
        """The spoke's process (not ours: the sim answers in-process) becomes the session's:
        what `maestro session stop` and a later run's recovery stop."""
        if pid == os.getpid() or not self.recorded:
            return
        SessionStore(self.paths).attach_process(self.session.id, pid)


def command_log(settings: Settings, goal: str | None = None) -> ExecutionLog:
    """The log of a command outside a run: a log with no session yet starts one for the
    plan's ``goal``."""
    log = ExecutionLog(settings.paths, settings.log)
    if log.enabled and goal is not None and not log.read().sessions:
        log.start_session(goal, hub=settings.hub)
    return log


UNCONFINED = " (ran unconfined: sandbox off)"


def ran_unconfined(result: SpokeResult | None) -> bool:
    """A CLI's process ran with the person's full rights (the sim runs none)."""
    return result is not None and not result.confined and not result.simulated


def refused(result: SpokeResult | None) -> str:
    """What Maestro's proxy refused the dispatch, for its row's notes."""
    return f" ({result.refused})" if result is not None and result.refused else ""


def log_row(
    log: ExecutionLog,
    *,
    action: str,
    target: str,
    tool: str | None,
    result: SpokeResult | None,
    ok: bool,
    notes: str,
    outcome: str = "",
    task: str | None = None,
    retry: bool = False,
) -> None:
    """One row, written when the dispatch has ended: the report places it from ``time -
    duration`` to ``time``. ``result`` None: no CLI answered; ``tool`` None: the row is no
    dispatch, not in the Totals."""
    log.append(
        LogRow(
            time=clock.iso(),
            actor="Hub",
            action=action,
            target=target,
            tokens=result.usage.total if result is not None else None,
            duration_s=result.duration_s if result is not None else None,
            outcome="✅" if ok else outcome,
            notes=notes + UNCONFINED if ran_unconfined(result) else notes + refused(result),
            tool=tool,
            failed=not ok,
            retry=retry,
            cost=result.cost if result is not None else None,
            cost_estimated=bool(result is not None and result.cost_estimated),
            task=task,
        )
    )

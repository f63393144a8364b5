"""The one way Maestro runs a spoke, whoever asks: a run's task attempt, a challenge, a
review, a plan asked of a CLI.

Every dispatch is a session of the office, so `maestro session list` shows each CLI
Maestro started, what it was asked and how it ended. ``Dispatch`` opens that session
(``working`` from the start, holding its liveness lease until the dispatch ends, so a
Maestro killed meanwhile leaves it ``dead``), builds the spoke's request, waits for the
stagger, runs the spoke, records its process while it runs, and ends the session
``completed``, ``failed`` or ``stopped`` (an exception out of the block fails it with the
error's message). ``log_row`` writes the dispatch's row once its asker has judged the
answer:

    with Dispatch(paths, env, cli="gemini", kind="challenge",
                  subject="Challenge the plan", message=goal) as dispatch:
        request = dispatch.request(spoke, prompt=prompt, system=SYSTEM, cwd=root, ...)
        result = dispatch.run(spoke, request)
    log_row(log, action="Challenge", target="challenge", tool="gemini", result=result, ...)

How the askers differ is data, not code:

- whom the session answers to: a run's task is a coordinated worker of the run (or of the
  task that spawned it: ``coordinator``); the others are workers of the calling session
  (``MAESTRO_SESSION_ID``), else of the person;
- ``tier``: challengers, reviewers and planners read; a task's agent has its own;
- a run's task (``run_id``) is marked as that run's in its spoke's environment, and its
  pid is kept in the run's folder while it runs, so a later run can stop a spoke that a
  dead engine left behind; a task's CLI session is kept (``keep_session``) for a review's
  findings;
- a run spreads the starts of one CLI's spokes (``stagger``); a dispatch on its own has
  nothing to wait for;
- a dry run (``recorded`` false) asks the CLI and records nothing, not even its session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from maestro import clock
from maestro.bus.liveness import Lease
from maestro.bus.sessions import USER, Session, SessionStore, current_id, new_id
from maestro.bus.workers import end_session, spoke_env
from maestro.config import Settings
from maestro.engine.stagger import Stagger
from maestro.logfile import ExecutionLog, LogRow
from maestro.paths import ProjectPaths
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
    session: Session = field(init=False)  # made when the block starts (unless not recorded)
    outcome: tuple[str, str | None] = field(default=("completed", None), init=False)
    _lease: Lease = field(init=False)

    @property
    def pid_file(self) -> Path | None:
        if self.run_id is None or not self.recorded:
            return None
        return self.paths.runs_dir / self.run_id / f"spoke-{self.task}.pid"

    def __enter__(self) -> Self:
        if not self.recorded:
            return self
        store = SessionStore(self.paths)
        caller = current_id(self.env)
        parent = self.coordinator or (caller if store.exists(caller) else USER)
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
        self._lease = store.lease(self.session.id)
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
        end_session(self.paths, self.session.id, status, reason, lease=self._lease)

    def finish(self, status: str, reason: str | None = None) -> None:
        """How the dispatch ended (completed, failed or stopped), recorded at the block's end.
        ``run`` sets it from the spoke's result; an asker that judges more says so after."""
        self.outcome = (status, reason)

    @property
    def extra_env(self) -> dict[str, str]:
        """What the spoke's environment gets: its session, and a run's marks."""
        if not self.recorded:
            return {}
        env = spoke_env(self.paths, self.session, path=self.env.get("PATH", os.defpath))
        if self.run_id is not None:  # what recovery checks before it stops a leftover
            env.update({"MAESTRO_RUN_ID": self.run_id, "MAESTRO_TASK_ID": self.task or ""})
        return env

    def request(
        self,
        spoke: Spoke,
        *,
        prompt: str,
        system: str,
        cwd: Path,
        title: str,
        timeout_s: float,
        max_turns: int | None,
        progress: Callable[[str], None] | None = None,
        model: str | None = None,
        web_search: bool = False,
        files: Sequence[Path] = (),
        criteria: Sequence[str] = (),
        abort_tokens: int | None = None,
        scratch_dir: Path | None = None,
        sim_delay_s: float | None = None,
        resume_session: str | None = None,
        shared_dirs: Sequence[Path] = (),
    ) -> DispatchRequest:
        """The spoke's request: what it is asked, and the session it runs as."""
        return DispatchRequest(
            prompt=prompt,
            system_prompt=system,
            model=model,
            max_turns=max_turns,
            tier=self.tier,
            web_search=web_search,
            cwd=cwd,
            timeout_s=timeout_s,
            resume_session=resume_session if spoke.supports_resume else None,
            keep_session=self.keep_session,
            task_id=self.task,
            files=list(files),
            abort_tokens=abort_tokens,
            env_extra=self.extra_env,
            shared_dirs=list(shared_dirs),
            title=title,
            criteria=list(criteria),
            scratch_dir=scratch_dir,
            sim_delay_s=sim_delay_s,
            progress=progress,
        )

    def ask(
        self,
        settings: Settings,
        *,
        prompt: str,
        system: str,
        cwd: Path,
        title: str,
        progress: Callable[[str], None] | None,
    ) -> SpokeResult:
        """A reader's dispatch (a challenger, a reviewer, a planner): the CLI as ``settings``
        has it, under the agents' timeout and turn limit."""
        spoke = get_spoke(self.cli, settings)
        request = self.request(
            spoke,
            prompt=prompt,
            system=system,
            cwd=cwd,
            title=title,
            timeout_s=timeout_s(settings),
            max_turns=settings.max_turns,
            progress=progress,
        )
        return self.run(spoke, request)

    def run(self, spoke: Spoke, request: DispatchRequest) -> SpokeResult:
        """Wait for the stagger, then run the spoke while its process is recorded. Raises
        ``HeldBack`` when the run began stopping meanwhile: the spoke never started."""
        start = self.stagger.start(self.cli, stopping=self.stopping)
        if start is None:
            self.finish("stopped", self.stopping() or "stopped")
            raise HeldBack(self.outcome[1])
        try:
            result = spoke.dispatch(request, base_env=dict(self.env), on_start=self.started)
        finally:
            start.ended()
            if self.pid_file is not None:
                self.pid_file.unlink(missing_ok=True)
        failed = ("failed", result.error or "the CLI failed")
        self.finish(*(("completed", None) if result.success else failed))
        return result

    def started(self, pid: int) -> None:
        """The spoke's process (not ours: the sim answers in-process) becomes the session's,
        and a run's record of it."""
        if pid == os.getpid() or not self.recorded:
            return
        if self.pid_file is not None:
            self.pid_file.write_text(f"{pid}\n", encoding="utf-8")
        SessionStore(self.paths).attach_process(self.session.id, pid)


def command_log(settings: Settings, goal: str | None = None) -> ExecutionLog:
    """The log of a command outside a run: a log with no session yet starts one for the
    plan's ``goal``."""
    log = ExecutionLog(settings.paths, settings.log)
    if log.enabled and goal is not None and not log.read().sessions:
        log.start_session(goal, hub=settings.hub)
    return log


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
    """One row (nothing at log level off), written when the dispatch has ended, so its
    time is the end: the report places it from ``time - duration`` to ``time``. ``result``
    None: no CLI answered; ``tool`` None: the row is no dispatch, not in the Totals.
    The outcome cell is ✅, or ``outcome`` when it failed."""
    log.append(
        LogRow(
            time=clock.iso(),
            actor="Hub",
            action=action,
            target=target,
            tokens=result.usage.total if result is not None else None,
            duration_s=result.duration_s if result is not None else None,
            outcome="✅" if ok else outcome,
            notes=notes,
            tool=tool,
            failed=not ok,
            retry=retry,
            cost=result.cost if result is not None else None,
            cost_estimated=bool(result is not None and result.cost_estimated),
            task=task,
        )
    )

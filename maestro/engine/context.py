"""The engine's typed seams: what a command hands the challenge and the review
(``CommandContext``: ``maestro.cli.context.Context`` is one), what a run is asked to do
(``RunOptions``), and what every task of one run shares (``RunContext``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from maestro.config import Settings
from maestro.paths import ProjectPaths

if TYPE_CHECKING:  # the engine's modules import this one: types only, no import cycle
    from maestro.agents.catalog import Catalog
    from maestro.engine.budgets import RunBudget
    from maestro.engine.receipts import Observer
    from maestro.engine.review.outcome import ReviewOutcome
    from maestro.engine.rundir import RunDir
    from maestro.logfile import ExecutionLog
    from maestro.spokes.base import Spoke
    from maestro.spokes.registry import Availability
    from maestro.state.store import PlanStore


class CommandContext(Protocol):
    env: dict[str, str]  # the caller's environment, for spokes and validation commands
    stdout: TextIO  # where an engine started for a revision prints
    json: bool  # --json: progress stays silent

    @property
    def settings(self) -> Settings: ...

    @property
    def paths(self) -> ProjectPaths: ...

    def interactive(self) -> bool: ...

    def confirm(self, question: str) -> bool: ...

    def emit(self, line: str) -> None:
        """Progress for people while the command works."""


@dataclass
class RunOptions:
    task_id: str | None = None
    tool: str | None = None  # force this CLI (reassign; `--tool sim`)
    agent: str | None = None  # force this agent (only with task_id)
    clarify: str | None = None  # the user's clarification (only with task_id)
    budget_tokens: int | None = None
    log: str | None = None  # off | summary | detailed, overrides the setting
    review: bool = False
    run_id: str | None = None
    # A reviewer's findings for TASK_ID's author, and the author's session to resume where
    # its CLI can (`maestro review` sends them; see maestro/engine/review).
    revision: str | None = None
    resume_session: str | None = None


class StartSpacing:
    """The stagger, kept at the moment a spoke's process starts.

    The scheduler spaces the tasks' launches by the stagger, but a task then does work of
    varying length (its checks, prompt, plan write, tree snapshot) before its spoke starts,
    so two spokes could start closer together than the stagger. Each task calls
    :meth:`wait` just before its spoke starts: it returns at least ``delay_s`` after the
    previous start it allowed."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self._lock = threading.Lock()
        self._last: float | None = None

    def wait(self) -> None:
        if self.delay_s <= 0:
            return
        with self._lock:
            now = time.monotonic()
            start = now if self._last is None else max(now, self._last + self.delay_s)
            self._last = start
        time.sleep(start - now)


@dataclass
class RunContext:
    """What every task of one run shares (the run engine builds it; each task's pipeline
    and its gates read it)."""

    paths: ProjectPaths
    settings: Settings
    store: PlanStore
    log: ExecutionLog
    run: RunDir
    emit: Callable[..., dict[str, Any]]  # emit(kind, **data) -> the event written
    observer: Observer
    budget: RunBudget
    catalog: Catalog
    installed: dict[str, Availability]
    options: RunOptions
    spoke_for: Callable[[str], Spoke]
    hub: str | None
    env: dict[str, str]
    backoff_s: float
    stopping: Callable[[], str | None] = lambda: None
    # review(task_id, revise=TaskRunner.revise): `maestro run --review`'s hook.
    review: Callable[..., ReviewOutcome] | None = None
    sim_delay_s: float | None = None
    spacing: StartSpacing = field(default_factory=lambda: StartSpacing(0.0))

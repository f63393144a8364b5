"""The engine's typed seams: what a command hands the challenge and the review
(``CommandContext``: ``maestro.cli.context.Context`` is one), what a run is asked to do
(``RunOptions``), and what every task of one run shares (``RunContext``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from maestro.config import Settings
from maestro.engine.stagger import Stagger
from maestro.paths import ProjectPaths

if TYPE_CHECKING:  # the engine's modules import this one: types only, no import cycle
    from maestro.agents.catalog import Catalog
    from maestro.engine.budgets import RunBudget
    from maestro.engine.receipts import Observer
    from maestro.engine.rundir import RunDir
    from maestro.engine.workspace import Workspaces
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
    in_place: bool = False  # --in-place: spokes work in the shared working tree
    keep_worktrees: bool = False  # --keep-worktrees
    commit: bool = False  # --commit: each landed task is committed on the current branch


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
    # review(task_id, revise=TaskRunner.revise): `maestro run --review`'s hook (the run
    # reads the review's outcome from the plan, so its return value is not used here).
    review: Callable[..., object] | None = None
    sim_delay_s: float | None = None
    stagger: Stagger = field(default_factory=lambda: Stagger(0.0))
    # A worktree per dispatch (a git repository, not --in-place); None: the shared tree.
    workspaces: Workspaces | None = None
    # Tasks done whose change could not be applied to the user's tree: (id, what to do).
    unlanded: list[tuple[str, str]] = field(default_factory=list)
    # Tasks done whose --commit was refused (their files landed, unstaged): (id, why).
    uncommitted: list[tuple[str, str]] = field(default_factory=list)

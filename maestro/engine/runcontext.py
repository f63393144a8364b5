"""The engine's typed seams: what a command hands the challenge and the review
(``CommandContext``: ``maestro.cli.context.Context`` is one), what a run is asked to do
(``RunOptions``), where its dispatches work (``Workspaces``, ``Workspace``) and what every
task of one run shares (``RunContext``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from maestro.config import Settings
from maestro.engine.stagger import Stagger
from maestro.paths import ProjectPaths
from maestro.sandbox import Rules

if TYPE_CHECKING:  # the engine's modules import this one: types only, no import cycle
    from maestro.agents.catalog import Catalog
    from maestro.engine.caps import RunBudget
    from maestro.engine.guard import Found
    from maestro.engine.landing import Landing
    from maestro.engine.rundir import RunDir
    from maestro.engine.worktree import Measured, Scope
    from maestro.logfile import ExecutionLog
    from maestro.prompts.results import ParsedResult
    from maestro.spokes.base import Spoke
    from maestro.spokes.registry import Availability
    from maestro.state.model import Receipt, Task
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
    budget_usd: float | None = None
    log: str | None = None  # off | summary | detailed, overrides the setting
    review: bool = False
    run_id: str | None = None
    # A reviewer's findings for TASK_ID's author, and the author's session to resume where
    # its CLI can (`maestro review` sends them; see maestro/review).
    revision: str | None = None
    resume_session: str | None = None
    in_place: bool = False  # --in-place: spokes work in the shared working tree
    keep_worktrees: bool = False  # --keep-worktrees
    commit: bool = False  # --commit: each landed task is committed on the current branch
    pr: bool = False  # --pr: the run's work on a branch of its own, delivered as a pull request


class Workspace(Protocol):
    """Where one dispatch works: its own git worktree (``workspace.TaskWorktree``), or the
    shared working tree, its changes attributed by an observer (``receipts.InPlace``)."""

    root: Path  # where its spoke works
    measured: Measured | None  # its exact change, once read (a worktree's)
    landing: Landing | None  # how its accepted change reached the user's tree (a worktree's)

    @property
    def check_root(self) -> Path: ...  # where its validation command runs
    def spoke(self) -> AbstractContextManager[object]: ...  # around the spoke (and its stagger)
    def changes(self, parsed: ParsedResult) -> Scope: ...  # what the spoke changed
    # Around its validation command: what it changed outside, put back and named.
    def validation(self) -> AbstractContextManager[Found]: ...
    def finish(self, accepted: bool) -> None: ...  # its change measured, landed if accepted
    # What the task changed so far (None: nothing was measured).
    def receipt(self, validation: str | None, validation_exit: int | None) -> Receipt | None: ...
    # Removed; or kept with ``keep`` (a failed attempt) if --keep-worktrees asks: where.
    def close(self, keep: bool) -> Path | None: ...


class Workspaces(Protocol):
    """Where one run's dispatches work (``workspace.Worktrees``: a worktree each;
    ``receipts.Observer``: the shared tree)."""

    @property
    def unattributed(self) -> Collection[str]: ...  # changed while no task ran
    @property
    def measures(self) -> bool: ...  # whether a dispatch's changes can be measured (git)
    def open(self, task: Task) -> Workspace: ...  # one dispatch's, for ``task``
    # Refused before any dispatch: work the workspace would lose.
    def refuse_submodule_work(self, tasks: Sequence[Task]) -> None: ...
    def release(self, change: str) -> None: ...  # a change commit no receipt names any more
    def closing_note(self) -> str: ...  # what the run says of it at its end ("": nothing)
    def close(self) -> None: ...


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
    workspaces: Workspaces  # a worktree per dispatch, or the shared tree
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
    # How its spokes and validation commands are confined; None: unconfined (opted out).
    sandbox: Rules | None = None
    # Tasks done whose change could not be applied to the user's tree: (id, what to do).
    unlanded: list[tuple[str, str]] = field(default_factory=list)
    # Tasks done whose --commit was refused (their files landed, unstaged): (id, why).
    uncommitted: list[tuple[str, str]] = field(default_factory=list)

"""The figures of a report, from the plan and the execution log.

The plan is always there and holds each task's totals (tokens, cost, attempts, start and
finish, review state), the challenges and the reviews. The log, when logging was on, adds
one row per dispatch: the per-CLI table, the timeline bars and the budget checks are
built from it; without it they fall back to the plan's fields and the report says so.
Log rows are written when a dispatch ends, so a row's time is its end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from maestro import clock, graph
from maestro.engine.budgets import Limits, limits_for
from maestro.logfile import LogRow, ParsedLog
from maestro.state.model import Challenge, Plan, Review, Task, Usage


@dataclass
class Dispatch:
    """A log row that is one dispatch of a CLI, placed in time."""

    session: int
    end: datetime | None
    row: LogRow

    @property
    def tool(self) -> str:
        """The CLI dispatched (only a row that names one becomes a Dispatch)."""
        return self.row.tool or ""

    @property
    def start(self) -> datetime | None:
        if self.end is None:
            return None
        return self.end - timedelta(seconds=self.row.duration_s or 0)


@dataclass
class Money:
    cost: float = 0.0
    known: bool = False  # any cost at all
    estimated: bool = False  # some part of it is Maestro's estimate
    missing: bool = False  # some dispatch had no cost at all

    def add(self, cost: float | None, estimated: bool) -> None:
        if cost is None:
            self.missing = True
            return
        self.cost += cost
        self.known = True
        self.estimated = self.estimated or estimated


@dataclass
class TaskFigures:
    task: Task
    usage: Usage
    money: Money
    review_tokens: int = 0
    started: datetime | None = None
    finished: datetime | None = None
    waited_s: float | None = None  # from the run's start until its last dependency finished
    queued_s: float | None = None  # ready, but not started yet (concurrency, stagger)

    @property
    def duration_s(self) -> float | None:
        if self.started and self.finished:
            return max(0.0, (self.finished - self.started).total_seconds())
        return None


@dataclass
class CliFigures:
    tool: str
    dispatches: int = 0
    tokens: int = 0
    failures: int = 0
    retries: int = 0
    money: Money = field(default_factory=Money)


@dataclass
class BudgetCheck:
    what: str  # "Task 2 dispatch", "review of Task 2", "challenge"
    tool: str
    tokens: int
    limits: Limits
    level: str  # ok | over | yellow | red
    average: bool = False  # from plan totals divided by attempts (no log)


@dataclass
class Timing:
    start: datetime | None = None
    end: datetime | None = None
    busy_s: float = 0.0
    task_span_s: float = 0.0  # first task start to last task finish
    critical_s: float = 0.0
    critical_path: list[str] = field(default_factory=list)

    @property
    def wall_s(self) -> float | None:
        if self.start and self.end:
            return max(0.0, (self.end - self.start).total_seconds())
        return None


def _when(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return clock.parse_iso(text)
    except ValueError:
        return None


def place_rows(log: ParsedLog | None) -> list[Dispatch]:
    """Every row with a tool, with its end time: the session's date plus the row's
    HH:MM:SS, moving to the next day when the clock wraps past midnight."""
    placed: list[Dispatch] = []
    for number, session in enumerate(log.sessions if log else []):
        try:
            day = datetime.strptime(session.stamp, "%Y-%m-%d %H:%M UTC").replace(tzinfo=UTC)
        except ValueError:
            day = None
        last = day
        for row in session.rows:
            end = None
            if last is not None:
                try:
                    moment = datetime.strptime(row.time, "%H:%M:%S").time()
                except ValueError:
                    moment = None
                if moment is not None:
                    end = datetime.combine(last.date(), moment, tzinfo=UTC)
                    if end < last - timedelta(hours=1):
                        end += timedelta(days=1)
                    last = end
            if row.tool:
                placed.append(Dispatch(number, end, row))
    return placed


def task_figures(plan: Plan) -> list[TaskFigures]:
    """Per task: its usage and money, the tokens its reviews took, when it ran, and how
    long it waited."""
    figures = []
    review_tokens: dict[str, int] = {}
    for review in plan.reviews:
        review_tokens[review.task] = review_tokens.get(review.task, 0) + review.usage.total
    for task in plan.tasks:
        money = Money()
        if task.attempts or not task.usage.is_zero():
            money.add(task.cost, task.cost_estimated)
        figures.append(
            TaskFigures(
                task,
                task.usage,
                money,
                review_tokens.get(task.id, 0),
                _when(task.started),
                _when(task.finished),
            )
        )
    _waits(figures, {t.id for t in plan.tasks})
    return figures


def _waits(figures: list[TaskFigures], ids: set[str]) -> None:
    """Each started task's wait for its dependencies (``waited_s``) and then for a free
    slot (``queued_s``), measured within the task's own run: a resumed run starts a new
    clock."""
    run_start: dict[str | None, datetime] = {}
    for fig in figures:
        if fig.started:
            key = fig.task.run_id
            run_start[key] = min(run_start.get(key, fig.started), fig.started)
    finished = {f.task.id: f.finished for f in figures}
    for fig in figures:
        if not fig.started:
            continue
        begin = run_start[fig.task.run_id]
        deps = [finished.get(d) for d in fig.task.depends if d in ids]
        ready = begin
        if deps and all(d is not None for d in deps):
            ready = max(begin, max(d for d in deps if d is not None))
            fig.waited_s = (ready - begin).total_seconds()
        elif not deps:
            fig.waited_s = 0.0
        fig.queued_s = max(0.0, (fig.started - ready).total_seconds())


def cli_figures(plan: Plan, dispatches: list[Dispatch]) -> list[CliFigures]:
    """Per CLI: from the log's rows when there are any, else from the plan's records."""
    by_tool: dict[str, CliFigures] = {}

    def entry(tool: str) -> CliFigures:
        return by_tool.setdefault(tool, CliFigures(tool))

    if dispatches:
        for item in dispatches:
            row = item.row
            cli = entry(item.tool)
            cli.dispatches += 1
            cli.tokens += row.tokens or 0
            cli.failures += int(row.failed)
            cli.retries += int(row.retry)
            cli.money.add(row.cost, row.cost_estimated)
        return list(by_tool.values())
    for task in plan.tasks:
        if task.tool and task.attempts:
            cli = entry(task.tool)
            cli.dispatches += task.attempts
            cli.tokens += task.usage.total
            cli.retries += max(0, task.attempts - 1)
            cli.failures += int(task.status in ("failed", "blocked"))
            cli.money.add(task.cost, task.cost_estimated)
    records: list[tuple[str, Review | Challenge]] = [(r.reviewer, r) for r in plan.reviews]
    records += [(c.challenger, c) for c in plan.challenges]
    for tool, record in records:
        cli = entry(tool)
        cli.dispatches += 1
        cli.tokens += record.usage.total
        cli.money.add(record.cost, record.cost_estimated)
    return list(by_tool.values())


def total_money(plan: Plan) -> tuple[Usage, Money]:
    usage = Usage()
    money = Money()
    for task in plan.tasks:
        usage = usage + task.usage
        if task.attempts or not task.usage.is_zero():
            money.add(task.cost, task.cost_estimated)
    records: list[Review | Challenge] = [*plan.reviews, *plan.challenges]
    for record in records:
        usage = usage + record.usage
        money.add(record.cost, record.cost_estimated)
    return usage, money


def _what(row: LogRow) -> str:
    action = row.action.lower()
    if action == "challenge":
        return "challenge"
    if action == "review":
        return f"review of Task {row.task}" if row.task else "review"
    return f"Task {row.task} {action}" if row.task else row.action


def budget_checks(
    plan: Plan, dispatches: list[Dispatch], budgets: Mapping[str, Any]
) -> list[BudgetCheck]:
    checks = []
    if dispatches:
        for item in dispatches:
            row = item.row
            if row.tokens is None:
                continue
            limits = limits_for(item.tool, budgets)
            checks.append(
                BudgetCheck(_what(row), item.tool, row.tokens, limits, limits.level(row.tokens))
            )
        return checks
    for task in plan.tasks:
        if task.tool and task.attempts and not task.usage.is_zero():
            limits = limits_for(task.tool, budgets)
            tokens = task.usage.total // max(1, task.attempts)
            checks.append(
                BudgetCheck(
                    f"Task {task.id}",
                    task.tool,
                    tokens,
                    limits,
                    limits.level(tokens),
                    average=task.attempts > 1,
                )
            )
    return checks


def timing(plan: Plan, figures: list[TaskFigures], dispatches: list[Dispatch]) -> Timing:
    """When the work began and ended, the time tasks were busy, and the critical path."""

    result = Timing(*_bounds(figures, dispatches))
    durations = {f.task.id: f.duration_s for f in figures if f.duration_s is not None}
    result.busy_s = sum(durations.values())
    spans = [(f.started, f.finished) for f in figures if f.started and f.finished]
    if spans:
        result.task_span_s = (
            max(end for _, end in spans) - min(start for start, _ in spans)
        ).total_seconds()
    if durations:
        result.critical_s, result.critical_path = graph.critical_path(plan.tasks, durations)
    return result


def _bounds(
    figures: list[TaskFigures], dispatches: list[Dispatch]
) -> tuple[datetime | None, datetime | None]:
    """The first start and the last end among the tasks and the dispatches."""
    starts = [f.started for f in figures if f.started] + [d.start for d in dispatches if d.start]
    ends = [f.finished or f.started for f in figures if f.started] + [
        d.end for d in dispatches if d.end
    ]
    return (min(starts) if starts else None, max(ends) if ends else None)

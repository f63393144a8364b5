"""Budget caps: what a run, a task or the project's day may spend, in dollars or tokens.

A cap comes from ``maestro run --budget-usd N`` / ``--budget-tokens N`` (a run's) or the
settings ``budget_{usd,tokens}_{run,task,day}``. Every dispatch's spend is added as its
result comes in (``RunBudget.add``): Claude Code's own ``total_cost_usd`` as it says, the
other CLIs' tokens times the price table (estimated, shown with ``~``), and a model the
table lacks named, its dollars unknown. The checks:

- at 80% of a cap the hub and the person are asked (a ``decision`` event and a need): raise
  it, go on, or stop; the run goes on meanwhile;
- at 100% no new dispatch starts (the check is made before each one, so what can overshoot
  a cap is what the dispatches already running spend); running spokes finish, or with
  ``budget_hard`` are stopped at once and their tasks go back to pending; the run pauses
  with one line naming the cap and how to raise it, and `maestro run` continues;
- a dollar cap over a dispatch whose model has no price cannot be kept: it pauses the run
  the same way, naming the model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from maestro.engine import spend
from maestro.engine.rundir import latest_run
from maestro.engine.spend import Spent, Tally
from maestro.errors import MaestroError
from maestro.spokes.pricing import table_name

NEAR = 0.8
REACHED = "budget reached:"  # in the line that pauses a run at a cap
UNKEPT = "budget cannot be kept:"  # or this one, when a model has no price
SCOPES = ("run", "task", "day")
UNITS = ("usd", "tokens")


@dataclass(frozen=True)
class Cap:
    scope: str  # run | task | day
    unit: str  # usd | tokens
    limit: float
    raise_hint: str  # how to raise it, as the person does

    @property
    def key(self) -> str:
        return f"budget_{self.unit}_{self.scope}"

    def label(self, task: str | None = None) -> str:
        """'run dollar', 'day token', 'Task 3 dollar'."""
        who = f"Task {task}" if self.scope == "task" else self.scope
        return f"{who} {'dollar' if self.unit == 'usd' else 'token'}"

    def shown(self, amount: float, estimated: bool = False) -> str:
        if self.unit == "usd":
            return f"{'~' if estimated else ''}${amount:,.2f}"
        return f"{int(amount):,} tokens"

    def to_dict(self, tally: Tally) -> dict[str, Any]:
        spent = tally.amount(self.unit)
        return {
            "scope": self.scope,
            "unit": self.unit,
            "limit": self.limit,
            "spent": spent,
            "share": round(spent / self.limit, 4) if self.limit else None,
            "estimated": tally.estimated and self.unit == "usd",
            "raise": self.raise_hint,
        }


def pauses(line: str) -> bool:
    """Is ``line`` a cap's pause (not an abort)?"""
    return REACHED in line or UNKEPT in line


def caps_of(settings: Any, budget_usd: float | None, budget_tokens: int | None) -> list[Cap]:
    """The caps in force: the command line's for the run, then the settings'."""
    caps = []
    given = {"usd": (budget_usd, "--budget-usd"), "tokens": (budget_tokens, "--budget-tokens")}
    for unit in UNITS:
        for scope in SCOPES:
            key = f"budget_{unit}_{scope}"
            value, flag = given[unit] if scope == "run" else (None, "")
            if value is not None:
                hint = f"run `maestro run {flag} N` with a higher N"
            else:
                value = getattr(settings, key, None)
                if value is None:
                    continue
                source = settings.source(key)
                where = (
                    f"MAESTRO_{key.upper()} in your environment"
                    if source == "environment"
                    else f"{key} in {source}"
                )
                hint = f"raise {where}, then run `maestro run`"
            caps.append(Cap(scope, unit, float(value), hint))
    return caps


class RunBudget:
    """What the run spends against its caps (none: nothing is ever refused). ``day`` is
    what the project's other runs spent today, ``tasks`` what each task spent before."""

    def __init__(
        self,
        caps: list[Cap],
        *,
        day: Spent | None = None,
        tasks: dict[str, Tally] | None = None,
        on_near: Callable[[Cap, str], None] = lambda cap, line: None,
        on_reached: Callable[[Cap, str], None] = lambda cap, line: None,
    ) -> None:
        self.caps = caps
        self.run = Spent()
        self.day = day or Spent()
        self.before = tasks or {}
        self.on_near, self.on_reached = on_near, on_reached
        # The line that stopped running spokes at once (``budget_hard``): their tasks go
        # back to pending rather than blocked.
        self.halted: str | None = None
        self._told: set[tuple[str, str, str]] = set()  # (cap key, task, level) said once
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        """Tokens the run used."""
        return self.run.total.tokens

    def add(self, event: dict[str, Any]) -> None:
        """One dispatch's ``spend`` event; a cap it brings to 80% or 100% is said."""
        with self._lock:
            self.run.add(event)
            self.day.add(event)
            task = str(event.get("task"))
            said = []
            for cap in self.caps:
                tally = self._tally(cap, task)
                level = self._level(cap, tally)
                if level and (cap.key, task, level) not in self._told:
                    self._told.add((cap.key, task, level))
                    said.append((cap, level, self._line(cap, tally, task, level)))
        for cap, level, line in said:
            (self.on_reached if level == "reached" else self.on_near)(cap, line)

    def refusal(self, task: str | None = None) -> str | None:
        """The line refusing the next dispatch (of ``task``), or None when it may start."""
        with self._lock:
            for cap in self.caps:
                if cap.scope == "task" and task is None:
                    continue
                tally = self._tally(cap, task or "")
                if cap.unit == "usd" and tally.unpriced:
                    return self._line(cap, tally, task, "unpriced")
                if self._level(cap, tally) == "reached":
                    return self._line(cap, tally, task, "reached")
        return None

    def report(self) -> list[dict[str, Any]]:
        """Each cap against what it counts."""
        with self._lock:
            ids = set(self.run.tasks) | set(self.before)
            tasks = {t: Tally().plus(self.before.get(t)).plus(self.run.tasks.get(t)) for t in ids}
            return cap_rows(self.caps, self.run.total, self.day.total, tasks)

    def _tally(self, cap: Cap, task: str) -> Tally:
        if cap.scope == "run":
            return self.run.total
        if cap.scope == "day":
            return self.day.total
        return Tally().plus(self.before.get(task)).plus(self.run.tasks.get(task))

    @staticmethod
    def _level(cap: Cap, tally: Tally) -> str | None:
        spent = tally.amount(cap.unit)
        if spent >= cap.limit:
            return "reached"
        return "near" if spent >= NEAR * cap.limit else None

    @staticmethod
    def _line(cap: Cap, tally: Tally, task: str | None, level: str) -> str:
        label = cap.label(task)
        spent = cap.shown(tally.amount(cap.unit), tally.estimated).removesuffix(" tokens")
        limit = cap.shown(cap.limit)
        if level == "unpriced":
            models = ", ".join(sorted(tally.unpriced))
            return (
                f"{label} {UNKEPT} {models} has no price in {table_name()} ({spent} of "
                f"{limit} known); remaining tasks stay pending. "
                f'Add [prices."<model>"] input/output to .ai/maestro.toml, or cap in tokens, '
                "then run `maestro run` to continue."
            )
        if level == "near":
            share = round(100 * tally.amount(cap.unit) / cap.limit)
            return (
                f"{label} budget at {share}%: {spent} of {limit} used. The run goes on and "
                f"pauses at 100%. To raise it: {cap.raise_hint}; to stop now: `maestro run --abort`."
            )
        return (
            f"{label} {REACHED} {spent} of {limit} used; remaining tasks stay pending. "
            f"To continue: {cap.raise_hint}."
        )


def cap_rows(
    caps: list[Cap], run: Tally, day: Tally, tasks: dict[str, Tally]
) -> list[dict[str, Any]]:
    """Each cap against what it counts (a task cap: the task that spent most of it)."""
    rows = []
    for cap in caps:
        task = None
        tally = run if cap.scope == "run" else day
        if cap.scope == "task":
            task = max(tasks, key=lambda t: tasks[t].amount(cap.unit), default=None)
            tally = tasks[task] if task is not None else Tally()
        rows.append({**cap.to_dict(tally), "task": task})
    return rows


def cap_line(row: dict[str, Any]) -> str:
    """'run dollar cap: ~$0.80 of $1.00 (80%)' for status and the report."""
    cap = Cap(row["scope"], row["unit"], row["limit"], row["raise"])
    share = row.get("share")
    state = "" if share is None else f" ({round(100 * share)}%"
    state += ", reached)" if share is not None and share >= 1 else ")" if state else ""
    spent = cap.shown(row["spent"], row.get("estimated", False)).removesuffix(" tokens")
    return f"{cap.label(row.get('task'))} cap: {spent} of {cap.shown(cap.limit)}{state}"


def standing(settings: Any, tasks: dict[str, Tally]) -> dict[str, Any] | None:
    """What the latest run spent, by vendor and by task, and each cap in force against
    it (``tasks``: what each task spent, from the plan); None before any run. Dollars
    beside caps in tokens only are shown "at API prices": a subscription pays none."""
    try:
        run = latest_run(settings.paths)
        options = run.read_meta().get("options") or {}
    except MaestroError:
        return None
    caps = caps_of(settings, options.get("budget_usd"), options.get("budget_tokens"))
    spent = spend.of_run(run)
    day = spend.of_day(settings.paths) if any(c.scope == "day" for c in caps) else None
    rows = cap_rows(caps, spent.total, day.total if day else Tally(), tasks)
    api = bool(caps) and all(c.unit == "tokens" for c in caps)
    return {
        "run": run.run_id,
        **spent.to_dict(),
        "day": day.total.to_dict() if day else None,
        "caps": rows,
        "at_api_prices": api,
        "lines": _lines(run.run_id, spent, rows, api) if spent.vendors or rows else [],
    }


def _lines(run: str, spent: Spent, rows: list[dict[str, Any]], api: bool) -> list[str]:
    """What status and the board say of it: spend by vendor, then each cap."""
    vendors = ", ".join(
        f"{name} {tally.tokens:,} tokens, {tally.money(api)}"
        for name, tally in spent.vendors.items()
    )
    lines = [f"Spent by run {run}: {vendors or 'nothing yet'}"]
    if rows:
        lines.append("Caps: " + "; ".join(cap_line(row) for row in rows))
    return lines

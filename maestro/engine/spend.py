"""What runs spent, read back from their events: each dispatch writes one ``spend`` event
(task, CLI, model, tokens, dollars, whether Maestro estimated them, a model the price
table lacks). The run's budget (engine/caps.py) adds them up as they come; `maestro
status`, the board and the report read them here, by task and by vendor, and the day cap
reads the runs of today.

Light on purpose: `maestro status` imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from maestro import clock
from maestro.engine.rundir import RUN_ID, RunDir, read_events
from maestro.formatting import money_text
from maestro.paths import ProjectPaths
from maestro.state.model import Task


@dataclass
class Tally:
    tokens: int = 0
    cost: float = 0.0  # the dollars known (reported or estimated)
    estimated: bool = False  # some of them are Maestro's estimate
    unpriced: set[str] = field(default_factory=set)  # models whose dollars are unknown

    def add(self, event: dict[str, Any]) -> None:
        self.tokens += int(event.get("tokens") or 0)
        self.cost = round(self.cost + float(event.get("cost") or 0), 6)
        self.estimated = self.estimated or bool(event.get("cost_estimated"))
        if event.get("unpriced"):
            self.unpriced.add(str(event["unpriced"]))

    def plus(self, other: Tally | None) -> Tally:
        if other is None:
            return self
        return Tally(
            self.tokens + other.tokens,
            round(self.cost + other.cost, 6),
            self.estimated or other.estimated,
            self.unpriced | other.unpriced,
        )

    def amount(self, unit: str) -> float:
        return self.cost if unit == "usd" else self.tokens

    def money(self, at_api_prices: bool = False) -> str:
        """``~$1.20`` (estimated); ``$1.20 + unknown (gpt-9 unpriced)`` when a model's
        dollars are unknown; "at API prices" when a subscription pays none of them."""
        text = money_text(self.cost, self.estimated, places=2)
        if self.unpriced:
            text += f" + unknown ({', '.join(sorted(self.unpriced))} unpriced)"
        return text + (" at API prices" if at_api_prices else "")

    @classmethod
    def of(cls, data: dict[str, Any]) -> Tally:
        """A tally back from ``to_dict``."""
        return cls(
            int(data.get("tokens") or 0),
            float(data.get("cost") or 0),
            bool(data.get("cost_estimated")),
            set(data.get("unpriced") or ()),
        )

    @classmethod
    def of_task(cls, task: Task) -> Tally:
        """What a task spent over its attempts, from the plan."""
        return cls(task.usage.total, task.cost or 0.0, task.cost_estimated)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "cost": self.cost,
            "cost_estimated": self.estimated,
            "unpriced": sorted(self.unpriced),
        }


@dataclass
class Spent:
    """One run's spend, or a day's: the total, by task, by vendor (CLI)."""

    total: Tally = field(default_factory=Tally)
    tasks: dict[str, Tally] = field(default_factory=dict)
    vendors: dict[str, Tally] = field(default_factory=dict)

    def add(self, event: dict[str, Any]) -> None:
        self.total.add(event)
        self.tasks.setdefault(str(event.get("task")), Tally()).add(event)
        self.vendors.setdefault(str(event.get("tool")), Tally()).add(event)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total.to_dict(),
            "tasks": {k: v.to_dict() for k, v in self.tasks.items()},
            "vendors": {k: v.to_dict() for k, v in self.vendors.items()},
        }


def local_midnight(now: datetime | None = None) -> datetime:
    """The start of today, local time (the day cap's day)."""
    local = (now or clock.utc_now()).astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def of_run(run: RunDir, since: datetime | None = None, into: Spent | None = None) -> Spent:
    """The spend events of ``run`` (those at or after ``since``), added to ``into``."""
    spent = Spent() if into is None else into
    events, _ = read_events(run.events_path) if run.events_path.exists() else ([], 0)
    for event in events:
        if event.get("kind") != "spend":
            continue
        if since is not None and clock.parse_iso(str(event.get("time"))) < since:
            continue
        spent.add(event)
    return spent


def of_day(paths: ProjectPaths, skip: str | None = None) -> Spent:
    """What every run of the project spent since local midnight (but run ``skip``): only
    the runs whose events changed today are read."""
    since = local_midnight()
    day = Spent()
    folder = paths.runs_dir
    if not folder.is_dir():
        return day
    for path in sorted(folder.iterdir()):
        events = path / "events.jsonl"
        if path.name == skip or not RUN_ID.fullmatch(path.name) or not events.is_file():
            continue
        if datetime.fromtimestamp(events.stat().st_mtime).astimezone() < since:
            continue
        of_run(RunDir(paths, path.name), since, into=day)
    return day

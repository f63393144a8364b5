"""Which diagrams a report draws, at a size Mermaid still draws.

Mermaid refuses a flowchart with 500 edges or more and any diagram text over 50,000
characters, and a viewer (GitHub) cannot raise those limits. So each diagram is drawn at
the finest grain that fits: the dependency graph task by task, else one node per group
of waves; the timeline one bar per dispatch, else per task, else per group of waves. The
report says when it drew a coarser one.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from maestro import clock, graph
from maestro.report import story
from maestro.report.collect import Dispatch, TaskFigures
from maestro.report.mermaid import Bar, chain_flowchart, fits, flowchart, gantt
from maestro.state.model import STATUSES, Task

MAX_GROUPS = 200
# The status a group of tasks shows: its most urgent member's.
URGENCY = ("failed", "blocked", "running", "pending", "done")


def wave_groups(tasks: list[Task]) -> list[tuple[int, int, list[Task]]]:
    """(first wave, last wave, tasks) for consecutive waves, at most ``MAX_GROUPS`` groups."""
    by_id = {t.id: t for t in tasks}
    waves = graph.waves(tasks)
    size = -(-len(waves) // MAX_GROUPS) if waves else 1  # ceiling division
    groups = []
    for start in range(0, len(waves), size):
        chunk = waves[start : start + size]
        groups.append((start + 1, start + len(chunk), [by_id[i] for wave in chunk for i in wave]))
    return groups


def _group_label(first: int, last: int, members: list[Task]) -> tuple[str, str]:
    counts = Counter(t.status for t in members)
    state = next((s for s in URGENCY if counts.get(s)), "pending")
    spread = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))
    waves = f"Wave {first}" if first == last else f"Waves {first}-{last}"
    return f"{waves}: {len(members)} tasks ({spread})", state


def dependency_graph(tasks: list[Task]) -> tuple[str, str | None]:
    """(flowchart, note): task by task when it fits, else one node per group of waves."""
    full = flowchart(tasks)
    if fits(full):
        return full, None
    groups = [_group_label(first, last, members) for first, last, members in wave_groups(tasks)]
    edges = sum(len(t.depends) for t in tasks)
    note = (
        f"The plan has {len(tasks)} tasks and {edges} dependencies, more than Mermaid draws: one node per "
        "group of waves (tasks that can run together), colored by its most urgent status."
    )
    return chain_flowchart(groups), note


def dispatch_bars(dispatches: list[Dispatch]) -> list[Bar]:
    bars = []
    for item in dispatches:
        if item.end is None or item.start is None:
            continue
        row = item.row
        section = f"Task {row.task}" if row.task else row.action
        retry = " (retry)" if row.retry and not row.action.lower().startswith("retry") else ""
        label = f"{story.tool_name(row.tool)} {row.action.lower()}{retry}"
        bars.append(Bar(section, label, item.start, item.end, "crit" if row.failed else "done"))
    return bars


def _tag(statuses: list[str]) -> str:
    if any(s in ("failed", "blocked") for s in statuses):
        return "crit"
    return "active" if "running" in statuses else "done"


def task_bars(figures: list[TaskFigures], now: datetime) -> list[Bar]:
    bars = []
    for fig in figures:
        if fig.started is None:
            continue
        task = fig.task
        label = f"{story.tool_name(task.tool)}, {task.attempts or 1} attempt(s)"
        bars.append(
            Bar(f"Task {task.id}", label, fig.started, fig.finished or now, _tag([task.status]))
        )
    return bars


def wave_bars(tasks: list[Task], figures: list[TaskFigures], now: datetime) -> list[Bar]:
    by_id = {f.task.id: f for f in figures}
    bars = []
    for first, last, members in wave_groups(tasks):
        started = [by_id[t.id] for t in members if by_id[t.id].started]
        if not started:
            continue
        begin = min(f.started for f in started if f.started)
        end = max(f.finished or now for f in started)
        label = _group_label(first, last, members)[0].split(":")[0] + f", {len(members)} tasks"
        bars.append(Bar("Waves", label, begin, end, _tag([t.status for t in members])))
    return bars


def _ordered(bars: list[Bar]) -> list[Bar]:
    """Sections in order of their first bar; bars in time order within a section."""
    first: dict[str, datetime] = {}
    for bar in bars:
        first[bar.section] = min(first.get(bar.section, bar.start), bar.start)
    return sorted(bars, key=lambda b: (first[b.section], b.section, b.start))


def timeline(
    tasks: list[Task], figures: list[TaskFigures], dispatches: list[Dispatch]
) -> tuple[str | None, str | None]:
    """(gantt, note) at the finest grain that fits; (None, note) when nothing ran."""
    now = clock.utc_now()
    per_task = "Too many dispatches for one Mermaid chart: one bar per task, from its first start to its last finish."
    per_wave = "Too many tasks for one Mermaid chart: one bar per group of waves, from its first start to its last finish."
    options: list[tuple[list[Bar], str | None]] = []
    if dispatches:
        options += [(dispatch_bars(dispatches), None), (task_bars(figures, now), per_task)]
    else:
        options.append((task_bars(figures, now), None))
    options.append((wave_bars(tasks, figures, now), per_wave))
    if not any(bars for bars, _ in options):
        return None, None
    for bars, note in options:
        if bars:
            text = gantt(_ordered(bars))
            if fits(text):
                return text, note
    return None, "The run is too large for a Mermaid timeline even by groups of waves."

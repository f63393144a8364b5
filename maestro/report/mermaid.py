"""The report's two Mermaid diagrams: a dependency flowchart and a dispatch gantt.

Only two fixed shapes are ever written. The tests check them line by line
(tests/engine/mermaid_check.py) and feed the same text to the real parser of the
``mermaid`` npm package under node when it is installed (see docs/review-and-report.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from maestro.state.model import STATUSES, Task

# Light fills that keep dark text readable, on GitHub's light and dark themes alike.
STATUS_STYLE = {
    "pending": "fill:#f3f4f6,stroke:#6b7280,color:#111827",
    "running": "fill:#dbeafe,stroke:#2563eb,color:#1e3a8a",
    "done": "fill:#d1fae5,stroke:#059669,color:#064e3b",
    "failed": "fill:#fee2e2,stroke:#dc2626,color:#7f1d1d",
    "blocked": "fill:#fef3c7,stroke:#d97706,color:#78350f",
}
BAR_TAGS = ("done", "crit", "active")
# Mermaid's defaults: a longer diagram text is not drawn, and a flowchart with this many
# edges is refused. Both are site settings a diagram cannot raise (the "secure" keys).
MAX_TEXT = 50_000
MAX_EDGES = 500
DATE_FORMAT = "YYYY-MM-DD HH:mm:ss"
_PY_DATE = "%Y-%m-%d %H:%M:%S"
LABEL_MAX = 48


@dataclass
class Bar:
    """One dispatch on the timeline."""

    section: str  # e.g. "Task 2"
    label: str  # e.g. "codex attempt 2"
    start: datetime
    end: datetime
    tag: str = "done"  # done (succeeded) | crit (failed) | active (still running)


def node_id(task_id: str) -> str:
    return "t" + task_id.replace(".", "_")


def _shorten(text: str, limit: int = LABEL_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def node_label(text: str) -> str:
    """Text safe inside a quoted flowchart label: Mermaid entities for what it would read."""
    text = " ".join(text.split()).replace("#", "#35;")
    for char, entity in (('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("`", "#96;")):
        text = text.replace(char, entity)
    return text


def bar_text(text: str) -> str:
    """Gantt labels and sections end at ':' or ';' and '#' starts a comment: drop them."""
    cleaned = re.sub(r"[:;#\n\r]+", " ", text)
    return _shorten(cleaned) or "-"


def flowchart(tasks: Iterable[Task]) -> str:
    tasks = list(tasks)
    lines = ["flowchart LR"]
    for task in tasks:
        state = task.status if task.status in STATUSES else "pending"
        suffix = f"({state}, review {task.review})" if task.review else f"({state})"
        label = node_label(f"{task.id}. {_shorten(task.title, 40)} {suffix}")
        lines.append(f'  {node_id(task.id)}["{label}"]:::{state}')
    known = {task.id for task in tasks}
    for task in tasks:
        for dep in task.depends:
            if dep in known:
                lines.append(f"  {node_id(dep)} --> {node_id(task.id)}")
    for state in STATUSES:
        lines.append(f"  classDef {state} {STATUS_STYLE[state]}")
    return "\n".join(lines)


def chain_flowchart(groups: Iterable[tuple[str, str]]) -> str:
    """Nodes ``w1 --> w2 --> ...`` from (label, status) pairs: the plan's waves, for a plan
    too large to draw task by task."""
    lines = ["flowchart LR"]
    count = 0
    for count, (label, state) in enumerate(groups, start=1):
        state = state if state in STATUSES else "pending"
        lines.append(f'  w{count}["{node_label(label)}"]:::{state}')
    lines += [f"  w{i} --> w{i + 1}" for i in range(1, count)]
    lines += [f"  classDef {state} {STATUS_STYLE[state]}" for state in STATUSES]
    return "\n".join(lines)


def edge_count(text: str) -> int:
    return sum(1 for line in text.split("\n") if " --> " in line)


def fits(text: str) -> bool:
    """Whether Mermaid, as configured by default (GitHub included), draws ``text``."""
    return len(text) <= MAX_TEXT and edge_count(text) < MAX_EDGES


def gantt(bars: Iterable[Bar]) -> str:
    lines = [
        "gantt",
        "  title Dispatches",
        f"  dateFormat {DATE_FORMAT}",
        "  axisFormat %H:%M:%S",
    ]
    section = None
    for index, bar in enumerate(bars, start=1):
        if bar.section != section:
            section = bar.section
            lines.append(f"  section {bar_text(section)}")
        # A zero-length bar does not show; one second is the clock's resolution anyway.
        end = max(bar.end, bar.start + timedelta(seconds=1))
        tag = bar.tag if bar.tag in BAR_TAGS else "done"
        lines.append(
            f"    {bar_text(bar.label)} :{tag}, d{index}, "
            f"{bar.start.strftime(_PY_DATE)}, {end.strftime(_PY_DATE)}"
        )
    return "\n".join(lines)

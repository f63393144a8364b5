"""The report's two Mermaid diagrams, and a strict check of the shapes they may take.

Only two fixed shapes are ever written, so they can be checked line by line in Python
(``check``): every line must match one of the shape's patterns, every edge must join
declared nodes, every date must parse. The test suite also feeds the same text to the
real parser of the ``mermaid`` npm package under node when it is installed (see
docs/review-and-report.md), so the Python check is tied to what Mermaid accepts.
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


def flowchart(tasks: Iterable[Task], direction: str = "LR") -> str:
    tasks = list(tasks)
    lines = [f"flowchart {direction}"]
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


def chain_flowchart(groups: Iterable[tuple[str, str]], direction: str = "LR") -> str:
    """Nodes ``w1 --> w2 --> ...`` from (label, status) pairs: the plan's waves, for a plan
    too large to draw task by task."""
    lines = [f"flowchart {direction}"]
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


def gantt(bars: Iterable[Bar], title: str = "Dispatches") -> str:
    lines = [
        "gantt",
        f"  title {bar_text(title)}",
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


# ---- the strict check ----------------------------------------------------------------

_ID = r"(?:t[0-9]+(?:_[0-9]+)*|w[0-9]+)"
_LABEL_BAD = re.compile(r'["<>`\n]|#(?![0-9]+;|quot;|lt;|gt;)')
_FLOW = {
    "node": re.compile(rf'^  (?P<id>{_ID})\["(?P<label>[^"\n]*)"\]:::(?P<cls>[a-z]+)$'),
    "edge": re.compile(rf"^  (?P<a>{_ID}) --> (?P<b>{_ID})$"),
    "classdef": re.compile(r"^  classDef (?P<cls>[a-z]+) (?:[a-z-]+:#[0-9a-f]{3,6})(?:,[a-z-]+:#[0-9a-f]{3,6})*$"),
}
_DATE = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"
_GANTT = {
    "title": re.compile(r"^  title [^:;#\n]+$"),
    "dateformat": re.compile(rf"^  dateFormat {re.escape(DATE_FORMAT)}$"),
    "axis": re.compile(r"^  axisFormat %H:%M:%S$"),
    "section": re.compile(r"^  section [^:;#\n]+$"),
    "bar": re.compile(
        rf"^    [^:;#\n]+ :(?P<tag>[a-z]+), (?P<id>d[0-9]+), (?P<start>{_DATE}), (?P<end>{_DATE})$"
    ),
}


def check(text: str) -> list[str]:
    """Problems with a diagram of one of the two shapes above; empty means it is valid."""
    lines = text.split("\n")
    head = lines[0] if lines else ""
    size = []
    if len(text) > MAX_TEXT:
        size.append(f"{len(text):,} characters: Mermaid draws at most {MAX_TEXT:,}")
    if head.startswith("flowchart") and edge_count(text) >= MAX_EDGES:
        size.append(f"{edge_count(text)} edges: Mermaid draws fewer than {MAX_EDGES}")
    if re.fullmatch(r"flowchart (TD|LR)", head):
        return size + _check_flowchart(lines[1:])
    if head == "gantt":
        return size + _check_gantt(lines[1:])
    return [f"line 1: expected 'flowchart LR|TD' or 'gantt', found {head!r}"]


def _check_flowchart(lines: list[str]) -> list[str]:
    problems: list[str] = []
    nodes: set[str] = set()
    used: set[str] = set()
    defined: set[str] = set()
    for number, line in enumerate(lines, start=2):
        if match := _FLOW["node"].match(line):
            if match["id"] in nodes:
                problems.append(f"line {number}: node {match['id']} declared twice")
            if _LABEL_BAD.search(match["label"]):
                problems.append(f"line {number}: label has an unescaped character")
            nodes.add(match["id"])
            used.add(match["cls"])
        elif match := _FLOW["edge"].match(line):
            for end in (match["a"], match["b"]):
                if end not in nodes:
                    problems.append(f"line {number}: edge to undeclared node {end}")
        elif match := _FLOW["classdef"].match(line):
            defined.add(match["cls"])
        else:
            problems.append(f"line {number}: not a node, edge or classDef: {line!r}")
    problems.extend(f"class {name} is used but has no classDef" for name in sorted(used - defined))
    return problems


def _check_gantt(lines: list[str]) -> list[str]:
    problems: list[str] = []
    order = ["title", "dateformat", "axis"]
    ids: set[str] = set()
    in_section = False
    for number, line in enumerate(lines, start=2):
        if order:
            expected = order.pop(0)
            if not _GANTT[expected].match(line):
                problems.append(f"line {number}: expected the {expected} line, found {line!r}")
            continue
        if _GANTT["section"].match(line):
            in_section = True
            continue
        match = _GANTT["bar"].match(line)
        if not match:
            problems.append(f"line {number}: not a section or bar: {line!r}")
            continue
        if not in_section:
            problems.append(f"line {number}: bar before any section")
        if match["tag"] not in BAR_TAGS:
            problems.append(f"line {number}: tag {match['tag']!r} is not one of {', '.join(BAR_TAGS)}")
        if match["id"] in ids:
            problems.append(f"line {number}: bar id {match['id']} used twice")
        ids.add(match["id"])
        try:
            start = datetime.strptime(match["start"], _PY_DATE)
            end = datetime.strptime(match["end"], _PY_DATE)
        except ValueError:
            problems.append(f"line {number}: a date does not exist")
            continue
        if end <= start:
            problems.append(f"line {number}: the bar ends before it starts")
    if order:
        problems.append("the gantt header is incomplete")
    return problems

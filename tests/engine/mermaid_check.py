"""A strict check of the two Mermaid shapes the report writes (maestro.report.mermaid).

Only two fixed shapes are ever written, so they can be checked line by line in Python:
every line must match one of the shape's patterns, every edge must join declared nodes,
every date must parse. The report tests also feed the same text to the real parser of the
``mermaid`` npm package under node when it is installed, which ties this check to what
Mermaid accepts.
"""

from __future__ import annotations

import re
from datetime import datetime

from maestro.report.mermaid import BAR_TAGS, DATE_FORMAT, MAX_EDGES, MAX_TEXT, edge_count

_PY_DATE = "%Y-%m-%d %H:%M:%S"

_ID = r"(?:t[0-9]+(?:_[0-9]+)*|w[0-9]+)"
_LABEL_BAD = re.compile(r'["<>`\n]|#(?![0-9]+;|quot;|lt;|gt;)')
_FLOW = {
    "node": re.compile(rf'^  (?P<id>{_ID})\["(?P<label>[^"\n]*)"\]:::(?P<cls>[a-z]+)$'),
    "edge": re.compile(rf"^  (?P<a>{_ID}) --> (?P<b>{_ID})$"),
    "classdef": re.compile(
        r"^  classDef (?P<cls>[a-z]+) (?:[a-z-]+:#[0-9a-f]{3,6})(?:,[a-z-]+:#[0-9a-f]{3,6})*$"
    ),
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
            problems.append(
                f"line {number}: tag {match['tag']!r} is not one of {', '.join(BAR_TAGS)}"
            )
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

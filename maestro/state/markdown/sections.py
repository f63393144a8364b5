"""The plan file's simple sections: the version marker, Goal, Source and the Execution Log
table. Reading and writing sit side by side here so the two stay in step."""

from __future__ import annotations

import re
from typing import Any

from maestro import tables
from maestro.state.codecs import values as v
from maestro.state.codecs.values import FieldError
from maestro.state.markdown.blocks import misplaced_task, split_blocks
from maestro.state.model import FORMAT_VERSION, LogEntry, Source

MARKER = re.compile(r"<!--[ \t]*maestro:format[ \t]+(\S*)[ \t]*-->", re.IGNORECASE)
MARKER_LINE = f"<!-- maestro:format {FORMAT_VERSION} -->\n"
DEFAULT_TITLE = "Maestro Orchestration"
# Section name (as written, lower case) -> slot.
SECTIONS = {
    "goal": "goal",
    "tasks": "tasks",
    "challenges": "challenges",
    "reviews": "reviews",
    "execution log": "log",
    "source": "source",
}
SECTION_TITLES = {slot: name.title() for name, slot in SECTIONS.items()}
SLOT_ORDER = ("marker", "title", "goal", "tasks", "challenges", "reviews", "log", "source")

COLUMNS = ("time", "task", "tool", "action", "outcome", "tokens", "cost")
REQUIRED_COLUMNS = COLUMNS[:5]
_DELIMITER = re.compile(r"\|?(?:[ \t]*:?-+:?[ \t]*\|)*[ \t]*:?-+:?[ \t]*\|?")
_HUB = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]*")


def split_body(body: str) -> tuple[str, str, str]:
    """(blank lines before, the content, blank lines after) of a section body."""
    lines = body.split("\n")[:-1]
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    last = len(lines)
    while last > first and not lines[last - 1].strip():
        last -= 1

    def join(part: list[str]) -> str:
        return "".join(line + "\n" for line in part)

    return join(lines[:first]), join(lines[first:last]), join(lines[last:])


def title_of(heading_raw: str) -> str:
    m = re.match(r" {0,3}#[ \t]+(.*)", heading_raw.split("\n", 1)[0])
    return m.group(1).strip() if m else heading_raw.split("\n", 1)[0].strip()


# --- goal and source ----------------------------------------------------------------------


def check_goal(goal: Any) -> str:
    """The goal must not hold a line that would end its section when read back."""
    v.check_text("Goal", goal)
    probe = "## Goal\n\n" + goal + "\n\n## End\n"
    blocks = split_blocks(probe)
    headings = [b for b in blocks if b.kind == "heading" and b.level <= 2]
    if misplaced_task(blocks) is not None:
        raise FieldError(
            "a Goal with a `### Task` heading in it",
            "write the goal as prose; tasks go under `## Tasks`.",
        )
    if len(headings) != 2 or headings[1].start != len(probe) - len("## End\n"):
        raise FieldError(
            "a Goal with a line that would start a new section or swallow the next one",
            "indent that line, or close the code fence or HTML comment it opens.",
        )
    return str(goal)


def parse_source(line: str) -> Source:
    hub, bar, time = line.strip().rpartition("|")
    if not bar:
        raise FieldError(
            f'an unreadable Source line "{v.preview(line)}"',
            "write it as `<hub tool> | YYYY-MM-DD HH:MM UTC`, e.g. `claude | 2026-11-21 12:00 UTC`.",
        )
    return Source(hub.strip(), v.check_stamp("Source", time.strip()))


def check_source(source: Any) -> None:
    if (
        not isinstance(source.hub, str)
        or not _HUB.fullmatch(source.hub)
        or source.hub != source.hub.strip()
    ):
        raise FieldError(
            f"an invalid Source hub ({source.hub!r})", "name the hub tool, e.g. claude."
        )
    v.check_stamp("Source", source.time)


def source_line(source: Source) -> str:
    return f"{source.hub} | {source.time}\n"


# --- the execution log table ------------------------------------------------------------


class TableError(ValueError):
    def __init__(self, offset: int, message: str, fix: str) -> None:
        super().__init__(message)
        self.offset, self.message, self.fix = offset, message, fix


def parse_table(lines: list[str]) -> tuple[list[str], list[LogEntry]]:
    """Columns and entries of the log table (``lines``: header, delimiter, rows)."""
    header = tables.split_row(lines[0])
    columns = [" ".join(c.split()).lower() for c in header]
    for offset, column in enumerate(columns):
        if column not in COLUMNS or columns.index(column) != offset:
            raise TableError(
                0,
                f'the Execution Log table has an unknown or repeated column "{header[offset]}".',
                "use the columns " + ", ".join(c.title() for c in COLUMNS) + ".",
            )
    missing = [c.title() for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise TableError(
            0,
            f"the Execution Log table has no {', '.join(missing)} column.",
            "use the columns " + ", ".join(c.title() for c in COLUMNS) + ".",
        )
    if len(lines) < 2 or not _DELIMITER.fullmatch(lines[1].strip()):
        raise TableError(
            1,
            "the Execution Log table has no |---| line under its header.",
            "add a line like `|---|---|` under the header.",
        )
    entries = [_entry(offset, line, columns) for offset, line in enumerate(lines[2:], start=2)]
    return columns, entries


def _entry(offset: int, line: str, columns: list[str]) -> LogEntry:
    cells = tables.split_row(line)
    if len(cells) != len(columns):
        raise TableError(
            offset,
            f"an Execution Log row has {len(cells)} cells, the header {len(columns)}.",
            "give every row one cell per column; write `\\|` for a | inside a cell.",
        )
    data = dict(zip(columns, cells))
    try:
        tokens = v.parse_int("Tokens", data["tokens"]) if data.get("tokens") else None
    except FieldError as exc:
        raise TableError(offset, f"an Execution Log row has {exc.text}.", exc.fix) from None
    return LogEntry(
        data["time"],
        data["task"],
        data["tool"],
        data["action"],
        data["outcome"],
        tokens,
        data.get("cost") or None,
    )


def table_header(columns: list[str]) -> str:
    names = [c.title() for c in columns]
    return tables.row(names) + "\n" + tables.separator(names) + "\n"


def table_row(entry: LogEntry, columns: list[str]) -> str:
    cells = {
        "time": entry.time,
        "task": entry.task,
        "tool": entry.tool,
        "action": entry.action,
        "outcome": entry.outcome,
        "tokens": v.format_int(entry.tokens),
        "cost": entry.cost or "",
    }
    return tables.row([tables.escape(cells[c]) for c in columns]) + "\n"


def needs_columns(entry: LogEntry) -> set[str]:
    return {c for c, value in (("tokens", entry.tokens), ("cost", entry.cost)) if value is not None}


def check_entry(entry: Any) -> None:
    for name in REQUIRED_COLUMNS:
        v.check_line(f"log {name}", getattr(entry, name), empty_ok=True)
    if entry.tokens is not None:
        v.check_int("log tokens", entry.tokens)
    if entry.cost is not None:
        v.check_line("log cost", entry.cost)

"""One row of the execution log: its eight cells, written and read back.

Every ``LogRow`` field can be read back from the cells: the Target names the tool
(``Gemini (Task 1)``) and the task (``Task 1``), the Tokens cell carries the cost (``~$``
when estimated), a failed row's Outcome starts with ❌, and a retry's Action is ``Retry``
or ends in ``(retry)``. That is what lets every append recompute the totals from the rows.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from maestro import roster, tables
from maestro.errors import MaestroError
from maestro.formatting import duration_cell, money_cell

LOG_FORMAT = 1
VERBOSITIES = ("off", "summary", "detailed")
TITLE = "# Maestro Execution Log"
MARKER = f"<!-- maestro-log-format: {LOG_FORMAT} -->"
COLUMNS = ("Time", "Actor", "Action", "Target", "Tokens", "Duration", "Outcome", "Notes")
TOTAL_COLUMNS = ("Tool", "Dispatches", "Tokens", "Failures", "Retries")
SESSION_PREFIX = "## Session: "
TOTALS_HEADING = "## Totals"
FAILED = "❌"

# A row's Target names a CLI by its short name, the Totals table by its display name (both
# from the roster); a subagent row is no CLI's.
_SUBAGENT = ("subagent", "Subagent", "Subagents")


def short_name(tool: str | None) -> str:
    """How a row's Target names ``tool`` ("Gemini"); an unknown label stays as written."""
    cli = roster.get(tool)
    if cli is not None:
        return cli.short
    return _SUBAGENT[1] if tool == _SUBAGENT[0] else tool or "-"


def long_name(tool: str) -> str:
    """How the Totals table names ``tool`` ("Gemini CLI")."""
    cli = roster.get(tool)
    if cli is not None:
        return cli.display
    return _SUBAGENT[2] if tool == _SUBAGENT[0] else tool


def _from_short(label: str) -> str | None:
    """The tool a Target's short name (or plain name) stands for, else None."""
    label = label.lower()
    for cli in roster.CLIS.values():
        if label in (cli.short.lower(), cli.name):
            return cli.name
    return _SUBAGENT[0] if label == _SUBAGENT[0] else None


def from_display(label: str) -> str:
    """The tool a Totals label stands for; a label naming none stays as written."""
    lowered = label.lower()
    for cli in roster.CLIS.values():
        if lowered == cli.display.lower():
            return cli.name
    return _SUBAGENT[0] if lowered == _SUBAGENT[2].lower() else label


MARKER_RE = re.compile(r"^<!--\s*maestro-log-format:\s*(\d+)\s*-->$")
_TASK_RE = re.compile(r"\bTask (\d+(?:\.\d+)*)\b")
_TARGET_RE = re.compile(r"^(\S+) \((.*)\)$")
_TOKENS_RE = re.compile(r"^([\d,]+)(?: \((~?)\$([\d.]+)\))?$")
_DURATION_RE = re.compile(r"^(?:(\d+)h ?)?(?:(\d+)m ?)?(?:(\d+(?:\.\d+)?)s)?$")
SEPARATOR_RE = re.compile(r"^:?-+:?$")


class LogFormatError(MaestroError):
    """The log file holds something its reader cannot take apart."""


@dataclass
class LogRow:
    time: str  # HH:MM:SS (an ISO time is shortened to it)
    actor: str
    action: str
    target: str
    tokens: int | None
    duration_s: float | None
    outcome: str
    notes: str = ""
    tool: str | None = None  # set: the row is one dispatch of that CLI, counted in Totals
    failed: bool = False
    retry: bool = False
    cost: float | None = None
    cost_estimated: bool = False
    task: str | None = None


@dataclass
class ToolTotals:
    tool: str  # a roster CLI name, or the label as written when it names no known CLI
    dispatches: int = 0
    tokens: int = 0
    failures: int = 0
    retries: int = 0

    @property
    def label(self) -> str:
        return long_name(self.tool)


def compute_totals(rows: list[LogRow], start: Sequence[ToolTotals] = ()) -> list[ToolTotals]:
    """Per tool, in order of first appearance: a row with a tool is one dispatch. ``start``:
    totals the rows add to (copied, never changed)."""
    by_tool = {t.tool: dataclasses.replace(t) for t in start}
    for row in rows:
        if not row.tool:
            continue
        entry = by_tool.setdefault(row.tool, ToolTotals(row.tool))
        entry.dispatches += 1
        entry.tokens += row.tokens or 0
        entry.failures += int(row.failed)
        entry.retries += int(row.retry)
    return list(by_tool.values())


def grand_total(totals: list[ToolTotals]) -> ToolTotals:
    return ToolTotals(
        "Total",
        sum(t.dispatches for t in totals),
        sum(t.tokens for t in totals),
        sum(t.failures for t in totals),
        sum(t.retries for t in totals),
    )


def _time_cell(time: str) -> str:
    match = re.search(r"T(\d\d:\d\d:\d\d)", time)
    return match.group(1) if match else time


def _tokens_cell(row: LogRow) -> str:
    if row.tokens is None and row.cost is None:
        return "-"
    text = f"{row.tokens or 0:,}"
    if row.cost is not None:
        text += f" ({money_cell(row.cost, row.cost_estimated)})"
    return text


def _target_cell(row: LogRow) -> str:
    target = row.target.strip()
    if row.task and not re.search(rf"\bTask {re.escape(row.task)}\b", target):
        target = f"{target}, Task {row.task}" if target else f"Task {row.task}"
    if row.tool:
        name = short_name(row.tool)
        return f"{name} ({target})" if target else name
    return target or "-"


def render_row(row: LogRow) -> str:
    action = row.action
    if row.retry and not action.lower().startswith("retry"):
        action += " (retry)"
    outcome = row.outcome.strip()
    if row.failed and not outcome.startswith(FAILED):
        outcome = f"{FAILED} {outcome}" if outcome else FAILED
    cells = [
        _time_cell(row.time),
        row.actor,
        action,
        _target_cell(row),
        _tokens_cell(row),
        duration_cell(row.duration_s),
        outcome or "-",
        row.notes,
    ]
    return tables.row([tables.escape(cell) for cell in cells])


def _parse_duration(cell: str) -> float | None:
    match = _DURATION_RE.match(cell.replace(" ", ""))
    if cell in ("-", "") or not match or not any(match.groups()):
        return None
    hours, minutes, seconds = match.groups()
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0)


def parse_row(cells: list[str], *, file: str | None = None, line: int | None = None) -> LogRow:
    if len(cells) != len(COLUMNS):
        raise LogFormatError(
            f"a log row has {len(cells)} cells, expected {len(COLUMNS)} ({', '.join(COLUMNS)}).",
            "repair the row (escape a '|' inside a cell as '\\|'), or move the log away with `maestro archive`.",
            file=file,
            line=line,
        )
    time, actor, action, target_cell, tokens_cell, duration_cell, outcome, notes = cells
    retry = action.lower().startswith("retry") or action.endswith(" (retry)")
    action = action.removesuffix(" (retry)")
    tool = None
    target = "" if target_cell == "-" else target_cell
    match = _TARGET_RE.match(target_cell)
    if match and _from_short(match.group(1)):
        tool, target = _from_short(match.group(1)), match.group(2)
    elif _from_short(target_cell):
        tool, target = _from_short(target_cell), ""
    task_match = _TASK_RE.search(target)
    tokens = cost = None
    estimated = False
    token_match = _TOKENS_RE.match(tokens_cell)
    if token_match:
        tokens = int(token_match.group(1).replace(",", ""))
        if token_match.group(3):
            cost, estimated = float(token_match.group(3)), token_match.group(2) == "~"
    failed = outcome.startswith(FAILED)
    if outcome.startswith(FAILED + " "):
        outcome = outcome[len(FAILED) + 1 :]
    return LogRow(
        time=time,
        actor=actor,
        action=action,
        target=target,
        tokens=tokens,
        duration_s=_parse_duration(duration_cell),
        outcome="" if outcome == "-" else outcome,
        notes=notes,
        tool=tool,
        failed=failed,
        retry=retry,
        cost=cost,
        cost_estimated=estimated,
        task=task_match.group(1) if task_match else None,
    )

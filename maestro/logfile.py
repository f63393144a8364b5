"""The execution log, ``.ai/MAESTRO-LOG.md``, in the design notes' table format.

    # Maestro Execution Log

    ## Session: 2026-01-16 14:30 UTC
    **Goal:** Add user authentication

    | Time | Actor | Action | Target | Tokens | Duration | Outcome | Notes |
    |------|-------|--------|--------|--------|----------|---------|-------|
    | 14:31:02 | Hub | Dispatch | Gemini (Task 1) | 27,316 ($0.55) | 45s | ✅ | Task 1 complete |

    ## Totals
    | Tool | Dispatches | Tokens | Failures | Retries |
    ...

Every cell is readable text, and every ``LogRow`` field can be read back from it: the
Target names the tool (``Gemini (Task 1)``) and the task (``Task 1``), the Tokens cell
carries the cost (``~$`` when estimated), a failed row's Outcome starts with ❌, and a
retry's Action is ``Retry`` or ends in ``(retry)``. That is what lets every append
recompute ``## Totals`` from all the rows.

An append holds a lock, splices one row into the file's text (so a person's notes in the
log are kept), recomputes the totals, and writes atomically: several processes may
append at once without losing a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from maestro import clock
from maestro.errors import ConfigError, MaestroError
from maestro.fsutil import atomic_write, file_lock
from maestro.paths import ProjectPaths

LOG_FORMAT = 1
VERBOSITIES = ("off", "summary", "detailed")
TITLE = "# Maestro Execution Log"
MARKER = f"<!-- maestro-log-format: {LOG_FORMAT} -->"
COLUMNS = ("Time", "Actor", "Action", "Target", "Tokens", "Duration", "Outcome", "Notes")
TOTAL_COLUMNS = ("Tool", "Dispatches", "Tokens", "Failures", "Retries")
SESSION_PREFIX = "## Session: "
TOTALS_HEADING = "## Totals"
FAILED = "❌"

# How a tool is named in a row's Target, and in the Totals table.
TOOL_SHORT = {"claude": "Claude", "gemini": "Gemini", "codex": "Codex", "sim": "Sim", "subagent": "Subagent"}
TOOL_LONG = {
    "claude": "Claude Code",
    "gemini": "Gemini CLI",
    "codex": "Codex CLI",
    "sim": "Simulated",
    "subagent": "Subagents",
}
_SHORT_TO_TOOL = {v.lower(): k for k, v in TOOL_SHORT.items()} | {k: k for k in TOOL_SHORT}
_LONG_TO_TOOL = {v.lower(): k for k, v in TOOL_LONG.items()}
_MARKER_RE = re.compile(r"^<!--\s*maestro-log-format:\s*(\d+)\s*-->$")
_TASK_RE = re.compile(r"\bTask (\d+(?:\.\d+)*)\b")
_TARGET_RE = re.compile(r"^(\S+) \((.*)\)$")
_TOKENS_RE = re.compile(r"^([\d,]+)(?: \((~?)\$([\d.]+)\))?$")
_DURATION_RE = re.compile(r"^(?:(\d+)h ?)?(?:(\d+)m ?)?(?:(\d+(?:\.\d+)?)s)?$")
_SEPARATOR_RE = re.compile(r"^:?-+:?$")


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
    tool: str  # cli name ("gemini"), or the label as written when it names no known CLI
    dispatches: int = 0
    tokens: int = 0
    failures: int = 0
    retries: int = 0

    @property
    def label(self) -> str:
        return TOOL_LONG.get(self.tool, self.tool)


@dataclass
class LogSession:
    stamp: str  # 2026-01-16 14:30 UTC
    goal: str
    run_id: str | None = None
    hub: str | None = None
    details: str | None = None  # where detailed prompts/outputs are kept
    rows: list[LogRow] = field(default_factory=list)

    def totals(self) -> list[ToolTotals]:
        return compute_totals(self.rows)


@dataclass
class ParsedLog:
    sessions: list[LogSession] = field(default_factory=list)
    totals: list[ToolTotals] = field(default_factory=list)  # as written in ## Totals
    total: ToolTotals | None = None  # the **Total** row as written
    version: int = LOG_FORMAT

    def rows(self) -> list[LogRow]:
        return [row for session in self.sessions for row in session.rows]


def compute_totals(rows: list[LogRow]) -> list[ToolTotals]:
    """Per tool, in order of first appearance: a row with a tool is one dispatch."""
    by_tool: dict[str, ToolTotals] = {}
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


# Cells ----------------------------------------------------------------------------------


def escape(text: str) -> str:
    """A table cell on one line: ``\\`` and ``|`` escaped, newlines as ``<br>``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>").strip()


def split_row(line: str) -> list[str]:
    """``| a | b\\|c |`` -> ``["a", "b|c"]``: cells unescaped and stripped."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    cells: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body) and body[i + 1] in "\\|":
            current.append(body[i + 1])
            i += 2
            continue
        if char == "|":
            cells.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if "".join(current).strip():
        cells.append("".join(current))
    return [cell.strip().replace("<br>", "\n") for cell in cells]


def _table_line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _separator(columns: tuple[str, ...]) -> str:
    return "|" + "|".join("-" * (len(name) + 2) for name in columns) + "|"


def _time_cell(time: str) -> str:
    match = re.search(r"T(\d\d:\d\d:\d\d)", time)
    return match.group(1) if match else time


def _money(cost: float) -> str:
    text = f"{cost:.4f}".rstrip("0")
    return text + "0" * (2 - len(text.split(".")[1]))


def _tokens_cell(row: LogRow) -> str:
    if row.tokens is None and row.cost is None:
        return "-"
    text = f"{row.tokens or 0:,}"
    if row.cost is not None:
        text += f" ({'~' if row.cost_estimated else ''}${_money(row.cost)})"
    return text


def _duration_cell(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _target_cell(row: LogRow) -> str:
    target = row.target.strip()
    if row.task and not re.search(rf"\bTask {re.escape(row.task)}\b", target):
        target = f"{target}, Task {row.task}" if target else f"Task {row.task}"
    if row.tool:
        name = TOOL_SHORT.get(row.tool, row.tool)
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
        _duration_cell(row.duration_s),
        outcome or "-",
        row.notes,
    ]
    return _table_line([escape(cell) for cell in cells])


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
    if action.endswith(" (retry)"):
        action = action[: -len(" (retry)")]
    tool = None
    target = "" if target_cell == "-" else target_cell
    match = _TARGET_RE.match(target_cell)
    if match and match.group(1).lower() in _SHORT_TO_TOOL:
        tool, target = _SHORT_TO_TOOL[match.group(1).lower()], match.group(2)
    elif target_cell.lower() in _SHORT_TO_TOOL:
        tool, target = _SHORT_TO_TOOL[target_cell.lower()], ""
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
        outcome = outcome[len(FAILED) + 1:]
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


# Whole file -----------------------------------------------------------------------------


def _meta_line(session: LogSession) -> str | None:
    parts = []
    if session.run_id:
        parts.append(f"**Run:** {session.run_id}")
    if session.hub:
        parts.append(f"**Hub:** {session.hub}")
    if session.details:
        parts.append(f"**Details:** `{session.details}`")
    return " · ".join(parts) or None


def render_session_head(session: LogSession) -> list[str]:
    lines = [f"{SESSION_PREFIX}{session.stamp}", f"**Goal:** {' '.join(session.goal.split()) or '-'}"]
    meta = _meta_line(session)
    if meta:
        lines.append(meta)
    return lines + ["", _table_line(list(COLUMNS)), _separator(COLUMNS)]


def render_totals(totals: list[ToolTotals]) -> list[str]:
    def numbers(t: ToolTotals) -> list[str]:
        return [str(t.dispatches), f"{t.tokens:,}", str(t.failures), str(t.retries)]

    lines = [TOTALS_HEADING, _table_line(list(TOTAL_COLUMNS)), _separator(TOTAL_COLUMNS)]
    lines += [_table_line([escape(t.label), *numbers(t)]) for t in totals]
    lines.append(_table_line([f"**{cell}**" for cell in ["Total", *numbers(grand_total(totals))]]))
    return lines


def render(log: ParsedLog) -> str:
    """Canonical text of a log; ``parse(render(log)) == log`` when totals match the rows."""
    lines = [TITLE, MARKER, ""]
    for session in log.sessions:
        lines += render_session_head(session)
        lines += [render_row(row) for row in session.rows]
        lines.append("")
    lines += render_totals(compute_totals(log.rows()))
    return "\n".join(lines) + "\n"


def _int(cell: str) -> int:
    try:
        return int(cell.strip("*").replace(",", ""))
    except ValueError:
        return 0


def _parse_meta(session: LogSession, text: str) -> None:
    for part in text.split(" · "):
        match = re.match(r"^\*\*(\w+):\*\*\s*(.*)$", part.strip())
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if key == "goal":
            session.goal = value
        elif key == "run":
            session.run_id = value
        elif key == "hub":
            session.hub = value
        elif key == "details":
            session.details = value.strip("`")


def parse(text: str, path: str = ".ai/MAESTRO-LOG.md") -> ParsedLog:
    """Read sessions, rows and the Totals table. Lines it does not know are skipped."""
    log = ParsedLog()
    section: str | None = None
    session: LogSession | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        marker = _MARKER_RE.match(line)
        if marker:
            log.version = int(marker.group(1))
            if log.version > LOG_FORMAT:
                raise LogFormatError(
                    f"the log is in format {log.version}, newer than this Maestro reads ({LOG_FORMAT}).",
                    "upgrade Maestro (pip install -U maestro-orchestra), or archive the log with `maestro archive`.",
                    file=path,
                    line=number,
                )
            continue
        if line.startswith("## "):
            if line.startswith(SESSION_PREFIX):
                session = LogSession(stamp=line[len(SESSION_PREFIX):].strip(), goal="")
                log.sessions.append(session)
                section = "session"
            else:
                section = "totals" if line == TOTALS_HEADING else None
            continue
        if section == "session" and session is not None:
            if line.startswith("**") and not line.startswith("|"):
                _parse_meta(session, line)
            elif line.startswith("|"):
                cells = split_row(line)
                if cells == list(COLUMNS) or all(_SEPARATOR_RE.match(c) for c in cells):
                    continue
                session.rows.append(parse_row(cells, file=path, line=number))
        elif section == "totals" and line.startswith("|"):
            cells = split_row(line)
            if cells == list(TOTAL_COLUMNS) or all(_SEPARATOR_RE.match(c) for c in cells) or len(cells) < 5:
                continue
            label = cells[0].strip("*")
            entry = ToolTotals(_LONG_TO_TOOL.get(label.lower(), label), *(_int(c) for c in cells[1:5]))
            if label == "Total":
                log.total = entry
            else:
                log.totals.append(entry)
    return log


# Splicing into existing text ------------------------------------------------------------


def _sections(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith("## ")]


def _section_end(lines: list[str], start: int) -> int:
    following = [i for i in _sections(lines) if i > start]
    return following[0] if following else len(lines)


def _totals_start(lines: list[str]) -> int | None:
    found = [i for i, line in enumerate(lines) if line.strip() == TOTALS_HEADING]
    return found[-1] if found else None


def _insert_before_totals(lines: list[str], block: list[str]) -> list[str]:
    at = _totals_start(lines)
    if at is None:
        at = len(lines)
        while at > 0 and not lines[at - 1].strip():
            at -= 1
        return lines[:at] + ["", *block, ""]
    return lines[:at] + block + [""] + lines[at:]


def _with_totals(lines: list[str], totals: list[ToolTotals]) -> list[str]:
    """Replace the Totals heading and its table; keep whatever else a person wrote."""
    block = render_totals(totals)
    at = _totals_start(lines)
    if at is None:
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        return lines + ["", *block]
    end = at + 1
    while end < len(lines) and lines[end].strip().startswith("|"):
        end += 1
    return lines[:at] + block + lines[end:]


def add_session(text: str, session: LogSession, path: str = ".ai/MAESTRO-LOG.md") -> str:
    lines = _lines(text)
    lines = _insert_before_totals(lines, render_session_head(session))
    return _finish(lines, path)


def add_row(text: str, row: LogRow, fallback: LogSession, path: str = ".ai/MAESTRO-LOG.md") -> str:
    """Insert ``row`` after the last row of the last session (started from ``fallback``
    when the file has none), then recompute the totals from every row."""
    lines = _lines(text)
    if not any(line.startswith(SESSION_PREFIX) for line in lines):
        lines = _insert_before_totals(lines, render_session_head(fallback))
    start = max(i for i, line in enumerate(lines) if line.startswith(SESSION_PREFIX))
    end = _section_end(lines, start)
    table = [i for i in range(start, end) if lines[i].strip().startswith("|")]
    if table:
        at = table[-1] + 1
        lines = lines[:at] + [render_row(row)] + lines[at:]
    else:
        at = end
        while at > start + 1 and not lines[at - 1].strip():
            at -= 1
        head = render_session_head(fallback)[-3:]  # blank, header, separator
        lines = lines[:at] + head + [render_row(row), ""] + lines[at:]
    return _finish(lines, path)


def _lines(text: str) -> list[str]:
    if not text.strip():
        return [TITLE, MARKER]
    return text.splitlines()


def _finish(lines: list[str], path: str) -> str:
    rows = parse("\n".join(lines), path).rows()
    return "\n".join(_with_totals(lines, compute_totals(rows))) + "\n"


# The log as the engine uses it ------------------------------------------------------------


def lock_path(paths: ProjectPaths) -> Path:
    return paths.machine_dir / "locks" / "log.lock"


class ExecutionLog:
    """Appends to ``.ai/MAESTRO-LOG.md`` at the given verbosity (off writes nothing).

    ``summary`` and ``detailed`` both write rows; under ``detailed`` the engine also keeps
    full prompts and outputs in ``.ai/maestro/runs/<run-id>/``, which the session header
    points to.
    """

    def __init__(self, paths: ProjectPaths, verbosity: str = "off") -> None:
        if verbosity not in VERBOSITIES:
            raise ConfigError(
                f"log verbosity {verbosity!r} is not valid.",
                f"set MAESTRO_LOG to one of {', '.join(VERBOSITIES)}.",
            )
        self.paths = paths
        self.verbosity = verbosity
        self.path = paths.log
        self._session: LogSession | None = None
        self._shown = str(self.path.relative_to(paths.root)) if self.path.is_relative_to(paths.root) else str(self.path)

    @property
    def enabled(self) -> bool:
        return self.verbosity != "off"

    def exists(self) -> bool:
        return self.path.is_file()

    def start_session(self, goal: str, *, run_id: str | None = None, hub: str | None = None) -> None:
        details = None
        if self.verbosity == "detailed" and run_id:
            runs = self.paths.runs_dir / run_id
            details = str(runs.relative_to(self.paths.root)) + "/" if runs.is_relative_to(self.paths.root) else str(runs)
        self._session = LogSession(clock.stamp(), goal, run_id=run_id, hub=hub, details=details)
        if self.enabled:
            session = self._session
            self._update(lambda text: add_session(text, session, self._shown))

    def append(self, row: LogRow) -> None:
        if not self.enabled:
            return
        fallback = self._session or LogSession(clock.stamp(), "-")
        self._update(lambda text: add_row(text, row, fallback, self._shown))

    def read(self) -> ParsedLog:
        """The log as written (an empty log when there is no file)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ParsedLog()
        except (OSError, UnicodeDecodeError) as exc:
            raise LogFormatError(f"cannot read the log: {exc}.", "check the file, or archive it.", file=self.path) from None
        return parse(text, self._shown)

    def _update(self, change: Callable[[str], str]) -> None:
        with file_lock(lock_path(self.paths)):
            try:
                # Bytes, not read_text: universal newlines would hide a CRLF file.
                text = self.path.read_bytes().decode("utf-8")
            except FileNotFoundError:
                text = ""
            except (OSError, UnicodeDecodeError) as exc:
                raise LogFormatError(
                    f"cannot read the log: {exc}.", "repair the file, or archive it.", file=self.path
                ) from None
            newline = "\r\n" if "\r\n" in text else "\n"
            updated = change(text)
            atomic_write(self.path, updated.replace("\n", newline) if newline != "\n" else updated)

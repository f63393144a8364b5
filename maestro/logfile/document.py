"""The whole log file: sessions, the Totals table, and splicing into existing text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from maestro import tables
from maestro.errors import UPGRADE
from maestro.logfile.rows import (
    COLUMNS,
    LOG_FORMAT,
    MARKER,
    MARKER_RE,
    SEPARATOR_RE,
    SESSION_PREFIX,
    TITLE,
    TOTAL_COLUMNS,
    TOTALS_HEADING,
    LogFormatError,
    LogRow,
    ToolTotals,
    compute_totals,
    from_display,
    grand_total,
    parse_row,
    render_row,
)


@dataclass
class LogSession:
    stamp: str  # 2026-01-16 14:30 UTC
    goal: str
    run_id: str | None = None
    hub: str | None = None
    details: str | None = None  # where detailed prompts/outputs are kept
    rows: list[LogRow] = field(default_factory=list)


@dataclass
class ParsedLog:
    sessions: list[LogSession] = field(default_factory=list)
    totals: list[ToolTotals] = field(default_factory=list)  # as written in ## Totals
    total: ToolTotals | None = None  # the **Total** row as written
    version: int = LOG_FORMAT

    def rows(self) -> list[LogRow]:
        return [row for session in self.sessions for row in session.rows]


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
    lines = [
        f"{SESSION_PREFIX}{session.stamp}",
        f"**Goal:** {' '.join(session.goal.split()) or '-'}",
    ]
    meta = _meta_line(session)
    if meta:
        lines.append(meta)
    return lines + ["", tables.row(COLUMNS), tables.separator(COLUMNS)]


def render_totals(totals: list[ToolTotals]) -> list[str]:
    def numbers(t: ToolTotals) -> list[str]:
        return [str(t.dispatches), f"{t.tokens:,}", str(t.failures), str(t.retries)]

    lines = [TOTALS_HEADING, tables.row(TOTAL_COLUMNS), tables.separator(TOTAL_COLUMNS)]
    lines += [tables.row([tables.escape(t.label), *numbers(t)]) for t in totals]
    lines.append(tables.row([f"**{cell}**" for cell in ["Total", *numbers(grand_total(totals))]]))
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
        marker = MARKER_RE.match(line)
        if marker:
            log.version = _version(int(marker.group(1)), path, number)
        elif line.startswith("## "):
            if line.startswith(SESSION_PREFIX):
                session = LogSession(stamp=line[len(SESSION_PREFIX) :].strip(), goal="")
                log.sessions.append(session)
                section = "session"
            else:
                section = "totals" if line == TOTALS_HEADING else None
        elif section == "session" and session is not None:
            _session_line(session, line, path, number)
        elif section == "totals" and line.startswith("|"):
            _totals_line(log, line)
    return log


def _version(version: int, path: str, number: int) -> int:
    """The log's format version; a newer one than this Maestro writes is refused."""
    if version > LOG_FORMAT:
        raise LogFormatError(
            f"the log is in format {version}, newer than this Maestro reads ({LOG_FORMAT}).",
            f"{UPGRADE}, or archive the log with `maestro archive`.",
            file=path,
            line=number,
        )
    return version


def _session_line(session: LogSession, line: str, path: str, number: int) -> None:
    """A session's metadata line or one of its table rows (header and separator skipped)."""
    if line.startswith("**"):
        _parse_meta(session, line)
    elif line.startswith("|"):
        cells = tables.split_row(line, breaks=True)
        if cells != list(COLUMNS) and not all(SEPARATOR_RE.match(c) for c in cells):
            session.rows.append(parse_row(cells, file=path, line=number))


def _totals_line(log: ParsedLog, line: str) -> None:
    """One row of the Totals table: a CLI's, or the Total."""
    cells = tables.split_row(line, breaks=True)
    if cells == list(TOTAL_COLUMNS) or all(SEPARATOR_RE.match(c) for c in cells) or len(cells) < 5:
        return
    label = cells[0].strip("*")
    entry = ToolTotals(from_display(label), *(_int(c) for c in cells[1:5]))
    if label == "Total":
        log.total = entry
    else:
        log.totals.append(entry)


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
    return _finish(lines, path, row)


def _lines(text: str) -> list[str]:
    if not text.strip():
        return [TITLE, MARKER]
    return text.splitlines()


def _finish(lines: list[str], path: str, added: LogRow | None = None) -> str:
    """The lines with their Totals. For a row ``added``: the Totals as written plus that
    row, so a row costs the same however long the log is. Otherwise (a new session, or a
    log without Totals) recomputed from every row: a person's edit of a row counts from
    the next run on."""
    written = _written_totals(lines) if added is not None else None
    if added is not None and written is not None:
        totals = compute_totals([added], written)
    else:
        totals = compute_totals(parse("\n".join(lines), path).rows())
    return "\n".join(_with_totals(lines, totals)) + "\n"


def _written_totals(lines: list[str]) -> list[ToolTotals] | None:
    """The CLIs' rows of the Totals table as written (None without one)."""
    at = _totals_start(lines)
    if at is None:
        return None
    log = ParsedLog()
    for line in lines[at + 1 :]:
        if not line.strip().startswith("|"):
            break
        _totals_line(log, line.strip())
    return log.totals if log.total is not None else None

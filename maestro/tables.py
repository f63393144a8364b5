"""Tables, written and read in one place: Markdown tables (the plan's execution log, the
execution log file, the report) and the plain aligned columns the CLI prints.

A Markdown cell holds one line: a ``|`` in it is written ``\\|``, and a backslash is
doubled only where it would otherwise escape (before ``\\`` or ``|``), so a person's
``C:\\tmp`` stays as typed. Newlines become ``<br>``. ``split_row`` undoes ``escape``:
``split_row(row([escape(c) for c in cells])) == cells`` for stripped one-line cells.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from maestro.formatting import Frame, inert, painted

_BACKSLASH = re.compile(r"\\(?=[\\|])")
_CELL_TOKEN = re.compile(r"\\[\\|]|\||[^\\|]+|\\")


def escape(text: str) -> str:
    """A cell on one line: ``|`` escaped, newlines as ``<br>``, stripped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _BACKSLASH.sub(r"\\\\", text).replace("|", "\\|").replace("\n", "<br>").strip()


def split_row(line: str, *, breaks: bool = False) -> list[str]:
    """``| a | b\\|c |`` -> ``["a", "b|c"]``: cells unescaped and stripped; with ``breaks``,
    ``<br>`` read back as a newline."""
    cells: list[str] = []
    cell: list[str] = []
    for token in _CELL_TOKEN.findall(line.strip().removeprefix("|")):
        if token == "|":
            cells.append("".join(cell).strip())
            cell = []
        else:
            cell.append(token[1] if len(token) == 2 and token[0] == "\\" else token)
    tail = "".join(cell).strip()
    if tail:
        cells.append(tail)
    return [c.replace("<br>", "\n") for c in cells] if breaks else cells


def row(cells: Sequence[str]) -> str:
    """``| a | b |`` from cells already escaped."""
    return "| " + " | ".join(cells) + " |"


def separator(names: Sequence[str]) -> str:
    """The line under a header, each column as wide as its name: ``|------|------|``."""
    return "|" + "|".join("-" * (len(name) + 2) for name in names) + "|"


def markdown(
    head: Sequence[str], rows: Sequence[Sequence[object]], *, empty: str = "-"
) -> list[str]:
    """A whole table: header, a ``|---|`` line, rows escaped (an empty cell shows ``empty``)."""
    lines = [row(head), "|" + "|".join("---" for _ in head) + "|"]
    return lines + [row([escape(str(cell)) or empty for cell in cells]) for cells in rows]


def aligned(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, status: int | None = None
) -> list[str]:
    """Plain aligned columns, two spaces apart; the last column is not padded. With
    ``status`` (a column of task statuses), each row's status is in its colour: the rows
    come back as ``Frame``s, their cells made inert first."""
    if status is not None:
        rows = [[inert(cell, one_line=True) for cell in cells] for cells in rows]
    widths = [len(h) for h in headers]
    for cells in rows:
        for i, cell in enumerate(cells):
            widths[i] = max(widths[i], len(cell))
    last = len(headers) - 1

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c if i == last else c.ljust(widths[i]) for i, c in enumerate(cells)
        ).rstrip()

    if status is None:
        return [line(headers), *(line(cells) for cells in rows)]
    start = sum(widths[:status]) + 2 * status
    return [line(headers), *(Frame(painted(line(cells), start, cells[status])) for cells in rows)]

"""How Maestro shows money, tokens, durations, paths and text it did not write, in one place.

Every command, the report, the live view and the execution log print these the same way;
the log's cells are also read back (``logfile.rows``), so change a form here only with
its parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

# C0 controls but tab and newline, DEL, and the C1 controls (a UTF-8 terminal may read
# U+009B as an escape sequence's start, as it reads ESC [).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def inert(text: str, *, one_line: bool = False) -> str:
    """``text`` safe to print on a terminal: each control character written as ``\\xNN``,
    so a mail subject that would set the window's title or clear the screen shows the
    codes it holds instead. Tabs and newlines stay, unless ``one_line``."""
    return (_LINE_CONTROLS if one_line else _CONTROLS).sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


# A terminal's escape sequences, whole: CSI (ESC [ or U+009B), OSC up to its BEL or ST,
# and the two-character ones (ESC 7, ESC M, ...).
_SEQUENCE = re.compile(
    "(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[ -~]?"
)
_BREAKS = re.compile("\r\n?|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def cleaned(text: str) -> str:
    """``text`` fit to keep (a spoke's answer, a command's output): the colour and cursor
    sequences a CLI or a test runner prints removed whole, other line breaks made
    newlines, and what control characters are left (but tab) dropped."""
    text = _BREAKS.sub("\n", _SEQUENCE.sub("", text))
    return _CONTROLS.sub("", text)


class Frame(str):
    """Text holding terminal codes Maestro wrote itself (the live view's cursor moves, a
    status word's colour) around content already made inert: the one kind of text
    printed as it is."""


def frame(lines: Iterable[str]) -> Frame:
    """Lines joined for a terminal: a ``Frame`` kept as it is, any other made inert."""
    return Frame("\n".join(line if isinstance(line, Frame) else inert(line) for line in lines))


# A task status's colour (SGR): done green, failed red, blocked yellow, running cyan.
_COLOURS = {"done": "32", "failed": "31", "blocked": "33", "running": "36"}


def colour_wanted(out: TextIO, env: Mapping[str, str]) -> bool:
    """Colour for a terminal only: never into a pipe or a file, under ``TERM=dumb``, or
    under ``NO_COLOR`` set to anything (https://no-color.org)."""
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def painted(line: str, start: int, word: str) -> str:
    """``line`` (already inert) with the status ``word`` found at ``start`` in its colour;
    as it is when that word has none or is not there (clipped off)."""
    code = _COLOURS.get(word)
    if not code or line[start : start + len(word)] != word:
        return line
    return f"{line[:start]}\x1b[{code}m{word}\x1b[0m{line[start + len(word) :]}"


def tokens_text(count: int | None) -> str:
    """``12,345 tokens``; empty when the count is unknown."""
    return f"{count:,} tokens" if count is not None else ""


def money_text(
    cost: float | None, estimated: bool = False, *, places: int = 4, unknown: str = "-"
) -> str:
    """``$0.0123``, ``~$0.0123`` when Maestro estimated it from its price table."""
    if cost is None:
        return unknown
    return f"{'~' if estimated else ''}${float(cost):.{places}f}"


def money_cell(cost: float, estimated: bool = False) -> str:
    """The log's short form: two to four decimals, trailing zeros dropped (``~$0.12``)."""
    text = f"{float(cost):.4f}".rstrip("0")
    text += "0" * (2 - len(text.split(".")[1]))
    return f"{'~' if estimated else ''}${text}"


def duration_text(seconds: float | None, *, unknown: str = "-") -> str:
    """``45s``, ``1m 05s``, ``2h 03m``: whole seconds, two units at most."""
    if seconds is None:
        return unknown
    whole = round(seconds)
    if whole >= 3600:
        return f"{whole // 3600}h {whole % 3600 // 60:02d}m"
    if whole >= 60:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole}s"


def duration_cell(seconds: float | None) -> str:
    """The log's form, exact to the second because it is read back: ``1h 02m 03s``."""
    if seconds is None:
        return "-"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def elapsed_text(seconds: float | None) -> str:
    """The live view's compact clock: ``12.3s``, ``1m05s``, ``2h03m``."""
    value = float(seconds or 0)
    if value < 60:
        return f"{value:.1f}s"
    minutes, secs = divmod(round(value), 60)
    return f"{minutes}m{secs:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def shown_path(path: Path, root: Path, *, home: Path | None = None, folder: bool = False) -> str:
    """A path as printed: relative to ``root`` (the project; ``folder`` adds a ``/``), else
    with ``~`` for ``home`` when given, else as it is."""
    if path.is_relative_to(root):
        rel = path.relative_to(root).as_posix()
        return rel + "/" if folder else rel
    if home is not None and path.is_relative_to(home):
        rel = path.relative_to(home).as_posix()
        return "~" if rel == "." else "~/" + rel
    return str(path)


def shown_url(url: str) -> str:
    """A URL with its path and query withheld: a Slack or Discord webhook's token is its
    path, so what is printed (`maestro config`, a log line) names only where it goes."""
    parts = urlsplit(url)
    hidden = "/…" if parts.path.strip("/") or parts.query else ""
    return (
        f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{hidden}"
    )


def one_line(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def key_path(parts: Iterable[str | int], whole: str) -> str:
    """Where in a document a value sits, as a reader writes it: ``tasks[0].depends``;
    ``whole`` names the document itself (an empty path)."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or whole

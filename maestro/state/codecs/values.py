"""How each kind of field value is written in the plan file, and read back.

A codec turns a field's source (the rest of its first line, and its continuation lines
with the item's indentation removed) into a *frozen* value (str, int, tuple, None: never
a mutable object, so the layout can keep a snapshot to compare against) and renders a
frozen value back to lines. ``check`` refuses values the format cannot hold, so that
``parse(render(plan)) == plan`` holds for every plan ``render`` accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from maestro.state.model import TASK_ID

# Characters that end a line for Python or for an editor but are not "\n": the file is
# split on "\n" only, so these could never come back the same.
_LINE_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_INT = re.compile(r"[0-9][0-9,]*")
_NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_COST = re.compile(
    r"(?:US)?\$?\s*(" + _NUMBER + r")\s*(\((?:estimate|estimated|est\.?)\))?", re.IGNORECASE
)
_USAGE = re.compile(
    r"([0-9][0-9,]*)\s*in\s*/\s*([0-9][0-9,]*)\s*out(?:\s*/\s*([0-9][0-9,]*)\s*cached)?",
    re.IGNORECASE,
)
_DEPENDS_NONE = {"", "none", "-", "\u2014", "n/a"}


class FieldError(ValueError):
    """A value that does not parse or cannot be written. ``text`` follows "<Task 3> has"."""

    def __init__(self, text: str, fix: str) -> None:
        super().__init__(text)
        self.text = text
        self.fix = fix


def preview(value: str) -> str:
    first = value.strip().split("\n", 1)[0]
    return first if len(first) <= 60 else first[:57] + "..."


# --- lines and text -------------------------------------------------------------------


def check_line(label: str, value: object, *, empty_ok: bool = False) -> str:
    """A value that sits on one line: a string, no control characters, no outer spaces."""
    if not isinstance(value, str):
        raise FieldError(f"a {label} that is not text ({value!r})", f"set {label} to a string.")
    if not value and empty_ok:
        return value
    if not value or value != value.strip() or _CONTROL.search(value):
        raise FieldError(
            f'an invalid {label} "{preview(value)}"',
            f"write {label} as one line of text without control characters or outer spaces.",
        )
    return value


def check_text(label: str, value: object) -> str:
    """A value that may span lines: no control characters other than newline and tab."""
    if not isinstance(value, str) or not value or value != value.strip():
        raise FieldError(
            f"an empty or untrimmed {label}",
            f"give {label} some text, without leading or trailing blank space.",
        )
    if _LINE_BREAKS.search(value) or re.search("[\x00-\x08\x0e-\x1f\x7f]", value):
        raise FieldError(
            f"a {label} with control characters",
            f"remove carriage returns and other control characters from {label}.",
        )
    return value


def single(label: str, first: str, rest: Sequence[str]) -> str:
    if any(line.strip() for line in rest):
        raise FieldError(f"a {label} field that spans several lines", f"write {label} on one line.")
    return first.strip()


def join_text(first: str, rest: Sequence[str]) -> str:
    return "\n".join([first, *rest]).strip()


def text_lines(value: str) -> list[str]:
    return value.split("\n")


# --- numbers, money, tokens -----------------------------------------------------------


def parse_int(label: str, value: str, *, minimum: int = 0) -> int:
    negative = value.startswith("-") and minimum < 0
    digits = value[1:] if negative else value
    if not _INT.fullmatch(digits):
        raise FieldError(
            f'an unreadable {label} "{preview(value)}"', f"write {label} as a whole number."
        )
    number = -int(digits.replace(",", "")) if negative else int(digits.replace(",", ""))
    if number < minimum:
        raise FieldError(
            f"a {label} below {minimum}", f"write {label} as a number from {minimum} up."
        )
    return number


def check_int(label: str, value: object, *, minimum: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise FieldError(
            f"an invalid {label} ({value!r})", f"set {label} to a whole number from {minimum} up."
        )
    return value


def format_cost(cost: float) -> str:
    text = repr(float(cost) + 0.0)  # + 0.0 turns -0.0 into 0.0
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return "$" + text


def parse_cost(label: str, value: str) -> tuple[float, bool]:
    m = _COST.fullmatch(value.strip())
    if not m:
        raise FieldError(
            f'an unreadable {label} "{preview(value)}"',
            f"write {label} in dollars, e.g. `$0.55`, with ` (estimate)` when it was estimated.",
        )
    return float(m.group(1).replace(",", "")), m.group(2) is not None


def check_cost(label: str, cost: object, estimated: object) -> None:
    if cost is None:
        if estimated:
            raise FieldError(
                f"an estimated {label} without an amount",
                f"set {label} or clear the estimate flag.",
            )
        return
    if (
        not isinstance(cost, (int, float))
        or isinstance(cost, bool)
        or not cost >= 0
        or cost == float("inf")
    ):
        raise FieldError(
            f"an invalid {label} ({cost!r})", f"set {label} to a dollar amount of 0 or more."
        )


def format_usage(usage: tuple[int, int, int]) -> str:
    text = f"{usage[0]:,} in / {usage[1]:,} out"
    return text + (f" / {usage[2]:,} cached" if usage[2] else "")


def parse_usage(value: str) -> tuple[int, int, int]:
    m = _USAGE.fullmatch(value.strip())
    if not m:
        raise FieldError(
            f'an unreadable Tokens value "{preview(value)}"',
            "write Tokens as `12,000 in / 800 out`, optionally followed by `/ 3,000 cached`.",
        )
    fresh, output, cached = (int((g or "0").replace(",", "")) for g in m.groups())
    return fresh, output, cached


# --- times ----------------------------------------------------------------------------


def check_iso(label: str, value: object) -> str:
    text = check_line(label, value)
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise FieldError(
            f'an unreadable {label} time "{preview(text)}"',
            f"write {label} as an ISO 8601 UTC time, e.g. 2026-11-21T12:00:00Z.",
        ) from None
    return text


def check_stamp(label: str, value: object) -> str:
    text = check_line(label, value)
    try:
        datetime.strptime(text, "%Y-%m-%d %H:%M UTC")
    except ValueError:
        raise FieldError(
            f'an unreadable {label} time "{preview(text)}"',
            f"write the {label} time as YYYY-MM-DD HH:MM UTC, e.g. 2026-11-21 12:00 UTC.",
        ) from None
    return text


# --- task ids -------------------------------------------------------------------------


def parse_ids(value: str) -> tuple[str, ...]:
    text = value.strip().strip("[]").strip()
    if text.lower() in _DEPENDS_NONE:
        return ()
    ids = []
    for part in re.split(r"[,\s]+", text):
        if not part or part.lower() in ("and", "task"):
            continue
        part = part.strip("#`")
        if not TASK_ID.fullmatch(part):
            raise FieldError(
                f'an unreadable Depends value "{preview(value)}"',
                "list task ids separated by commas, e.g. `1, 2.1`, or write `none`.",
            )
        ids.append(part)
    return tuple(ids)


def check_id(label: str, value: object) -> str:
    if not isinstance(value, str) or not TASK_ID.fullmatch(value):
        raise FieldError(
            f"an invalid {label} ({value!r})",
            "use task ids made of numbers and dots, e.g. 3 or 3.1.",
        )
    return value


# --- inline code ----------------------------------------------------------------------


def code_span(text: str) -> str:
    """``text`` as a Markdown code span that reads back as exactly ``text``."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    while len(fence) in runs:
        fence += "`"
    stripped_by_reader = text.startswith(" ") and text.endswith(" ") and text.strip(" ")
    pad = " " if text.startswith("`") or text.endswith("`") or stripped_by_reader else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_TICKS = re.compile(r"`+")


def _read_span(text: str, pos: int) -> tuple[str, int] | None:
    """The code span starting at ``pos`` (CommonMark rules) and the offset after it."""
    m = _TICKS.match(text, pos)
    if not m:
        return None
    size = len(m.group())
    for close in _TICKS.finditer(text, m.end()):
        if len(close.group()) == size:
            content = text[m.end() : close.start()]
            if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                content = content[1:-1]
            return content, close.end()
    return None


def parse_code(value: str) -> str:
    """One code span, or plain text when the value is not a single code span."""
    text = value.strip()
    span = _read_span(text, 0)
    if span and span[1] == len(text):
        return span[0]
    return text


def parse_codes(label: str, value: str) -> tuple[str, ...]:
    text = value.strip()
    if text.lower() in _DEPENDS_NONE:
        return ()
    if "`" not in text:
        return tuple(p.strip() for p in text.split(",") if p.strip())
    items, pos = [], 0
    while pos < len(text):
        if text[pos] in ", \t":
            pos += 1
            continue
        span = _read_span(text, pos)
        if span is None:
            raise FieldError(
                f'an unreadable {label} value "{preview(value)}"',
                f"write {label} as code spans separated by commas, e.g. `src/a.py`, `src/b.py`.",
            )
        items.append(span[0])
        pos = span[1]
    return tuple(items)


def check_code(label: str, value: object) -> str:
    if not isinstance(value, str) or not value or _CONTROL.search(value):
        raise FieldError(
            f"an invalid {label} ({value!r})",
            f"give {label} non-empty text on one line without control characters.",
        )
    return value


def format_int(value: int | None) -> str:
    return "" if value is None else f"{value:,}"

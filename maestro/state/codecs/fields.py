"""Field codecs: one class per way a bullet field's value is written.

``parse(first, rest)`` reads the text after the label (``first``) and the continuation
lines with the item's indentation removed (``rest``); ``render(value)`` returns the value
as lines, the first going after the label ("" for values written as a nested block) and
the rest indented under it. Values are frozen (see values.py). The codecs for values
written as a nested list are in nested.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from maestro.state.codecs import values as v
from maestro.state.codecs.values import FieldError

_ITEM = re.compile(r"( *)([-+*]|[0-9]{1,9}[.)])(?:([ \t]+)(.*)|$)")


def indent_width(line: str) -> int:
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def dedent(line: str, width: int) -> str:
    """``line`` without its first ``width`` columns of indentation (fewer if it has fewer)."""
    spaces = len(line) - len(line.lstrip(" "))
    if spaces >= width:
        return line[width:]
    if line[spaces : spaces + 1] != "\t":
        return line[spaces:]
    body = line.lstrip(" \t")
    lead = indent_width(line)
    return " " * max(lead - width, 0) + body


def item_start(line: str) -> tuple[int, int, str] | None:
    """(marker indent, content indent, text after the marker) if ``line`` starts an item."""
    if line[:2] == "- " and line[2:3] not in (" ", "\t"):
        return 0, 2, line[2:].strip()  # the common case, without the regex
    m = _ITEM.match(line)
    if not m:
        return None
    marker_end = len(m.group(1)) + len(m.group(2))
    spaces = m.group(3) or ""
    width = indent_width(m.group(1) + m.group(2) + spaces) - marker_end if spaces else 1
    content = marker_end + (width if 1 <= width <= 4 else 1)
    return len(m.group(1)), content, (m.group(4) or "").strip()


def nested(lines: Sequence[str]) -> list[str]:
    """A nested block's lines: nothing after the label, each line under it."""
    return ["", *lines]


class Codec:
    """How one field's value is read and written. Subclasses override what differs."""

    default: Any = None

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        raise NotImplementedError

    def render(self, value: Any) -> list[str]:
        return [str(value)]

    def check(self, label: str, value: Any) -> None:
        """Raise FieldError if ``value`` cannot be written and read back unchanged."""

    def omit(self, value: Any) -> bool:
        return bool(value == self.default)


class Line(Codec):
    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        value = v.single(label, first, rest)
        return v.check_line(label, value) if value else None

    def check(self, label: str, value: Any) -> None:
        if value is not None:
            v.check_line(label, value)


class Choice(Codec):
    def __init__(self, choices: Sequence[str], default: str | None = None) -> None:
        # Kept as given, not copied: the roster's list of CLIs grows when one registers.
        self.choices = choices
        self.default = default

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        value = v.single(label, first, rest)
        if self.default is None and value.lower() in ("", "none", "-"):
            return None
        return self._known(label, value.lower())

    def _known(self, label: str, value: Any) -> Any:
        if value not in self.choices:
            shown = v.preview(value) if isinstance(value, str) else repr(value)
            raise FieldError(
                f'unknown {label.lower()} "{shown}"', f"use one of {', '.join(self.choices)}."
            )
        return value

    def check(self, label: str, value: Any) -> None:
        if value is not None or self.default is not None:
            self._known(label, value)


class Iso(Line):
    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        value = v.single(label, first, rest)
        return v.check_iso(label, value) if value else None

    def check(self, label: str, value: Any) -> None:
        if value is not None:
            v.check_iso(label, value)


class Int(Codec):
    def __init__(self, minimum: int = 0, default: int | None = None) -> None:
        self.minimum = minimum
        self.default = default

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.parse_int(label, v.single(label, first, rest), minimum=self.minimum)

    def check(self, label: str, value: Any) -> None:
        if value is not None or self.default is not None:
            v.check_int(label, value, minimum=self.minimum)


class YesNo(Codec):
    default = True

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        value = v.single(label, first, rest).lower()
        if value in ("yes", "true"):
            return True
        if value in ("no", "false"):
            return False
        raise FieldError(
            f'an unreadable {label} value "{v.preview(value)}"', f"write {label} as yes or no."
        )

    def render(self, value: Any) -> list[str]:
        return ["yes" if value else "no"]

    def check(self, label: str, value: Any) -> None:
        if not isinstance(value, bool):
            raise FieldError(
                f"a {label} that is not true or false ({value!r})", f"set {label} to a boolean."
            )


class Text(Codec):
    """Free text; the first line after the label, later lines indented under it."""

    def __init__(self, block: bool = False) -> None:
        self.block = block

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.join_text(first, rest) or None

    def render(self, value: Any) -> list[str]:
        lines = v.text_lines(value)
        return nested(lines) if self.block else lines

    def check(self, label: str, value: Any) -> None:
        if value is not None:
            v.check_text(label, value)


class Ids(Codec):
    default = ()

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.parse_ids(v.single(label, first, rest))

    def render(self, value: Any) -> list[str]:
        return [", ".join(value)]

    def check(self, label: str, value: Any) -> None:
        for item in value:
            v.check_id(label, item)


class Id(Codec):
    """One task id (a subtask's Parent)."""

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        value = v.single(label, first, rest)
        if value.lower() in ("", "none", "-"):
            return None
        return v.check_id(label.lower(), value)

    def check(self, label: str, value: Any) -> None:
        if value is not None:
            v.check_id(label.lower(), value)


class Codes(Codec):
    default = ()

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.parse_codes(label, v.single(label, first, rest))

    def render(self, value: Any) -> list[str]:
        return [", ".join(v.code_span(item) for item in value)]

    def check(self, label: str, value: Any) -> None:
        for item in value:
            v.check_line(label, v.check_code(label, item))


class Code(Codec):
    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.parse_code(v.single(label, first, rest)) or None

    def render(self, value: Any) -> list[str]:
        return [v.code_span(value)]

    def check(self, label: str, value: Any) -> None:
        if value is not None:
            v.check_line(label, v.check_code(label, value))


class Usage(Codec):
    default = (0, 0, 0)

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.parse_usage(v.single(label, first, rest))

    def render(self, value: Any) -> list[str]:
        return [v.format_usage(value)]

    def check(self, label: str, value: Any) -> None:
        for number in value:
            v.check_int("token count", number)


class Cost(Codec):
    """(dollars or None, estimated): the model's ``cost`` and ``cost_estimated``."""

    default = (None, False)

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        return v.parse_cost(label, v.single(label, first, rest))

    def render(self, value: Any) -> list[str]:
        return [v.format_cost(value[0]) + (" (estimate)" if value[1] else "")]

    def check(self, label: str, value: Any) -> None:
        v.check_cost(label, value[0], value[1])

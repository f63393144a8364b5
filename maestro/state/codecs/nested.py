"""Codecs for values written as a nested list under the label: criteria, findings, the
receipt, and verbatim text in a code fence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from maestro.state.codecs import values as v
from maestro.state.codecs.fields import Code, Codec, Codes, dedent, indent_width, item_start, nested
from maestro.state.codecs.values import FieldError

_SEVERITY = re.compile(r"\[(critical|major|minor|note)\]\s+", re.IGNORECASE)
_FINDING_TASK = re.compile(r"Task\s+([0-9]+(?:\.[0-9]+)*):\s+", re.IGNORECASE)


def split_items(label: str, lines: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The items of a nested list: (first line text, continuation lines dedented)."""
    items: list[tuple[str, list[str]]] = []
    content = 0
    for line in lines:
        if not line.strip():
            if items:
                items[-1][1].append(dedent(line, content))
            continue
        start = item_start(line)
        if start and (not items or indent_width(line) < content):
            content = start[1]
            items.append((start[2], []))
        elif not items:
            raise FieldError(
                f'a {label} field with text outside its list "{v.preview(line)}"',
                f"write each entry of {label} as a nested `- ` item.",
            )
        else:
            items[-1][1].append(dedent(line, content))
    return items


def bullet(text: str) -> list[str]:
    first, *rest = text.split("\n")
    return [f"- {first}", *(f"  {line}" if line else "" for line in rest)]


class Items(Codec):
    """A nested list of text items (Criteria)."""

    default = ()

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        items = [v.join_text(f, r) for f, r in split_items(label, rest)]
        if first.strip():
            items.insert(0, first.strip())
        return tuple(i for i in items if i)

    def render(self, value: Any) -> list[str]:
        return nested([line for item in value for line in bullet(item)])

    def check(self, label: str, value: Any) -> None:
        for item in value:
            v.check_text(label, item)


class Findings(Codec):
    """Nested ``- [severity] Task N: text`` items, as (text, task, severity) tuples.

    ``none`` after the label is an empty list, so a category that was recorded empty
    stays distinct from one never recorded.
    """

    def __init__(self, default: Any = None) -> None:
        self.default = default

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        if first.strip() and first.strip().lower() != "none":
            raise FieldError(
                f'a {label} field with text after its label "{v.preview(first)}"',
                f"write each finding of {label} as a nested `- ` item, or `none`.",
            )
        return tuple(self._finding(v.join_text(f, r)) for f, r in split_items(label, rest))

    @staticmethod
    def _finding(text: str) -> tuple[str, str | None, str | None]:
        severity = task = None
        m = _SEVERITY.match(text)
        if m:
            severity, text = m.group(1).lower(), text[m.end() :]
        m = _FINDING_TASK.match(text)
        if m:
            task, text = m.group(1), text[m.end() :]
        text = text.removeprefix("\\")
        return text, task, severity

    def render(self, value: Any) -> list[str]:
        if not value:
            return ["none"]
        lines = []
        for text, task, severity in value:
            if text.startswith("\\") or _SEVERITY.match(text) or _FINDING_TASK.match(text):
                text = "\\" + text
            prefix = (f"[{severity}] " if severity else "") + (f"Task {task}: " if task else "")
            lines += bullet(prefix + text)
        return nested(lines)

    def check(self, label: str, value: Any) -> None:
        if value is None:
            return
        for text, task, severity in value:
            v.check_text(f"{label} finding", text)
            if task is not None:
                v.check_id(f"{label} finding's task", task)
            if severity is not None and severity not in ("critical", "major", "minor", "note"):
                raise FieldError(
                    f'a finding with unknown severity "{severity}"',
                    "use critical, major, minor or note.",
                )


_RECEIPT = ("Diff", "Changed", "Validation", "Validation exit", "Commit", "Diff SHA", "Change")


class Receipt(Codec):
    """Nested ``- Label: value`` items: (diff_stat, files, validation, exit, commit, sha,
    change)."""

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        if first.strip():
            raise FieldError(
                f"a {label} field with text after its label",
                f"write {label}'s parts as nested items.",
            )
        parts: list[Any] = ["", (), None, None, None, None, None]
        for text, more in split_items(label, rest):
            name, _, value = text.partition(":")
            key = name.strip().lower()
            index = next((i for i, n in enumerate(_RECEIPT) if n.lower() == key), None)
            if index is None or not _:
                raise FieldError(
                    f'a {label} entry "{v.preview(text)}" that is not one of {", ".join(_RECEIPT)}',
                    f"write {label}'s parts as `- Diff: ...`, `- Changed: ...` and so on.",
                )
            value = v.single(name.strip(), value, more)
            if index == 1:
                parts[1] = v.parse_codes("Changed", value)
            elif index == 2:
                parts[2] = v.parse_code(value) or None
            elif index == 3:
                parts[3] = v.parse_int("Validation exit", value, minimum=-(2**31))
            elif index == 0:
                parts[0] = value
            else:
                parts[index] = value or None
        return tuple(parts)

    def render(self, value: Any) -> list[str]:
        diff, files, validation, exit_code, commit, sha, change = value
        lines = []
        if diff:
            lines.append(f"- Diff: {diff}")
        if files:
            lines.append(f"- Changed: {Codes().render(files)[0]}")
        if validation is not None:
            lines.append(f"- Validation: {v.code_span(validation)}")
        if exit_code is not None:
            lines.append(f"- Validation exit: {exit_code}")
        if commit is not None:
            lines.append(f"- Commit: {commit}")
        if sha is not None:
            lines.append(f"- Diff SHA: {sha}")
        if change is not None:
            lines.append(f"- Change: {change}")
        return nested(lines)

    def check(self, label: str, value: Any) -> None:
        if value is None:
            return
        diff, files, validation, exit_code, commit, sha, change = value
        v.check_line("Receipt diff", diff, empty_ok=True)
        Codes().check("Receipt files", files)
        Code().check("Receipt validation", validation)
        if exit_code is not None:
            v.check_int("Receipt validation exit", exit_code, minimum=-(2**31))
        for name, text in (("commit", commit), ("diff SHA", sha), ("change", change)):
            if text is not None:
                v.check_line(f"Receipt {name}", text)


class Fence(Codec):
    """Verbatim text in a fenced code block longer than any backtick run inside it."""

    def parse(self, label: str, first: str, rest: Sequence[str]) -> Any:
        lines = list(rest)
        while lines and not lines[0].strip():
            lines.pop(0)
        m = re.match(r" {0,3}(`{3,}|~{3,})", lines[0]) if lines and not first.strip() else None
        if not m:
            raise FieldError(
                f"a {label} field that is not a fenced code block",
                f"put {label}'s text between ```` fences, indented under the label.",
            )
        fence = m.group(1)
        closing = re.compile(r" {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*")
        for end in range(1, len(lines)):
            if closing.fullmatch(lines[end]):
                if any(line.strip() for line in lines[end + 1 :]):
                    raise FieldError(
                        f"a {label} field with text after its closing fence",
                        f"move that text out of {label}, below the task's fields.",
                    )
                return "\n".join(lines[1:end])
        raise FieldError(
            f"a {label} block without its closing fence",
            f"end {label}'s text with a line `{fence}`.",
        )

    def render(self, value: Any) -> list[str]:
        fence = "`" * max(4, max((len(r) + 1 for r in re.findall(r"`+", value)), default=0))
        return nested([fence + "text", *v.text_lines(value), fence])

    def check(self, label: str, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, str) or v._LINE_BREAKS.search(value) or "\x00" in value:
            raise FieldError(
                f"a {label} with carriage returns or NUL characters",
                f"normalise {label}'s line endings to \\n before storing it.",
            )

"""Tasks, challenges and reviews: a ``### Word id: ...`` heading over bullet fields.

One generic reader and writer serve all three; a ``Kind`` lists a record's heading form
and its fields in canonical order. Unknown list items and paragraphs under a heading are
kept as text in the record's layout, in place.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from maestro.errors import PlanError
from maestro.state.codecs.fields import Codec, dedent, indent_width, item_start
from maestro.state.codecs.values import FieldError
from maestro.state.markdown.layout import FieldPiece, RecordLayout, TextPiece
from maestro.state.model import copy_of

_LABEL = re.compile(
    r"\*\*([^*:\n]{1,40}?):\*\*|\*\*([^*:\n]{1,40}?)\*\*[ \t]*:|([A-Za-z][A-Za-z ]{0,30}?):(?=[ \t]|$)"
)


@dataclass(frozen=True)
class Spec:
    """One bullet field: its label, codec, and how it maps onto the model object."""

    name: str
    label: str
    codec: Codec
    get: Callable[[Any], Any]
    set: Callable[[Any, Any], None]
    always: bool = False  # written even when it has its default value
    required: bool = False  # a record without it does not parse

    def omit(self, value: Any) -> bool:
        return not (self.always or self.required) and self.codec.omit(value)

    def line(self, value: Any, bullet: str = "- ") -> str:
        first, *rest = self.codec.render(value)
        head = f"{bullet}**{self.label}:**" + (f" {first}" if first else "")
        pad = " " * len(bullet)
        return "\n".join([head, *(pad + line if line else "" for line in rest)]) + "\n"

    def rewrite(self, piece: FieldPiece, value: Any) -> str:
        """The field's new text, keeping the person's marker and label where it can."""
        lines = self.codec.render(value)
        if not piece.stale and len(lines) == 1 and lines[0] and piece.body.count("\n") == 1:
            return piece.prefix + lines[0] + "\n"
        return self.line(value, piece.bullet)


@dataclass
class Kind:
    """A record type: ``word`` (Task), heading pattern, fields, and constructors."""

    word: str
    heading_re: re.Pattern[str]
    heading_fix: str
    specs: tuple[Spec, ...]
    make: Callable[[tuple[Any, ...]], Any]  # heading values -> new object
    head: Callable[[Any], tuple[Any, ...]]  # object -> heading values
    heading_line: Callable[[Any], str]
    check_head: Callable[[Any], None]
    # Format version -> {old label: spec reading it}; the upgrade step normalises the value.
    aliases: dict[int, dict[str, Spec]]

    def __post_init__(self) -> None:
        self.by_label = {s.label.lower(): s for s in self.specs}
        self.by_name = {s.name: s for s in self.specs}
        self.order = {s.name: i for i, s in enumerate(self.specs)}

    def title(self, obj_or_id: Any) -> str:
        return f"{self.word} {getattr(obj_or_id, 'id', obj_or_id)}"


# --- reading ----------------------------------------------------------------------------


def split_list(raw: str) -> list[tuple[int, list[str], tuple[int, int, str]]]:
    """The top-level items of a list block: (line offset in the block, lines, item start)."""
    items: list[tuple[int, list[str], tuple[int, int, str]]] = []
    content = 0
    for offset, line in enumerate(raw[:-1].split("\n")):
        body = line.lstrip(" ")
        # Most lines continue an item: indented at least to its content, or blank.
        if items and (not body or len(line) - len(body) >= content):
            items[-1][1].append(line)
            continue
        start = item_start(line) if body[:1] in "-*+0123456789" else None
        if start and (not items or indent_width(line) < content):
            content = start[1]
            items.append((offset, [line], start))
        elif items:
            items[-1][1].append(line)
        else:
            return []
    return items


class RecordReader:
    def __init__(self, kind: Kind, path: str, version: int) -> None:
        self.kind = kind
        self.path = path
        self.aliases = kind.aliases.get(version, {})
        self._labels: dict[
            tuple[str, bool], tuple[Spec | None, bool]
        ] = {}  # (label, bold) -> field

    def error(self, line: int, message: str, fix: str) -> PlanError:
        return PlanError(message, fix, file=self.path, line=line)

    def read(self, text: str, blocks: Sequence[Any], start: int, end: int) -> Any:
        heading = blocks[0]
        raw = text[heading.start : heading.end]
        first, _, extra = raw.partition("\n")
        m = self.kind.heading_re.fullmatch(first.strip())
        if not m:
            raise self.error(
                heading.line,
                f'"{first.strip()}" is not a valid {self.kind.word.lower()} heading.',
                self.kind.heading_fix,
            )
        obj = self.kind.make(m.groups())
        name = self.kind.title(obj)
        try:
            self.kind.check_head(obj)
        except FieldError as exc:
            raise self.error(heading.line, f"{name} has {exc.text}.", exc.fix) from None
        pieces: list[FieldPiece | TextPiece] = []
        if extra:
            pieces.append(TextPiece(extra))
        seen: dict[str, int] = {}
        for block in blocks[1:]:
            raw = text[block.start : block.end]
            if block.kind != "list":
                pieces.append(TextPiece(raw))
                continue
            items = split_list(raw)
            if len(items) != block.items:
                raise self.error(
                    block.line,
                    f"{name} has a list that could not be read item by item.",
                    "start each field with `- ` at the left margin and indent its "
                    "continuation lines by two spaces.",
                )
            for offset, lines, item in items:
                pieces.append(self._item(obj, name, lines, item, block.line + offset, seen))
        for spec in self.kind.specs:
            if spec.required and spec.name not in seen:
                raise self.error(
                    heading.line,
                    f"{name} has no {spec.label} field.",
                    f"add `- **{spec.label}:** ...` under its heading.",
                )
        obj.layout = RecordLayout(
            first + "\n", self.kind.head(obj), _merge_text(pieces), heading.line, start, end
        )
        return obj

    def _item(
        self,
        obj: Any,
        name: str,
        lines: list[str],
        item: tuple[int, int, str],
        line_no: int,
        seen: dict[str, int],
    ) -> Any:
        count = len(lines)
        while count > 1 and not lines[count - 1].strip():
            count -= 1
        body = "\n".join(lines[:count]) + "\n" if count > 1 else lines[0] + "\n"
        gap = "\n".join(lines[count:]) + "\n" if count < len(lines) else ""
        _, content, after = item
        m = _LABEL.match(after)
        if not m:
            return TextPiece(body + gap)
        key = (m.group(1) or m.group(2) or m.group(3), m.group(3) is None)
        known = self._labels.get(key)
        if known is None:
            known = self._labels[key] = self._label(*key, name, line_no)
        spec, stale = known
        if spec is None:
            return TextPiece(body + gap)
        if spec.name in seen:
            raise self.error(
                line_no,
                f"{name} has two {spec.label} fields (the first at line {seen[spec.name]}).",
                f"keep one {spec.label} line.",
            )
        seen[spec.name] = line_no
        rest = [dedent(line, content) for line in lines[1:count]]
        first = after[m.end() :].strip()
        try:
            value = spec.codec.parse(spec.label, first, rest)
        except FieldError as exc:
            raise self.error(line_no, f"{name} has {exc.text}.", exc.fix) from None
        spec.set(obj, value)
        head = lines[0].rstrip()
        prefix = head[: len(head) - len(first)] if first else head + " "
        # Fields written anew use the item's marker and content column (so what follows the
        # list reads as before), as a bullet: an ordered one cannot start a list after text.
        marker = lines[0][item[0]] if lines[0][item[0]] in "-*+" else "-"
        bullet = lines[0][: item[0]] + marker + " " * (content - item[0] - 1)
        return FieldPiece(spec.name, body, gap, value, line_no, prefix, bullet, stale)

    def _label(self, raw: str, bold: bool, name: str, line_no: int) -> tuple[Spec | None, bool]:
        """The field a label names (and whether it is an older format's name for it)."""
        label = " ".join(raw.split()).lower()
        spec = self.kind.by_label.get(label)
        if spec is not None:
            return spec, False
        if label in self.aliases:
            return self.aliases[label], True
        if bold:
            self._unknown(name, label, line_no)
        return None, False

    def _unknown(self, name: str, label: str, line_no: int) -> None:
        labels = list(self.kind.by_label)
        close = difflib.get_close_matches(label, labels, n=1, cutoff=0.75)
        if close:
            spec = self.kind.by_label[close[0]]
            raise self.error(
                line_no,
                f'{name} has an unknown field "{label}".',
                f"did you mean {spec.label}? Write `- **{spec.label}:** ...`.",
            )


def _merge_text(pieces: list[FieldPiece | TextPiece]) -> list[FieldPiece | TextPiece]:
    merged: list[FieldPiece | TextPiece] = []
    for piece in pieces:
        if isinstance(piece, TextPiece) and merged and isinstance(merged[-1], TextPiece):
            merged[-1] = TextPiece(merged[-1].text + piece.text)
        else:
            merged.append(piece)
    return merged


# --- writing ----------------------------------------------------------------------------


def check_record(kind: Kind, obj: Any, specs: Sequence[Spec] | None = None) -> None:
    """Raise FieldError (prefixed by the caller) if a field cannot be written."""
    kind.check_head(obj)
    for spec in specs if specs is not None else kind.specs:
        value = spec.get(obj)
        if spec.required and value in (None, ""):
            raise FieldError(f"no {spec.label}", f"set {spec.label}.")
        spec.codec.check(spec.label, value)


def render_record(kind: Kind, obj: Any, *, frozen: bool = False) -> tuple[str, bool]:
    """The record's text (its layout with changed fields rewritten, or canonical text), and
    whether new fields went in among the person's text with no field list to join (then
    the caller reads the result back to be sure they stay fields).

    Raises FieldError for a value the format cannot hold.
    """
    layout = obj.layout if isinstance(obj.layout, RecordLayout) else None
    if layout is None:
        return _canonical(kind, obj), False
    last = layout.rendered
    # ``frozen``: records are never changed once rendered (a PlanStore's own), so the same
    # object has the same text; comparing the values of 2,000 tasks instead was a third
    # of a run's own CPU at that size.
    if last is not None and ((frozen and last[0] is obj) or last[1] == obj):
        return last[2], last[3]
    text, bare = _laid_out(kind, obj, layout)
    layout.rendered = (obj, copy_of(obj), text, bare)
    return text, bare


def _laid_out(kind: Kind, obj: Any, layout: RecordLayout) -> tuple[str, bool]:
    out = [_heading(kind, obj, layout)]
    fields = [p for p in layout.pieces if isinstance(p, FieldPiece)]
    added = _added_fields(kind, obj, fields)
    bare = not fields and None in added
    if bare:
        out += added.pop(None)
        # A blank line after the new list, so what follows (a note, or the next section
        # when the record was a bare heading) does not become part of its last item.
        first = layout.pieces[0] if layout.pieces else None  # no fields: a TextPiece if any
        following = first.text if isinstance(first, TextPiece) else ""
        if not following.startswith("\n"):
            out.append("\n")
    for piece in layout.pieces:
        if isinstance(piece, TextPiece):
            out.append(piece.text)
        else:
            if piece is fields[0]:
                out += added.pop(None, [])
            out += _field_text(kind, obj, piece)
            out += added.pop(piece.name, [])
            out.append(piece.gap)
    return "".join(out), bare


def _canonical(kind: Kind, obj: Any) -> str:
    """A record written from scratch: its heading and every field not left out."""
    check_record(kind, obj)
    parts = [kind.heading_line(obj)]
    for spec in kind.specs:
        value = spec.get(obj)
        if not spec.omit(value):
            parts.append(spec.line(value))
    return "".join(parts)


def _heading(kind: Kind, obj: Any, layout: RecordLayout) -> str:
    """The person's heading line while what it says is unchanged, else a new one."""
    if kind.head(obj) == layout.head:
        return layout.heading
    kind.check_head(obj)
    return kind.heading_line(obj)


def _added_fields(kind: Kind, obj: Any, fields: list[FieldPiece]) -> dict[str | None, list[str]]:
    """The lines of fields the record now has and its text has not, keyed by the field
    they follow in canonical order (None: before the first field), each with the bullet
    of its neighbours."""
    present = {p.name for p in fields}
    added: dict[str | None, list[str]] = {}
    for spec in kind.specs:
        if spec.name in present:
            continue
        value = spec.get(obj)
        if spec.omit(value) or (not spec.required and value == spec.codec.default):
            continue
        check_record(kind, obj, [spec])
        anchor = next(
            (p.name for p in reversed(fields) if kind.order[p.name] < kind.order[spec.name]),
            None,
        )
        bullet = next(
            (p.bullet for p in fields if p.name == anchor), fields[0].bullet if fields else "- "
        )
        added.setdefault(anchor, []).append(spec.line(value, bullet))
    return added


def _field_text(kind: Kind, obj: Any, piece: FieldPiece) -> list[str]:
    """A field as the person wrote it while its value is unchanged, else rewritten (or
    nothing, for a value now left out)."""
    spec = kind.by_name[piece.name]
    value = spec.get(obj)
    if value == piece.value and not piece.stale:
        return [piece.body]
    if spec.omit(value):
        return []
    check_record(kind, obj, [spec])
    return [spec.rewrite(piece, value)]

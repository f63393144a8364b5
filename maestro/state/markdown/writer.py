"""Writing `.ai/MAESTRO.md`: a Plan back to text, through its layout when it has one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from maestro.errors import PlanError
from maestro.state.codecs import values as v
from maestro.state.codecs.values import FieldError
from maestro.state.markdown import sections as s
from maestro.state.markdown.kinds import KINDS
from maestro.state.markdown.layout import Chunk, PlanLayout, RecordLayout
from maestro.state.markdown.reader import DocumentReader, dependency_problem, unclosed_error
from maestro.state.markdown.records import render_record
from maestro.state.model import FORMAT_VERSION, Plan, Task


@dataclass
class Rendered:
    """A plan as the file's bytes, joined from its parts as the file holds them (its line
    endings, byte-order mark and final newline), with the part that holds each laid-out
    task's record (``tasks``: id -> index in ``parts``; empty when the text was read
    back, see ``render_task``)."""

    plan: Plan
    data: bytes
    parts: list[bytes]
    tasks: dict[str, int]


class DocumentWriter:
    def __init__(self, plan: Plan, path: str, *, frozen: bool = False) -> None:
        self.plan = plan
        self.path = path
        self.frozen = frozen  # see render_plan
        self.layout = plan.layout if isinstance(plan.layout, PlanLayout) else None
        self.out: list[str] = []
        self.places: dict[str, int] = {}  # see Rendered.tasks
        self.prev_end: int | None = None
        self.after_marker = False
        # New text placed next to the person's text: an unclosed code fence or comment at
        # the end of the file, or an indented line after a new field list, could swallow
        # it, so render() reads the result back when this is set.
        self.risky = False

    def error(self, exc: FieldError, who: str = "the plan") -> PlanError:
        return PlanError(f"{who} has {exc.text}.", exc.fix, file=self.path)

    def emit(self, text: str, start: int | None, end: int | None, marker: bool = False) -> None:
        """Append ``text``, with a blank line before it unless it followed the previous
        text in the source too (or the previous text already ends in a blank line)."""
        if not text:
            return
        self.risky = self.risky or (start is None and self.layout is not None)
        adjacent = start is not None and start == self.prev_end
        if (
            self.out
            and not adjacent
            and not self.after_marker
            and not self.out[-1].endswith("\n\n")
        ):
            self.out.append("\n")
        self.out.append(text)
        self.prev_end, self.after_marker = end, marker

    def render(self, *, ids_checked: bool = False) -> str:
        """``ids_checked``: the records' ids and the tasks' dependencies are those of a plan
        read from a file, which refuses duplicates and impossible dependencies."""
        self._check(ids_checked)
        for item in self._arranged():
            if isinstance(item, str):
                self._slot(item, None)
            elif item.slot is None:
                self.emit(item.text, item.start, item.end)
            else:
                self._slot(item.slot, item)
        return self._as_the_file_was("".join(self.out))

    def _arranged(self) -> list[Chunk | str]:
        """The document's chunks in their order, with each section the plan needs and the
        text lacks (by name) inserted after the last section that comes before it."""
        chunks: list[Chunk | str] = list(self.layout.chunks) if self.layout else []
        present = {c.slot for c in chunks if isinstance(c, Chunk) and c.slot}
        for slot in s.SLOT_ORDER:
            if slot in present or not self._needed(slot):
                continue
            rank = s.SLOT_ORDER.index(slot)
            at = 0
            for index, item in enumerate(chunks):
                name = item.slot if isinstance(item, Chunk) else item
                if name in s.SLOT_ORDER and s.SLOT_ORDER.index(name) < rank:
                    at = index + 1
            chunks.insert(at, slot)
        return chunks

    def _as_the_file_was(self, text: str) -> str:
        """``text`` with the file's own final newline, line endings and byte-order mark."""
        if self.layout is None:
            return text
        if not self.layout.final_newline and text.endswith("\n"):
            text = text[:-1]
        if self.layout.newline != "\n":
            text = text.replace("\n", self.layout.newline)
        return ("\ufeff" if self.layout.bom else "") + text

    def _needed(self, slot: str) -> bool:
        plan = self.plan
        if slot in ("marker", "goal", "tasks"):
            return True
        if slot == "title":
            return self.layout is None or plan.title != s.DEFAULT_TITLE
        if slot == "log":
            return self.layout is None or bool(plan.log)
        if slot == "source":
            return plan.source is not None
        return bool(getattr(plan, slot))

    def _check(self, ids_checked: bool) -> None:
        plan = self.plan
        if plan.format_version != FORMAT_VERSION:
            raise PlanError(
                f"the plan says format {plan.format_version}; only format {FORMAT_VERSION} is written.",
                f"set format_version to {FORMAT_VERSION}.",
                file=self.path,
            )
        if ids_checked:
            return
        for slot, kind in KINDS.items():
            seen: set[str] = set()
            for record in getattr(plan, slot):
                if record.id in seen:
                    raise PlanError(
                        f"{kind.title(record)} appears twice in the plan.",
                        f"give each {kind.word.lower()} its own id.",
                        file=self.path,
                    )
                seen.add(record.id)
        problem = dependency_problem(plan.tasks)
        if problem:
            raise PlanError(*problem[1:], file=self.path)

    def _slot(self, slot: str, chunk: Chunk | None) -> None:
        plan = self.plan
        start, end = (chunk.start, chunk.end) if chunk else (None, None)
        try:
            if slot == "marker":
                same = chunk is not None and chunk.value == FORMAT_VERSION
                self.emit(chunk.text if same and chunk else s.MARKER_LINE, start, end, marker=True)
            elif slot == "title":
                if chunk is not None and chunk.value == plan.title:
                    self.emit(chunk.text, start, end)
                else:
                    self.emit(f"# {v.check_line('title', plan.title)}\n", start, end)
            elif slot == "goal":
                self._goal(chunk, start, end)
            elif slot == "source":
                self._source(chunk, start, end)
            elif slot == "log":
                self._log(chunk, start, end)
            else:
                self._records(slot, chunk)
        except FieldError as exc:
            raise self.error(exc) from None

    def _goal(self, chunk: Chunk | None, start: int | None, end: int | None) -> None:
        goal = self.plan.goal
        if chunk is not None and chunk.value == goal:
            self.emit(chunk.text, start, end)
            return
        s.check_goal(goal)
        parts = chunk.parts if chunk else {"heading": "## Goal\n", "lead": "\n", "trail": ""}
        self.emit(parts["heading"] + parts["lead"] + goal + "\n" + parts["trail"], start, end)

    def _source(self, chunk: Chunk | None, start: int | None, end: int | None) -> None:
        source = self.plan.source
        if source is None and chunk is not None and chunk.value is not None:
            parts = chunk.parts  # the line goes, the (now empty) section and its text stay
            self.emit(parts["heading"] + parts["lead"] + parts["trail"], start, end)
            return
        if chunk is not None and chunk.value == source:
            self.emit(chunk.text, start, end)
            return
        if source is None:
            return
        s.check_source(source)
        parts = chunk.parts if chunk else {"heading": "## Source\n", "lead": "\n", "trail": ""}
        self.emit(
            parts["heading"] + parts["lead"] + s.source_line(source) + parts["trail"], start, end
        )

    def _log(self, chunk: Chunk | None, start: int | None, end: int | None) -> None:
        log = self.plan.log
        parts: dict[str, Any] = (
            chunk.parts
            if chunk
            else {
                "pre": "## Execution Log\n\n",
                "header": None,
                "columns": list(s.COLUMNS),
                "rows": [],
                "post": "",
            }
        )
        if chunk is not None and parts["header"] is None and not log:
            self.emit(chunk.text, start, end)
            return
        needed = set().union(*(s.needs_columns(e) for e in log)) if log else set()
        columns, rows, header = parts["columns"], parts["rows"], parts["header"]
        if header is None or not needed <= set(columns):
            columns, rows, header = list(s.COLUMNS), [], s.table_header(list(s.COLUMNS))
        lines, pos = [], 0
        for entry in log:
            match = next((k for k in range(pos, len(rows)) if rows[k][1] == entry), None)
            if match is None:
                s.check_entry(entry)
                lines.append(s.table_row(entry, columns))
            else:
                lines.append(rows[match][0])
                pos = match + 1
        pre = parts["pre"]
        if parts["header"] is None and not pre.endswith("\n\n"):
            pre += "\n"
        self.emit(pre + header + "".join(lines) + parts["post"], start, end)

    def _records(self, slot: str, chunk: Chunk | None) -> None:
        kind = KINDS[slot]
        if chunk is None:
            self.emit(f"## {s.SECTION_TITLES[slot]}\n", None, None)
        else:
            self.emit(chunk.text, chunk.start, chunk.end)
        for record in getattr(self.plan, slot):
            try:
                text, bare = render_record(kind, record, frozen=self.frozen)
            except FieldError as exc:
                raise self.error(exc, kind.title(record)) from None
            self.risky = self.risky or bare
            layout = record.layout if isinstance(record.layout, RecordLayout) else None
            self.emit(text, layout.start if layout else None, layout.end if layout else None)
            if layout is not None and text and slot == "tasks":
                self.places[record.id] = len(self.out) - 1


def render_plan(plan: Plan, path: str, *, ids_checked: bool = False, frozen: bool = False) -> str:
    """``ids_checked``: see DocumentWriter.render; ``frozen``: the plan's records are never
    changed once rendered (a PlanStore's own: an edit changes copies)."""
    return _written(plan, path, ids_checked, frozen)[1]


def render_file(
    plan: Plan, path: str, *, ids_checked: bool = False, frozen: bool = False
) -> Rendered:
    """``render_plan`` as the file's bytes, with the parts ``render_task`` splices into."""
    writer, text = _written(plan, path, ids_checked, frozen)
    if writer.risky:
        return Rendered(plan, text.encode("utf-8"), [], {})
    last = len(writer.out) - 1
    parts = [_file_part(writer, part, i == 0, i == last) for i, part in enumerate(writer.out)]
    return Rendered(plan, b"".join(parts), parts, writer.places)


def _written(plan: Plan, path: str, ids_checked: bool, frozen: bool) -> tuple[DocumentWriter, str]:
    writer = DocumentWriter(plan, path, frozen=frozen)
    text = writer.render(ids_checked=ids_checked)
    if writer.risky:
        _read_back(plan, text, path)
    return writer, text


def _file_part(writer: DocumentWriter, text: str, first: bool, last: bool) -> bytes:
    """One part of the text as the file holds it: ``_as_the_file_was`` part by part (the
    byte-order mark goes before the first, the final newline off the last)."""
    layout = writer.layout
    if layout is not None:
        if last and not layout.final_newline and text.endswith("\n"):
            text = text[:-1]
        if layout.newline != "\n":
            text = text.replace("\n", layout.newline)
        if first and layout.bom:
            text = "\ufeff" + text
    return text.encode("utf-8")


def render_task(last: Rendered, plan: Plan, task: Task, path: str) -> Rendered | None:
    """``last`` with one task's record written anew and every other part taken as it was:
    a whole render walks every record (4 of 5 ms an edit at 2,000 tasks), and encodes
    the whole text. ``plan`` is ``last.plan`` with ``task`` (a changed copy of one of its
    tasks, same id, dependencies and parent) in its place. None when only a whole render
    can tell: the task is not laid out, or its new text could change the blank line
    after it or be read back otherwise."""
    at = last.tasks.get(task.id)
    if at is None or not isinstance(task.layout, RecordLayout):
        return None
    writer = DocumentWriter(plan, path, frozen=True)
    try:
        text, bare = render_record(KINDS["tasks"], task, frozen=True)
    except FieldError as exc:
        raise writer.error(exc, KINDS["tasks"].title(task)) from None
    if bare or not text:
        return None
    end = len(last.parts) - 1
    part = _file_part(writer, text, at == 0, at == end)
    blank = _file_part(writer, "\n\n", False, False)
    if at < end and part.endswith(blank) != last.parts[at].endswith(blank):
        return None  # (the next part's blank line before it would change)
    parts = list(last.parts)
    parts[at] = part
    return Rendered(plan, b"".join(parts), parts, last.tasks)


def _read_back(plan: Plan, text: str, path: str) -> None:
    """Refuse text in which the new parts would not read back as the plan."""

    try:
        again: Plan | None = DocumentReader(text, path).read(whole=False)[0]
    except PlanError:
        again = None
    if again is not None and again == plan:
        return
    what = "the change"
    for slot, kind in KINDS.items():
        ours = {r.id: r for r in getattr(plan, slot)}
        theirs = {r.id: r for r in getattr(again, slot)} if again else {}
        changed = [rid for rid, r in ours.items() if theirs.get(rid) != r]
        if changed:
            what = f"the new text of {kind.title(changed[0])}"
            break
    else:
        if again is not None and again.log != plan.log:
            what = "the new Execution Log rows"
    unclosed = plan.layout.unclosed if isinstance(plan.layout, PlanLayout) else None
    if unclosed is not None:
        raise unclosed_error(path, *unclosed, f"{what} would be written inside it")
    raise PlanError(
        f"{what} would not read back as written: the text around it in the file changes its "
        "meaning.",
        "look for an unclosed code fence (```) or HTML comment (<!--) at the end of the "
        "file, or an indented line right under a task heading; fix it, then run the command again.",
        file=path,
    )

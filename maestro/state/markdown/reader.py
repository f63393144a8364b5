"""Reading `.ai/MAESTRO.md`: from text to a Plan whose layout remembers the text."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from maestro import graph
from maestro.errors import UPGRADE, PlanError
from maestro.state.codecs.values import FieldError
from maestro.state.markdown import sections as s
from maestro.state.markdown.blocks import (
    TASK_LIKE,
    Block,
    closer,
    misplaced_task,
    split_blocks,
    unclosed_block,
)
from maestro.state.markdown.kinds import KINDS
from maestro.state.markdown.layout import Chunk, FieldPiece, PlanLayout
from maestro.state.markdown.records import RecordReader
from maestro.state.model import FORMAT_VERSION, Plan, Task

_RECORD_WORD = {
    "tasks": re.compile(r"task\s", re.IGNORECASE),
    "challenges": re.compile(r"challenge\s", re.IGNORECASE),
    "reviews": re.compile(r"review\s", re.IGNORECASE),
}


class DocumentReader:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.bom = text.startswith("\ufeff")
        text = text[1:] if self.bom else text
        first_end = text.find("\n")
        self.newline = "\r\n" if first_end > 0 and text[first_end - 1] == "\r" else "\n"
        text = text.replace("\r\n", "\n")
        lone = text.find("\r")
        if lone >= 0:
            raise self.error(
                text.count("\n", 0, lone) + 1,
                "the file has a carriage return without a line feed.",
                "save the file with LF or CRLF line endings.",
            )
        nul = text.find("\x00")
        if nul >= 0:  # no field holds one, and no command line can carry one to a spoke
            raise self.error(
                text.count("\n", 0, nul) + 1,
                "the file has a NUL character.",
                "remove it (an editor that shows control characters finds it on that line).",
            )
        self.final_newline = text.endswith("\n") or not text
        self.text = text if self.final_newline else text + "\n"

    def error(self, line: int | None, message: str, fix: str) -> PlanError:
        return PlanError(message, fix, file=self.path, line=line)

    def raw(self, blocks: list[Block]) -> str:
        return self.text[blocks[0].start : blocks[-1].end] if blocks else ""

    def read(self, *, whole: bool = True) -> tuple[Plan, int]:
        """The plan and its format version. ``whole``: refuse a block never closed that
        swallows part of the plan (the writer's read-back, which names what its new text
        would lose, passes False)."""
        blocks = split_blocks(self.text)
        unclosed = unclosed_block(self.text, blocks)
        try:
            plan, version = self._read(blocks)
        except PlanError as exc:
            if unclosed is None:
                raise
            raise self._blame(exc, unclosed, blocks[-1].start) from None
        if unclosed is not None and whole:
            self._refuse_swallowing(plan, unclosed, blocks[-1].start)
        plan.layout.unclosed = unclosed
        return plan, version

    def _opened(self, start: int) -> str:
        """The file without the opening line of the unclosed block at ``start``."""
        return self.text[:start] + self.text[self.text.index("\n", start) + 1 :]

    def _refuse_swallowing(self, plan: Plan, unclosed: tuple[int, str], start: int) -> None:
        """A code fence or comment never closed that holds what would otherwise be part
        of the plan (tasks, fields, log rows, sections) is an error naming its line: the
        tasks after a stray ```` ```python ```` line must not silently drop out. One that
        holds only a person's text (notes at the end) is left as it is."""
        text = self._opened(start)
        try:
            meant: Plan | None = DocumentReader(text, self.path)._read(split_blocks(text))[0]
        except PlanError:
            meant = None
        if meant == plan:
            return
        read = {t.id: t for t in plan.tasks}
        lost = [t.id for t in meant.tasks if t.id not in read] if meant else []
        cut = [t.id for t in meant.tasks if read.get(t.id, t) != t] if meant else []
        effect = "what follows it would be lost in it"
        if lost:
            effect = f"Task{'s' if len(lost) > 1 else ''} {', '.join(lost)} would be lost in it"
        elif cut:
            effect = f"fields of Task {cut[0]} would be lost in it"
        raise unclosed_error(self.path, *unclosed, effect)

    def _blame(self, exc: PlanError, unclosed: tuple[int, str], start: int) -> PlanError:
        """A code fence or comment never closed swallows the rest of the file, and the
        error it causes is about what it swallowed: name the block instead when the file
        without its opening line (or, failing that, without the block) reads differently."""
        line, opener = unclosed

        def same(text: str) -> bool:
            try:
                DocumentReader(text, self.path)._read(split_blocks(text))
            except PlanError as again:
                return (again.message, again.line) == (exc.message, exc.line)
            return False

        effect = exc.message.rstrip(".")
        if not same(self._opened(start)):
            return unclosed_error(self.path, line, opener, effect)
        if not same(self.text[:start]):
            return unclosed_error(self.path, line, opener, effect, move=True)
        return exc

    def _read(self, blocks: list[Block]) -> tuple[Plan, int]:
        groups = self._sections(blocks)
        head = [b for slot, group, _ in groups[:2] if slot in (None, "title") for b in group]
        version = self._version([b for b in head if b.kind != "heading" or b.level > 2])
        plan = Plan(goal="")
        chunks: list[Chunk] = []
        seen: dict[str, int] = {}
        records: dict[str, list[Any]] = {"tasks": [], "challenges": [], "reviews": []}
        for slot, group, first in groups:
            if slot in seen:
                raise self.error(
                    group[0].line,
                    f"the file has a second `## {s.SECTION_TITLES[slot]}` section "
                    f"(the first is at line {seen[slot]}).",
                    "merge the two into one section.",
                )
            if slot is not None:
                seen[slot] = group[0].line
            chunks += self._section(plan, slot, group, first, chunks, records, version)
        for slot, title in (("goal", "Goal"), ("tasks", "Tasks")):
            if slot not in seen:
                raise self.error(
                    None,
                    f"the file has no `## {title}` section.",
                    f"add a `## {title}` section"
                    + (
                        " with the goal under it."
                        if slot == "goal"
                        else " with `### Task <id>: <title>` headings."
                    ),
                )
        plan.tasks, plan.challenges, plan.reviews = (
            records["tasks"],
            records["challenges"],
            records["reviews"],
        )
        self._check_ids(plan)
        plan.layout = PlanLayout(chunks, self.newline, self.final_newline, self.bom)
        return plan, version

    def _section(
        self,
        plan: Plan,
        slot: str | None,
        group: list[Block],
        start: int,
        before: list[Chunk],
        records: dict[str, list[Any]],
        version: int,
    ) -> list[Chunk]:
        """The chunks of one section (``slot`` None: text outside any known section),
        its values set on ``plan`` and its records put in ``records``."""
        end = start + len(group)
        if slot is None:
            if start == 0:
                return self._preamble(group, start)
            return [Chunk(None, self.raw(group), start, end)]
        if slot == "title":
            plan.title = s.title_of(self.raw(group[:1]))
            chunks = [Chunk("title", self.raw(group[:1]), start, start + 1, plan.title)]
            if group[1:]:
                marked = any(c.slot == "marker" for c in before)
                chunks += self._preamble(group[1:], start + 1, marked)
            return chunks
        if slot in ("goal", "source"):
            return [self._simple(plan, slot, group, start, end)]
        if slot == "log":
            return [self._log(plan, group, start, end)]
        chunk, records[slot] = self._records(slot, group, start, end, version)
        return [chunk]

    def _sections(self, blocks: list[Block]) -> list[tuple[str | None, list[Block], int]]:
        """Blocks grouped by level-1/2 heading: (slot or None, blocks, first block index)."""
        groups: list[tuple[str | None, list[Block], int]] = [(None, [], 0)]
        titled = False
        for index, block in enumerate(blocks):
            if block.kind == "heading" and block.level == 2 and TASK_LIKE.match(block.text):
                raise self.error(
                    block.line,
                    f'"{block.text}" is a level-{block.level} heading.',
                    f"write task headings with three hashes: `### {block.text}`.",
                )
            if block.kind == "heading" and block.level <= 2:
                name = " ".join(block.text.split()).lower()
                slot: str | None = None
                if block.level == 2:
                    slot = s.SECTIONS.get(name)
                elif not titled and len(groups) == 1:
                    slot, titled = "title", True
                groups.append((slot, [], index))
            groups[-1][1].append(block)
        groups = [g for g in groups if g[1]] or [(None, [], 0)]
        for slot, group, _ in groups:
            if slot != "tasks":
                stray = misplaced_task(group)
                if stray is not None:
                    where = (
                        f" (line {group[0].line} starts another section)"
                        if group[0].kind == "heading"
                        else ""
                    )
                    raise self.error(
                        stray.line,
                        f'"### {stray.text}" is outside the `## Tasks` section{where}.',
                        "move the task under `## Tasks`.",
                    )
        return groups

    def _version(self, preamble: list[Block]) -> int:
        """The version the marker above the first section names; 0 without a marker."""
        for block in preamble:
            m = s.MARKER.fullmatch(self.text[block.start : block.end].strip())
            if not m:
                continue
            if not m.group(1).isdigit():
                raise self.error(
                    block.line,
                    f'the format marker names version "{m.group(1)}", not a number.',
                    f"write the marker as `{s.MARKER_LINE.strip()}`.",
                )
            version = int(m.group(1))
            if version > FORMAT_VERSION:
                raise self.error(
                    block.line,
                    f"the file is plan format {version}, newer than this Maestro "
                    f"reads (up to {FORMAT_VERSION}).",
                    f"{UPGRADE}.",
                )
            return version
        return 0

    def _preamble(self, group: list[Block], start: int, marked: bool = False) -> list[Chunk]:
        """Text above the first section, with the version marker as its own chunk."""
        chunks: list[Chunk] = []
        for offset, block in enumerate(group):
            raw = self.text[block.start : block.end]
            m = s.MARKER.fullmatch(raw.strip())
            slot = (
                "marker"
                if m and not marked and not any(c.slot == "marker" for c in chunks)
                else None
            )
            chunks.append(
                Chunk(
                    slot,
                    raw,
                    start + offset,
                    start + offset + 1,
                    int(m.group(1)) if slot and m else None,
                )
            )
        merged: list[Chunk] = []
        for chunk in chunks:
            if chunk.slot is None and merged and merged[-1].slot is None:
                merged[-1].text += chunk.text
                merged[-1].end = chunk.end
            else:
                merged.append(chunk)
        return merged

    def _simple(self, plan: Plan, slot: str, group: list[Block], start: int, end: int) -> Chunk:
        heading = self.raw(group[:1])
        lead, core, trail = s.split_body(self.raw(group[1:]))
        line = group[0].line + 1 + lead.count("\n")
        value: Any = None
        if slot == "goal":
            value = core.strip()
            if not value:
                raise self.error(
                    group[0].line, "the Goal section is empty.", "write the goal under `## Goal`."
                )
            plan.goal = value
        elif core.strip():
            if core.strip().count("\n"):
                raise self.error(
                    line,
                    "the Source section has more than one line.",
                    "keep one line: `<hub tool> | YYYY-MM-DD HH:MM UTC`.",
                )
            try:
                value = plan.source = s.parse_source(core)
            except FieldError as exc:
                raise self.error(line, f"the file has {exc.text}.", exc.fix) from None
        return Chunk(
            slot,
            heading + lead + core + trail,
            start,
            end,
            value,
            {"heading": heading, "lead": lead, "trail": trail},
        )

    def _log(self, plan: Plan, group: list[Block], start: int, end: int) -> Chunk:
        body = self.raw(group)
        lines = body.split("\n")[:-1]
        first = next(
            (i for i, line in enumerate(lines) if i and line.strip().startswith("|")), None
        )
        parts: dict[str, Any] = {
            "pre": body,
            "header": None,
            "columns": list(s.COLUMNS),
            "rows": [],
            "post": "",
        }
        if first is not None:
            last = first
            while last < len(lines) and lines[last].strip().startswith("|"):
                last += 1
            table_line = group[0].line + first
            try:
                columns, entries = s.parse_table(lines[first:last])
            except s.TableError as exc:
                raise self.error(table_line + exc.offset, exc.message, exc.fix) from None
            plan.log = entries
            parts.update(
                pre="".join(line + "\n" for line in lines[:first]),
                header=lines[first] + "\n" + lines[first + 1] + "\n",
                columns=columns,
                rows=[
                    (line + "\n", entry) for line, entry in zip(lines[first + 2 : last], entries)
                ],
                post="".join(line + "\n" for line in lines[last:]),
            )
        return Chunk("log", body, start, end, None, parts)

    def _records(
        self, slot: str, group: list[Block], start: int, end: int, version: int
    ) -> tuple[Chunk, list[Any]]:
        word = _RECORD_WORD[slot]
        heads = [
            i
            for i, b in enumerate(group)
            if i and b.kind == "heading" and b.level == 3 and word.match(b.text)
        ]
        bounds = heads + [len(group)]
        reader = RecordReader(KINDS[slot], self.path, version)
        found = [
            reader.read(self.text, group[a:b], start + a, start + b) for a, b in pairwise(bounds)
        ]
        intro_end = heads[0] if heads else len(group)
        return Chunk(slot, self.raw(group[:intro_end]), start, start + intro_end), found

    def _check_ids(self, plan: Plan) -> None:
        for slot in ("tasks", "challenges", "reviews"):
            first: dict[str, int] = {}
            for record in getattr(plan, slot):
                kind = KINDS[slot]
                if record.id in first:
                    raise self.error(
                        record.layout.line,
                        f"{kind.title(record)} appears twice (the first at line "
                        f"{first[record.id]}).",
                        f"give each {kind.word.lower()} its own id.",
                    )
                first[record.id] = record.layout.line
        problem = dependency_problem(plan.tasks)
        if problem:
            task, message, fix = problem
            line = next(
                (
                    p.line
                    for p in task.layout.pieces
                    if isinstance(p, FieldPiece) and p.name == "depends"
                ),
                task.layout.line,
            )
            raise self.error(line, message, fix)


def unclosed_error(
    path: str, line: int, opener: str, effect: str, *, move: bool = False
) -> PlanError:
    """The error for a code fence or HTML comment opened at ``line`` and never closed;
    ``effect`` says what that broke; ``move``: closing it is not enough, the block must
    also leave the section it is in."""
    what = "HTML comment" if opener.startswith("<!--") else "code fence"
    fix = f'close it with a line "{closer(opener)}" where it should end'
    fix += (
        ", and move the block out of that section (into a `## Notes` section of its own, say)."
        if move
        else ", or delete it."
    )
    return PlanError(
        f'the {what} "{opener}" opened at line {line} is never closed, so the rest of the file '
        f"reads as {'a comment' if what == 'HTML comment' else 'code'} ({effect}).",
        fix,
        file=path,
        line=line,
    )


def dependency_problem(tasks: list[Task]) -> tuple[Task, str, str] | None:
    """The first dependency the plan cannot hold, as (task, message, fix): one on a task
    that is not in the plan, on the task itself, or closing a cycle (`maestro run` could
    never start those, so the file is refused as soon as it is read)."""
    ids = {t.id for t in tasks}
    for task in tasks:
        for dep in task.depends:
            if dep not in ids:
                known = ", ".join(sorted(ids - {task.id}, key=_sort_key)) or "none"
                return (
                    task,
                    f"Task {task.id} depends on Task {dep}, which is not in the plan.",
                    f"use one of the task ids ({known}), or remove {dep} from its Depends.",
                )
    problem = _parent_problem(tasks, ids)
    if problem is not None:
        return problem
    loop = graph.dependency_loop(tasks)
    if loop is None:
        return None
    blamed, message, fix = loop
    return next(t for t in tasks if t.id == blamed), message, fix


def _parent_problem(tasks: list[Task], ids: set[str]) -> tuple[Task, str, str] | None:
    """A subtask's Parent must be a task of the plan, up a chain that ends, and never one
    of the tasks it depends on: a coordinating task finishes after its subtasks, so a
    subtask waiting for its parent (or the parent's parent) would wait for ever."""
    by_id = {t.id: t for t in tasks}
    for task in tasks:
        if task.parent is None:
            continue
        if task.parent not in ids or task.parent == task.id:
            return (
                task,
                f"Task {task.id} has Parent {task.parent}, which is not another task of the plan.",
                "name the coordinating task that spawned it, or remove its Parent line.",
            )
        chain: list[str] = []
        current: Task | None = task
        while current is not None and current.parent is not None:
            if current.parent in chain or current.parent == task.id:
                return (
                    task,
                    f"Task {task.id}'s Parent chain loops ({' -> '.join([task.id, *chain, current.parent])}).",
                    "give each subtask the task that spawned it as Parent.",
                )
            chain.append(current.parent)
            current = by_id.get(current.parent)
        waits = [dep for dep in task.depends if dep in chain]
        if waits:
            return (
                task,
                f"Task {task.id} depends on Task {waits[0]}, which coordinates it and finishes only after it.",
                f"remove {waits[0]} from Task {task.id}'s Depends: a subtask runs while its parent does.",
            )
    return None


def _sort_key(task_id: str) -> tuple[int, ...]:
    return tuple(int(p) for p in task_id.split("."))

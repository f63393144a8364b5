"""PlanStore: the one way to read and change `.ai/MAESTRO.md`.

Writers take an advisory lock (a separate lock file, since ``os.replace`` swaps the plan
file's inode) and write atomically, so concurrent engine processes serialise and a
killed writer leaves the old or the new file, never a torn one. A person's editor takes
no lock: ``edit()`` compares the bytes on disk with the bytes it read before it writes,
and re-applies its change to a file saved in between by a field-level three-way merge,
or refuses with ``StateConflict``. A file that does not parse is never rewritten.

A store parses each content of the file once: while the file holds the bytes it last
read or wrote, it takes their parse from memory (a copy for the caller to change, or
the plan itself to read: ``view()``), so an engine's edits and loads cost a read of the
file and a render, not a parse; ``edit_task()`` copies the one task it changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from maestro.errors import NotFound, StateConflict
from maestro.fsutil import atomic_write, file_lock
from maestro.paths import ProjectPaths
from maestro.state.history import History
from maestro.state.markdown.writer import Rendered, render_file, render_task
from maestro.state.merge import merge
from maestro.state.model import Plan, Task, copy_of
from maestro.state.planfile import parse_bytes, render

_ID = operator.attrgetter("id")
# How often edit() re-merges when the file keeps changing under it before giving up.
_MERGE_ATTEMPTS = 5


class PlanStore:
    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths
        self.path = paths.plan
        self.lock_path = paths.machine_dir / "locks" / "plan.lock"
        self.history = History(paths.private_dir / "plan-history")
        self.display = _display(self.path, paths.root)
        # The last two contents of the file this store read or wrote (bytes and parse,
        # never changed: callers get copies), the newest first: a read of the same bytes
        # takes the parse instead of parsing again. Two, for a thread that read the file
        # just before another one's edit replaced it.
        self._known: list[tuple[bytes, Plan]] = []
        # The newest of those as this store rendered it: the next edit of one of its
        # tasks renders that task's record alone (see render_task).
        self._rendered: Rendered | None = None
        # Held by edit() from its history record to its write: a load in this process
        # waits for it rather than take the file it replaces for a stale save.
        self._writing = threading.Lock()

    def exists(self) -> bool:
        return self.path.is_file()

    def missing(self) -> NotFound:
        """The one error every command gives in a project without a plan file yet."""
        return NotFound(
            f"no plan yet: {self.display} does not exist.",
            "write one with `maestro plan --from plan.yaml` (its shape: `maestro plan --schema`), "
            'or run /maestro:plan "<goal>" in Claude Code or Gemini CLI ($maestro plan in Codex).',
        )

    def _read(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            raise self.missing() from None

    def _parse(self, data: bytes) -> Plan:
        """The content of ``data``, to read only (``.copy()`` it to change it)."""
        for known, plan in self._known:
            if known == data:
                return plan
        plan = parse_bytes(data, self.display)
        self._remember(data, plan)
        return plan

    def _remember(self, data: bytes, plan: Plan) -> None:
        self._known = [(data, plan), *self._known[:1]]

    def load(self) -> Plan:
        """The plan as it is on disk, a copy of its own: use ``edit()`` to change the file.
        A file saved from an older copy reads with Maestro's newer values merged in (see
        ``_reconcile``)."""
        return self._load(Plan.copy)

    def view(self) -> Plan:
        """``load()`` without the copy, to read only: the plan may be the store's own, which
        must never change (an engine reads the plan once a dispatch, ~1 ms a copy of 500
        tasks saved)."""
        return self._load(lambda plan: plan)

    def _load(self, own: Callable[[Plan], Plan]) -> Plan:
        for _ in range(_MERGE_ATTEMPTS):
            data, latest = self._read(), self.history.latest()
            if latest is not None and latest != data:
                with self._writing:  # (an edit of this store may be writing it)
                    data, latest = self._read(), self.history.latest()
            plan = self._parse(data)
            if latest is None or latest == data:
                return own(plan)
            merged = self._reconcile(data, plan.copy(), latest)
            # A writer between its history record and its plan write looks like a save of
            # the older copy for a moment, and merges to what it writes. Done when neither
            # moved meanwhile.
            if self.history.latest() == latest and self._read() == data:
                return merged
        return merged

    def read(self) -> tuple[bytes, Plan]:
        """The file's bytes and their parse (with the layout of the person's text, its own
        to change), merged like ``load()``: for a caller that builds a new file on it
        (re-planning)."""
        data = self._read()
        return data, self._reconcile(data, parse_bytes(data, self.display))

    @contextlib.contextmanager
    def edit(self, *, durable: bool = True) -> Iterator[Plan]:
        """Lock, read, yield a copy of the plan for in-place changes, validate, write
        atomically.

        Nothing is written if the block raises, if the result does not validate, or if
        the file on disk does not parse; a change that collides with an edit saved by hand
        in the meantime raises StateConflict naming the task and field. The store keeps
        the yielded plan as the content of what it writes: change it inside the block only.
        ``durable=False`` skips the fsyncs, for a change a crash of the machine would undo
        anyway (a task marked running goes back to pending when the next run recovers it).
        """
        with self._edit(None, durable) as plan:
            yield plan

    @contextlib.contextmanager
    def edit_task(self, task_id: str, *, durable: bool = True) -> Iterator[Task]:
        """``edit()`` of Task ``task_id`` alone (NotFound without it), for the engine's
        transitions of a task: it yields a copy of that task to change, and copies
        nothing else of the plan (a copy of 2,000 tasks takes ~10 ms)."""
        with self._edit(task_id, durable) as plan:
            yield plan.task(task_id)

    @contextlib.contextmanager
    def _edit(self, only: str | None, durable: bool) -> Iterator[Plan]:
        with file_lock(self.lock_path):
            self._sweep()
            base_bytes, latest = self._read(), self.history.latest()
            before = self._parse(base_bytes)
            at = None
            if only is not None and latest == base_bytes:
                # The task alone is a copy; the other records stay the store's own, never
                # changed (the caller has that task alone).
                tasks = list(before.tasks)
                ids = list(map(_ID, tasks))  # (a search in C: 2,000 tasks, twice a dispatch)
                at = ids.index(only) if only in ids else None
                if at is not None:
                    tasks[at] = copy_of(tasks[at])
                plan = dataclasses.replace(before, tasks=tasks)
            else:
                plan = self._reconcile(base_bytes, before.copy(), latest)
            yield plan
            rendered, one = None, None
            if at is not None:
                one, was = plan.tasks[at], before.tasks[at]
                if (one.id, one.depends, one.parent) != (was.id, was.depends, was.parent):
                    one = None
            if one is not None and self._rendered is not None and self._rendered.plan is before:
                rendered = render_task(self._rendered, plan, one, self.display)
            if rendered is None:
                # Without a change of a task's id, dependencies or parent, the ids and the
                # graph are those of the file read (3 of 8 ms a write at 2,000 tasks to check).
                rendered = render_file(
                    plan, self.display, ids_checked=one is not None, frozen=at is not None
                )
            payload, result, seen = rendered.data, plan, base_bytes
            for _ in range(_MERGE_ATTEMPTS):
                current = self._read()
                if current == seen:
                    break
                result, text = self._rebase(base_bytes, plan, current)
                payload, seen, one = text.encode("utf-8"), current, None
            else:
                raise StateConflict(
                    f"{self.display} kept changing while the change was being saved.",
                    "save the file in the editor, then run the command again.",
                    file=self.display,
                )
            # The history first: a load() between the two takes the file for an older copy
            # and merges in the values about to be written, never takes the new file for a
            # save by hand (see load). It records what changed since its newest version:
            # the file as read, unless that was saved by hand.
            # (Records written anew have no layout: a parse gives them one. The one task
            # an edit of it changed is the only one that can lack it.)
            laid_out = one.layout is not None if one is not None else _laid_out(result)
            self._rendered = rendered if result is plan and laid_out else None
            if laid_out:
                self._remember(payload, result)
            with self._writing:
                if payload != seen or latest != payload:
                    previous = before if latest == base_bytes else None
                    self.history.record(payload, result, previous, task=one)
                if payload != seen:
                    atomic_write(self.path, payload, durable=durable)

    def _rebase(self, base_bytes: bytes, ours: Plan, current: bytes) -> tuple[Plan, str]:
        """Re-apply ``ours`` (an edit of ``base_bytes``) to the file now on disk."""

        base = self._parse(base_bytes)
        # (a file that does not parse is never rewritten)
        theirs = self._reconcile(current, self._parse(current).copy(), self.history.latest())
        merged = merge(base, ours, theirs, self.display)
        return merged, render(merged, self.display)

    def create(self, plan: Plan, *, replace: bool = False, expect: bytes | None = None) -> None:
        """Write a new plan file (``maestro plan --from``); an existing one only with
        ``replace``, and, given ``expect`` (the bytes the new plan was built on), only while
        the file still holds them."""

        with file_lock(self.lock_path):
            self._sweep()
            if self.exists() and not replace:
                raise StateConflict(
                    f"a plan already exists at {self.display}.",
                    "run `maestro archive` to keep it and start a new one, or re-plan to "
                    "replace it.",
                    file=self.display,
                )
            if expect is not None and (not self.exists() or self.path.read_bytes() != expect):
                raise StateConflict(
                    f"{self.display} changed while the new plan was being checked.",
                    "run the command again: the new plan then goes onto the file as it is now.",
                    file=self.display,
                )
            text = render(plan, self.display)
            if plan.layout is None and self.exists() and b"\r\n" in self.path.read_bytes()[:4096]:
                text = text.replace("\n", "\r\n")
            payload = text.encode("utf-8")
            self.history.clear()  # versions of the plan this one replaces
            self.history.record(payload, plan)  # (first, as in edit)
            atomic_write(self.path, payload)

    def forget(self) -> None:
        """Drop the recorded versions (the plan file is moved away: `maestro archive`)."""
        self.history.clear()

    def _reconcile(self, data: bytes, theirs: Plan, latest: bytes | None = None) -> Plan:
        """``theirs`` (the content of ``data``, the file on disk) with Maestro's newer values
        merged in, when the file was saved from an older copy of the plan.

        A file Maestro did not write was saved by someone else. Usually from the latest
        version (a plain hand edit: taken as it is); but an editor's stale buffer starts
        from an older one, and taking it as it is would silently move tasks back (done to
        pending, results gone). The version it started from is the recorded one nearest
        to it; a three-way merge from there keeps the person's changes and Maestro's newer
        values of every field the person did not change, and raises StateConflict for a
        field both changed. ``latest``: the history's latest bytes, when the caller has
        just read them.
        """
        if latest is None:
            latest = self.history.latest()
        if latest is None or latest == data:
            return theirs

        found = self.history.nearest(theirs)
        if found is None:
            return theirs
        base, ours = found
        # Nearest to the latest: a plain hand edit. A copy that shares neither the goal nor
        # the task ids with its nearest version is a new document, not an old copy.
        if base is ours or (
            base.goal != theirs.goal and [t.id for t in base.tasks] != [t.id for t in theirs.tasks]
        ):
            return theirs
        return merge(
            base,
            ours,
            theirs,
            self.display,
            newer=_display(self.history.latest_path, self.paths.root),
        )

    def _sweep(self) -> None:
        """Remove temp files a killed writer left beside the plan (we hold the lock, so
        no live writer owns one)."""
        with contextlib.suppress(OSError):
            for stale in Path(self.path.parent).glob(f".{self.path.name}.*.tmp"):
                with contextlib.suppress(OSError):
                    stale.unlink()


def _laid_out(plan: Plan) -> bool:
    kinds: tuple[list[Any], ...] = (plan.tasks, plan.challenges, plan.reviews)
    return plan.layout is not None and all(r.layout is not None for rs in kinds for r in rs)


def _display(path: Path, root: Path) -> str:
    """``path`` as messages show it: relative to the project when inside it."""
    try:
        shown = os.path.relpath(path, root)
    except ValueError:
        return str(path)
    return str(path) if shown.startswith("..") else shown

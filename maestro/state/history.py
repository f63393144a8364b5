"""The versions of the plan Maestro wrote, so a save from an older copy can be merged.

A person may keep `.ai/MAESTRO.md` open in an editor while a run goes on, add a note
and save: the editor writes its old buffer, in which a task the run has finished since
is still pending. Compared with that file alone, the engine's newer state looks like
something the person undid. With the versions Maestro wrote since the plan was made,
the store finds the one the person's copy started from and merges three ways
(``PlanStore``): the person's changes stay, the engine's newer fields come back.

``plan-history/`` in the project's private folder (``ProjectPaths.private_dir``, in the
user's state folder): ``latest.md`` holds the exact bytes Maestro wrote last (a file on
disk that differs from it was saved by someone else), and ``versions.jsonl`` the content
of the versions, oldest first: the first line a whole version (``to_json``), each next
line what changed from the version before (the records changed or added, the order of a
kind of record when it changed, the plan's own fields that changed). A write appends one
short line; once the file outgrows ``max(KEEP_BYTES, 4 x the plan file)`` its oldest
versions are folded into the first. ``nearest`` replays the lines once, keeping the
distance of the person's copy to each version up to date from what changed, so no
version but the first is decoded whole. What a merge takes from a version goes into the
plan and runs (a validation command, a task's files), so the history lies where no spoke
reaches, never under ``.ai/maestro/``, and is read only from a folder of the user's own
(``private_folder``). It only ever adds safety: a history that cannot be read or written
is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import MISSING, fields, replace
from pathlib import Path
from typing import Any

from maestro.fsutil import atomic_write, private_folder, read_private
from maestro.state import model as m
from maestro.state.markdown.kinds import KINDS
from maestro.state.merge import distance, plan_distance, record_distance

# The versions file is folded back to a quarter of this (or of 4 x the plan file, when
# that is more) once it outgrows it: at up to ~1 KB a task's change, the versions of
# several hundred changes at the least reach back past an editor buffer of a run.
KEEP_BYTES = 2 << 20


class History:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.latest_path = folder / "latest.md"
        self.versions_path = folder / "versions.jsonl"

    def latest(self) -> bytes | None:
        """The bytes Maestro wrote last, or None when it has not written this plan."""
        return read_private(self.latest_path)

    def record(
        self,
        data: bytes,
        plan: m.Plan,
        previous: m.Plan | None = None,
        *,
        task: m.Task | None = None,
    ) -> None:
        """Remember ``data`` (the file as written) and its content ``plan`` as the newest
        version. ``previous``: the content of the newest version so far, when the caller
        has it (else it is replayed from the file). ``task``: with ``previous``, the one
        record that differs from it (same id and place), so the others go uncompared."""
        if not private_folder(self.folder, create=True):
            return  # a spoke's sandbox, a read-only home: no history, no merge
        with contextlib.suppress(OSError):
            if previous is None:
                previous, task = _newest(self._lines()), None
            if task is not None:
                changes = {"tasks": [_RECORDS["tasks"][0](task)]}
            elif previous is not None:
                changes = _changes(previous, plan)
            if previous is None or not self._append(_line(changes)):
                atomic_write(self.versions_path, _line(to_json(plan)), durable=False)
            elif os.stat(self.versions_path).st_size > max(KEEP_BYTES, 4 * len(data)):
                self._fold(max(KEEP_BYTES, 4 * len(data)) // 4)
            atomic_write(self.latest_path, data, durable=False)

    def nearest(self, theirs: m.Plan) -> tuple[m.Plan, m.Plan] | None:
        """The version ``theirs`` is nearest to (``merge.distance``; of equals the newer)
        and the newest version (the same object when that is the nearest); None when no
        version is kept."""

        try:
            changes = [json.loads(line) for line in self._lines()]
            if not changes:
                return None
            replay = _Replay(changes[0])
            other = {slot: {r.id: r for r in getattr(theirs, slot)} for slot in _RECORDS}
            gap = distance(replay.version(), theirs)
            best, at = gap, 0
            for index, change in enumerate(changes[1:], start=1):
                if "plan" in change:
                    gap -= plan_distance(replay.plan, theirs)
                for slot, rid, old, new in replay.step(change):
                    kind, their = KINDS[slot], other[slot].get(rid)
                    gap += record_distance(kind, new, their) - record_distance(kind, old, their)
                if "plan" in change:
                    gap += plan_distance(replay.plan, theirs)
                if gap <= best:
                    best, at = gap, index
            newest = replay.version()
            if at == len(changes) - 1:
                return newest, newest
            again = _Replay(changes[0])
            for change in changes[1 : at + 1]:
                again.step(change)
            return again.version(), newest
        except _UNREADABLE:
            return None

    def clear(self) -> None:
        """Forget every version (a new plan, or the plan archived)."""

        shutil.rmtree(self.folder, ignore_errors=True)

    def _lines(self) -> list[bytes]:
        data = read_private(self.versions_path)
        # (a line being appended has no newline yet)
        return data.split(b"\n")[:-1] if data else []

    def _append(self, line: bytes) -> bool:
        try:
            fd = os.open(self.versions_path, os.O_WRONLY | os.O_APPEND)
        except FileNotFoundError:
            return False
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        return True

    def _fold(self, keep: int) -> None:
        """Drop the oldest versions: the first one kept becomes whole, and the lines of the
        changes after it take at most ``keep`` bytes."""
        lines = self._lines()
        first, size = len(lines) - 1, 0
        while first > 1 and size + len(lines[first]) + 1 <= keep:
            size += len(lines[first]) + 1
            first -= 1
        whole = _newest(lines[: first + 1])
        if whole is None:
            return
        kept = b"".join(line + b"\n" for line in lines[first + 1 :])
        atomic_write(self.versions_path, _line(to_json(whole)) + kept, durable=False)


# What a versions file that is not one of ours raises in a replay.
_UNREADABLE = (ValueError, KeyError, TypeError, AttributeError, IndexError)


def _newest(lines: list[bytes]) -> m.Plan | None:
    """The newest of the versions ``lines`` hold; None when they hold none (or not ours)."""
    if not lines:
        return None
    try:
        replay = _Replay(json.loads(lines[0]))
        for line in lines[1:]:
            replay.step(json.loads(line))
    except _UNREADABLE:
        return None
    return replay.version()


def _line(content: dict[str, Any]) -> bytes:
    return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _Replay:
    """The kept versions one after another: the first whole, each next from what changed."""

    def __init__(self, first: dict[str, Any]) -> None:
        whole = from_json(first)
        self.records = {slot: {r.id: r for r in getattr(whole, slot)} for slot in _RECORDS}
        self.order = {slot: list(ids) for slot, ids in self.records.items()}
        self.plan = replace(whole, tasks=[], challenges=[], reviews=[])  # its own fields

    def step(self, change: dict[str, Any]) -> list[tuple[str, str, Any, Any]]:
        """Apply one version's changes; each record changed as (kind, id, before, after),
        None where it is not."""
        for name, value in change.get("plan", {}).items():
            setattr(self.plan, name, _PLAN[name][1](value))
        changed = []
        for slot, (_, decode) in _RECORDS.items():
            records = self.records[slot]
            for data in change.get(slot, ()):
                record = decode(data)
                changed.append((slot, record.id, records.get(record.id), record))
                records[record.id] = record
            order = change.get("order", {}).get(slot)
            if order is not None:
                for gone in set(records) - set(order):
                    changed.append((slot, gone, records.pop(gone), None))
                self.order[slot] = order
        return changed

    def version(self) -> m.Plan:
        listed = {slot: [self.records[slot][rid] for rid in self.order[slot]] for slot in _RECORDS}
        return replace(
            self.plan,
            tasks=listed["tasks"],
            challenges=listed["challenges"],
            reviews=listed["reviews"],
        )


def _changes(old: m.Plan, new: m.Plan) -> dict[str, Any]:
    """What differs from ``old`` to ``new``, as ``_Replay.step`` reads it."""
    out: dict[str, Any] = {}
    own = {
        name: encode(getattr(new, name))
        for name, (encode, _) in _PLAN.items()
        if getattr(old, name) != getattr(new, name)
    }
    if own:
        out["plan"] = own
    order = {}
    for slot, (encode, _) in _RECORDS.items():
        before = {r.id: r for r in getattr(old, slot)}
        records = getattr(new, slot)
        changed = [encode(r) for r in records if (b := before.get(r.id)) is not r and b != r]
        if changed:
            out[slot] = changed
        ids = [r.id for r in records]
        if ids != list(before):
            order[slot] = ids
    if order:
        out["order"] = order
    return out


# -- a version's content as JSON ------------------------------------------------------
# A record is its fields that differ from their defaults (a pending task is its id and
# title), with usage, receipt and findings as lists.


def _defaults(cls: type) -> dict[str, Any]:
    return {
        f.name: f.default if f.default_factory is MISSING else f.default_factory()
        for f in fields(cls)
        if f.name != "layout"
    }


def _finding(f: m.Finding) -> list[Any]:
    return [f.text, f.task, f.severity]


def _value(value: Any) -> Any:
    if isinstance(value, m.Usage):
        return [value.input, value.output, value.cached]
    if isinstance(value, m.Receipt):
        return [
            value.diff_stat,
            value.files_changed,
            value.validation,
            value.validation_exit,
            value.commit,
            value.diff_sha,
            value.change,
        ]
    if isinstance(value, dict):  # a challenge's findings by category
        return {k: [_finding(f) for f in v] for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], m.Finding):
        return [_finding(f) for f in value]
    return value


def _encoder(cls: type) -> Callable[[Any], dict[str, Any]]:
    defaults = _defaults(cls)

    def encode(record: Any) -> dict[str, Any]:
        return {
            name: _value(value)
            for name, default in defaults.items()
            if (value := getattr(record, name)) != default or default is MISSING
        }

    return encode


def _task(d: dict[str, Any]) -> m.Task:
    d = dict(d)
    if "usage" in d:
        d["usage"] = m.Usage(*d["usage"])
    if d.get("receipt") is not None:
        d["receipt"] = m.Receipt(*d["receipt"])
    return m.Task(**d)


def _challenge(d: dict[str, Any]) -> m.Challenge:
    d = dict(d)
    if "usage" in d:
        d["usage"] = m.Usage(*d["usage"])
    d["findings"] = {k: [m.Finding(*f) for f in v] for k, v in d.get("findings", {}).items()}
    return m.Challenge(**d)


def _review(d: dict[str, Any]) -> m.Review:
    d = dict(d)
    if "usage" in d:
        d["usage"] = m.Usage(*d["usage"])
    d["findings"] = [m.Finding(*f) for f in d.get("findings", [])]
    return m.Review(**d)


def _same(value: Any) -> Any:
    return value


# The plan's own fields and each kind of record: (to JSON, from JSON).
_PLAN: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "goal": (_same, _same),
    "title": (_same, _same),
    "format_version": (_same, _same),
    "source": (
        lambda s: [s.hub, s.time] if s else None,
        lambda d: m.Source(*d) if d else None,
    ),
    "log": (
        lambda log: [[e.time, e.task, e.tool, e.action, e.outcome, e.tokens, e.cost] for e in log],
        lambda d: [m.LogEntry(*e) for e in d],
    ),
}
_RECORDS: dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[[Any], Any]]] = {
    "tasks": (_encoder(m.Task), _task),
    "challenges": (_encoder(m.Challenge), _challenge),
    "reviews": (_encoder(m.Review), _review),
}


def to_json(plan: m.Plan) -> dict[str, Any]:
    out = {name: encode(getattr(plan, name)) for name, (encode, _) in _PLAN.items()}
    for slot, (encode, _) in _RECORDS.items():
        out[slot] = [encode(r) for r in getattr(plan, slot)]
    return out


def from_json(d: dict[str, Any]) -> m.Plan:
    own: dict[str, Any] = {name: decode(d[name]) for name, (_, decode) in _PLAN.items()}
    for slot, (_, decode) in _RECORDS.items():
        own[slot] = [decode(r) for r in d[slot]]
    return m.Plan(**own)

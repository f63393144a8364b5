"""Field-level three-way merge, for a plan file saved by hand while an edit was running.

``base`` is what ``edit()`` read, ``ours`` the edited plan, ``theirs`` the file now on
disk. The result is ``theirs`` (so the person's new text and layout stay) with each of
our changes applied where theirs still holds the base value. A field both sides changed
to different values is a conflict: nothing is written and ``StateConflict`` names it.
"""

from __future__ import annotations

from typing import Any

from maestro.errors import StateConflict
from maestro.state.markdown.kinds import KINDS
from maestro.state.markdown.records import Kind
from maestro.state.model import Plan

_HEAD_FIELD = {"Task": "title", "Challenge": "challenger", "Review": "task"}


class _Merge:
    def __init__(self, path: str, newer: str | None = None) -> None:
        self.path = path
        self.newer = newer  # where Maestro's newer version is, when theirs is a stale copy

    def conflict(self, what: str) -> StateConflict:
        if self.newer is not None:
            return StateConflict(
                f"the file was saved from an older copy, and it changes {what}, which Maestro has changed since.",
                f"Maestro's version is {self.newer}: make your change in a copy of it and save that as {self.path}.",
                file=self.path,
            )
        return StateConflict(
            f"{self.path} was changed by hand while Maestro was updating it, and both changed {what}.",
            f"check {what} in {self.path}, then run the command again.",
            file=self.path,
        )

    def value(self, what: str, base: Any, ours: Any, theirs: Any) -> tuple[bool, Any]:
        """(take ours?, value): ours where theirs still equals base."""
        if ours == base or ours == theirs:
            return False, theirs
        if theirs == base:
            return True, ours
        raise self.conflict(what)

    def plan(self, base: Plan, ours: Plan, theirs: Plan) -> Plan:
        for attr, what in (
            ("goal", "the Goal"),
            ("title", "the title"),
            ("source", "the Source line"),
        ):
            take, value = self.value(
                what, getattr(base, attr), getattr(ours, attr), getattr(theirs, attr)
            )
            if take:
                setattr(theirs, attr, value)
        theirs.log = self.log(base.log, ours.log, theirs.log)
        for slot, kind in KINDS.items():
            setattr(
                theirs,
                slot,
                self.records(kind, getattr(base, slot), getattr(ours, slot), getattr(theirs, slot)),
            )
        return theirs

    def log(self, base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
        if ours == base or ours == theirs:
            return theirs
        if theirs == base:
            return ours
        size = len(base)
        if ours[:size] == base and theirs[:size] == base:
            return theirs + ours[size:]  # both appended: keep both
        raise self.conflict("the Execution Log")

    def records(self, kind: Kind, base: list[Any], ours: list[Any], theirs: list[Any]) -> list[Any]:
        """Their records with ours merged in: ours removed or edited since ``base``, then
        ours added, each after the record it follows here."""
        result = self.changed_records(kind, base, ours, theirs)
        b = {r.id for r in base}
        t = {r.id: r for r in theirs}
        for index, record in enumerate(ours):
            if record.id in b:
                continue
            if record.id in t:
                if t[record.id] != record:
                    raise self.conflict(f"{kind.title(record)} (added on both sides)")
                continue
            after = ours[index - 1].id if index else None
            at = next(
                (i + 1 for i, r in enumerate(result) if r.id == after), len(result) if after else 0
            )
            result.insert(at, record)
        return result

    def changed_records(
        self, kind: Kind, base: list[Any], ours: list[Any], theirs: list[Any]
    ) -> list[Any]:
        """Their records less those we removed, with our edits to the ones both kept; a
        record removed on one side and edited on the other is a conflict."""
        o = {r.id: r for r in ours}
        t = {r.id: r for r in theirs}
        result = list(theirs)
        for rid, record in {r.id: r for r in base}.items():
            name = kind.title(rid)
            if rid not in o:
                if rid in t and t[rid] != record:
                    raise self.conflict(f"{name} (removed here, edited there)")
                result = [r for r in result if r.id != rid]
            elif rid not in t:
                if o[rid] != record:
                    raise self.conflict(f"{name} (removed there, edited here)")
            else:
                self.fields(kind, record, o[rid], t[rid])
        return result

    def fields(self, kind: Kind, base: Any, ours: Any, theirs: Any) -> None:
        name = kind.title(base)
        head = _HEAD_FIELD[kind.word]
        take, value = self.value(
            f"the heading of {name}",
            getattr(base, head),
            getattr(ours, head),
            getattr(theirs, head),
        )
        if take:
            setattr(theirs, head, value)
        for spec in kind.specs:
            take, value = self.value(
                f"{name}'s {spec.label} field", spec.get(base), spec.get(ours), spec.get(theirs)
            )
            if take:
                spec.set(theirs, value)


def merge(base: Plan, ours: Plan, theirs: Plan, path: str, *, newer: str | None = None) -> Plan:
    """``theirs`` with ``ours``'s changes since ``base`` applied (it is changed in place).
    ``newer``: theirs is a copy saved from the older ``base`` after Maestro wrote ``ours``,
    kept at that path (the conflict message points there)."""
    return _Merge(path, newer).plan(base, ours, theirs)


def distance(a: Plan, b: Plan) -> int:
    """How many values differ between two plans: fields of the plan and of its records,
    a record on one side only counting for all of its fields. It finds the version a
    copy saved by hand started from (the nearest)."""
    count = plan_distance(a, b)
    for slot, kind in KINDS.items():
        mine = {r.id: r for r in getattr(a, slot)}
        other = {r.id: r for r in getattr(b, slot)}
        for rid in mine.keys() | other.keys():
            count += record_distance(kind, mine.get(rid), other.get(rid))
    return count


def plan_distance(a: Plan, b: Plan) -> int:
    """``distance`` in the plan's own fields (the goal, the title, the source, the log)."""
    count: int = sum(getattr(a, attr) != getattr(b, attr) for attr in ("goal", "title", "source"))
    return count + (len(a.log) != len(b.log) or a.log != b.log)


def record_distance(kind: Kind, x: Any, y: Any) -> int:
    """``distance`` in one record (None: it is not on that side)."""
    if x is None and y is None:
        return 0
    if x is None or y is None:
        return len(kind.specs) + 1
    if x == y:
        return 0
    head = _HEAD_FIELD[kind.word]
    count: int = (getattr(x, head) != getattr(y, head)) + sum(
        s.get(x) != s.get(y) for s in kind.specs
    )
    return count

"""Re-planning: a hub's new plan written onto the current `.ai/MAESTRO.md`.

The file is a document people annotate: a paragraph under the title, notes and
``####`` sub-headings under a task, whole sections of their own. The new plan therefore
goes onto the current document (its parsed layout) instead of replacing it: the writer
re-emits every block the model does not hold, and writes only what the new plan changes.

- A task keeps its notes while its id is kept; its run fields (status, result, tokens...)
  only while its title is kept too (same work).
- The goal: a person's paragraphs under the model's goal stay when the new goal is the
  same (its paragraphs begin the current goal's).
- What cannot be kept (the notes of a task the new plan drops, results, challenges,
  reviews, log rows or goal paragraphs of the old plan) is listed, and the caller saves
  the current file under `.ai/archive/` before writing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from maestro.state.markdown.kinds import KINDS
from maestro.state.markdown.layout import PlanLayout, RecordLayout, TextPiece
from maestro.state.model import Plan, Task, plan_fields

# Task fields the hub's plan sets (declared in state/model.py); the others are the run's
# (carried over for same tasks).
PLAN_FIELDS = tuple(name for name, _, _ in plan_fields() if name != "id")
RUN_FIELDS = tuple(f.name for f in fields(Task) if f.name not in ("id", "layout", *PLAN_FIELDS))


@dataclass
class Replan:
    plan: Plan  # the new plan, on the current document's layout
    kept: list[dict[str, str]] = field(default_factory=list)  # tasks whose results carry over
    dropped: list[dict[str, str]] = field(default_factory=list)  # tasks whose results do not
    notes: list[dict[str, str]] = field(
        default_factory=list
    )  # a person's text the new plan cannot hold
    lost: list[str] = field(default_factory=list)  # other content of the old plan not carried over

    @property
    def loses(self) -> bool:
        """True when the current file holds something the new one will not."""
        return bool(self.dropped or self.notes or self.lost)


def replan(new: Plan, old: Plan) -> Replan:
    """``new`` (from the hub, no layout) onto ``old`` (parsed with its layout; changed in
    place and returned as ``Replan.plan``)."""
    previous = {t.id: t for t in old.tasks}
    same_work = {t.id for t in new.tasks if t.id in previous and previous[t.id].title == t.title}
    out = Replan(old)
    out.dropped = [
        {"id": t.id, "status": t.status}
        for t in old.tasks
        if t.id not in same_work and (t.status != "pending" or t.attempts)
    ]
    new_ids = {t.id for t in new.tasks}
    out.notes = [note for t in old.tasks if t.id not in new_ids for note in _notes("tasks", t)]
    old.tasks = [_onto(t, previous.get(t.id), t.id in same_work, out) for t in new.tasks]
    if not _same_goal(new.goal, old.goal):
        _change_goal(old, new.goal, out)
    _keep_reviews(old, same_work, out)
    old.source = new.source
    _drop_empty_sections(old)
    return out


def _onto(task: Task, before: Task | None, same_work: bool, out: Replan) -> Task:
    """The new plan's ``task`` on the current one's task of its id (``before``): the plan's
    fields are the new ones; the run's stay for the same work and are reset otherwise."""
    if before is None:
        return task
    for name in PLAN_FIELDS:
        setattr(before, name, getattr(task, name))
    if same_work:
        if before.status == "running":  # its process is gone (the caller checked)
            before.status, before.pid = "pending", None
        out.kept.append({"id": before.id, "status": before.status})
    else:
        for name in RUN_FIELDS:
            setattr(before, name, getattr(task, name))
    return before


def _same_goal(new: str, old: str) -> bool:
    """The same goal: the new goal's paragraphs begin the current one's (a person may have
    added paragraphs under it)."""
    paragraphs = _paragraphs(new)
    return paragraphs == _paragraphs(old)[: len(paragraphs)]


def _change_goal(plan: Plan, goal: str, out: Replan) -> None:
    """A new goal: a person's paragraphs under the old one, its challenges and its log rows
    no longer hold (each is listed in ``out``)."""
    extra = plan.goal.strip().split("\n\n", 1)[1:]  # below the goal's first paragraph
    if extra and extra[0].strip():
        out.notes.append({"where": "Goal", "id": "", "kind": "Goal", "text": extra[0].strip()})
    plan.goal = goal
    if plan.challenges:
        out.lost.append(f"{_count(len(plan.challenges), 'challenge')} (the goal changed)")
        out.notes += [note for c in plan.challenges for note in _notes("challenges", c)]
        plan.challenges = []
    if plan.log:
        out.lost.append(f"{_count(len(plan.log), 'Execution Log row')} (the goal changed)")
        plan.log = []


def _keep_reviews(plan: Plan, same_work: set[str], out: Replan) -> None:
    """Reviews of tasks whose results carry over stay; the others go, listed in ``out``."""
    gone = [r for r in plan.reviews if r.task not in same_work]
    if gone:
        out.lost.append(f"{_count(len(gone), 'review')} of tasks whose results are dropped")
        out.notes += [note for r in gone for note in _notes("reviews", r)]
    plan.reviews = [r for r in plan.reviews if r.task in same_work]


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _drop_empty_sections(plan: Plan) -> None:
    """A Challenges or Reviews section left with no records and no text of a person's goes,
    as a new plan would not have it."""
    layout = plan.layout
    if not isinstance(layout, PlanLayout):
        return
    layout.chunks = [
        c
        for c in layout.chunks
        if not (
            c.slot in ("challenges", "reviews")
            and not getattr(plan, c.slot)
            and len(c.text.strip().splitlines()) == 1
        )
    ]


def _paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n[ \t]*\n", text.strip()) if p.strip()]


def _notes(slot: str, record: Any) -> list[dict[str, str]]:
    """A person's text under a record (paragraphs, unknown list items, sub-headings)."""
    layout = record.layout
    if not isinstance(layout, RecordLayout):
        return []
    text = "".join(p.text for p in layout.pieces if isinstance(p, TextPiece)).strip("\n")
    if not text.strip():
        return []
    return [
        {
            "where": layout.heading.strip().lstrip("#").strip(),
            "id": record.id,
            "kind": KINDS[slot].word,
            "text": text,
        }
    ]

"""What waits for the person right now: one list, read from the plan, the office and the
latest run, that the board shows (its header, its tab's title, the tasks' nodes) and the
run's engine sends away, each moment once (engine/notifier.py).

A moment is a worker's question or blocker no reply answers yet (while its worker is
still there to read one), a blocked task's decision, a failed task, an approved review
waiting for the person's yes, or a budget cap of the run at 80% or reached (engine/caps.py).
Each has an id that
stays the same for as long as the moment lasts (a retried task that fails again is a new
one), what is asked in a few hundred characters (a worker's own question, or Maestro's
words for a task's state: never a transcript, nor what a CLI printed), since when, and the
command that answers it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from maestro import roster
from maestro.bus.mailbox import Mailbox
from maestro.bus.messages import Message, mail_id
from maestro.bus.sessions import USER, Session, SessionStore
from maestro.engine import ladder
from maestro.engine.pullrequest import load_record
from maestro.engine.rundir import latest_run
from maestro.errors import MaestroError
from maestro.formatting import one_line
from maestro.paths import ProjectPaths
from maestro.state.model import Plan

ASKED_LIMIT = 300  # characters of what is asked a moment carries
WAITING = ("working", "idle")  # a worker in these still reads the reply
_LABELS = {
    "question": "Question",
    "blocker": "Blocker",
    "decision": "Decision",
    "failed": "Failed",
    "cap": "Token budget reached",
}


@dataclass(frozen=True)
class Need:
    id: str
    kind: str  # question | blocker | decision | failed | cap
    asked: str
    since: str  # ISO time
    command: str  # what answers it, as a person types it
    task: str | None = None
    title: str | None = None  # the task's
    run: str | None = None  # the run it arose in
    mail: str | None = None  # the question's or blocker's mail id (m12)
    who: str | None = None  # the session asking
    label: str | None = None  # what waits, when the kind's label says too little

    @property
    def headline(self) -> str:
        """One line: what waits, and on what."""
        about = f"Task {self.task} · {self.title}" if self.task else self.who or "the run"
        return f"{self.label or _LABELS[self.kind]}: {about}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "headline": self.headline}


def waiting(paths: ProjectPaths, plan: Plan | None) -> list[Need]:
    """Everything that waits for the person now, oldest first."""
    titles = {t.id: t.title for t in plan.tasks} if plan else {}
    found = [*_mail(paths, titles), *_cap(paths), *_pull_request(paths)]
    if plan is not None:
        found += [*_tasks(plan), *_reviews(plan)]
    return sorted(found, key=lambda n: (n.since, n.id))


def _cut(text: str) -> str:
    return one_line(text, ASKED_LIMIT)


def _asking(sessions: SessionStore, sender: str) -> Session | None:
    with contextlib.suppress(MaestroError):
        if sessions.exists(sender):
            return sessions.peek(sender)
    return None


def _mail(paths: ProjectPaths, titles: dict[str, str]) -> Iterator[Need]:
    try:
        messages = Mailbox(paths).unanswered(body_limit=ASKED_LIMIT + 1)
    except MaestroError:
        return  # a store that cannot be read: the office says so where it is shown
    sessions = SessionStore(paths)
    for message in messages:
        asking = _asking(sessions, message.sender)
        if message.sender == USER or (asking is not None and asking.status not in WAITING):
            continue  # nobody waits for this answer any more
        yield _question(message, asking, titles)


def _question(message: Message, asking: Session | None, titles: dict[str, str]) -> Need:
    task = asking.task_ids[0] if asking and asking.task_ids else None
    recipient = message.to[0] if message.to else ""
    shown = mail_id(message.id)
    return Need(
        id=f"mail:{shown}",
        kind="question" if message.type == "query" else "blocker",
        asked=_cut(message.body or message.subject),
        since=message.created,
        command=f'maestro mail reply {shown} --message "<your answer>"',
        task=task,
        title=titles.get(task) if task else None,
        run=recipient.removeprefix("run-") if recipient.startswith("run-") else None,
        mail=shown,
        who=message.sender,
    )


def _tasks(plan: Plan) -> Iterator[Need]:
    for task in plan.tasks:
        if task.status not in ("failed", "blocked"):
            continue
        kind = "failed" if task.status == "failed" else "decision"
        tries = f"after {task.attempts} attempt{'s' if task.attempts != 1 else ''}"
        yield Need(
            id=f"{kind}:{task.id}:{task.run_id or '-'}:{task.attempts}",
            kind=kind,
            asked=_cut(f"{cause(task.result or task.status)} ({tries})"),
            since=task.finished or task.started or "",
            command=ladder.decision_options(task.id, ())[0]["command"],  # clarify and retry
            task=task.id,
            title=task.title,
            run=task.run_id,
        )


def cause(reason: str) -> str:
    """The head of a task's reason, Maestro's own labels: what a CLI printed and what a
    gate found follow them (``codex: auth: <its words>``, ``format gate: <findings>``),
    and stay on the board and in `maestro status`, out of what a moment carries."""
    parts = reason.split(": ")
    keep = 1
    while keep < len(parts) and parts[keep - 1] in (ladder.NEEDS_DECOMPOSITION, *roster.NAMES):
        keep += 1
    return ": ".join(parts[:keep])


def _reviews(plan: Plan) -> Iterator[Need]:
    """A task's latest review, approved and waiting for the person's yes."""
    latest = {review.task: review for review in plan.reviews}
    for review in latest.values():
        task = plan.find(review.task)
        if task is None or review.verdict is None or review.outcome is not None:
            continue
        yield Need(
            id=f"review:{review.id}",
            kind="decision",
            asked=f"{review.reviewer} approved Task {task.id} (round {review.round}): "
            "accepting it needs your yes",
            since=review.time,
            command=f"maestro review {task.id} --auto",
            task=task.id,
            title=task.title,
            run=task.run_id,
        )


def _cap(paths: ProjectPaths) -> Iterator[Need]:
    """The latest run's cap: at 80% (the run goes on: raise it, go on or stop), or
    reached (the run paused: nothing more starts until it is raised)."""
    try:
        run = latest_run(paths)
        meta = run.read_meta()
    except MaestroError:
        return
    cap = meta.get("cap")
    if isinstance(cap, str):  # as runs before dollar caps wrote it
        cap = {"line": cap, "level": "reached", "since": meta.get("finished")}
    if not isinstance(cap, dict) or not isinstance(cap.get("line"), str):
        return
    line, near = cap["line"], cap.get("level") == "near"
    unit = "Token" if line.split(" budget")[0].endswith("token") else "Dollar"
    yield Need(
        id=f"cap:{run.run_id}" + (f":near:{cap.get('since')}" if near else ""),
        kind="cap",
        asked=_cut(line),
        since=str(cap.get("since") or meta.get("finished") or ""),
        command="maestro run --abort" if near else "maestro run",
        run=run.run_id,
        label=f"{unit} budget {'near its cap' if near else 'reached'}",
    )


def _pull_request(paths: ProjectPaths) -> Iterator[Need]:
    """The pull request's checks, still failing after its rounds or naming no task's
    files (engine/pullrequest.py): what next is the person's."""
    try:
        record = load_record(paths)
    except MaestroError:
        return
    decision = record.get("decision") if record else None
    if record and isinstance(decision, dict) and isinstance(decision.get("asked"), str):
        yield Need(
            id=f"pr:{record.get('number')}:{decision.get('since')}",
            kind="decision",
            asked=_cut(decision["asked"]),
            since=str(decision.get("since") or ""),
            command=str(decision.get("command") or "maestro pr status"),
        )

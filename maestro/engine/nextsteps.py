"""What to do next, from the plan's state: the blockers and the commands to run, most
urgent first. Policy, not presentation: `maestro status` shows them, in text or JSON."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypedDict

from maestro import graph
from maestro.formatting import one_line
from maestro.state.model import Plan, Task

REVIEW_ATTENTION = ("changes-requested", "flagged", "needs-human")


class Blocker(TypedDict):
    """A failed or blocked task and the pending tasks that wait on it."""

    task: str
    title: str
    status: str
    result: str | None
    waiting: list[str]


def blockers(plan: Plan) -> list[Blocker]:
    stuck = [t for t in plan.tasks if t.status in ("failed", "blocked")]
    if not stuck:
        return []
    waiting = graph.descendants_of(plan.tasks, [t.id for t in stuck])
    status = {t.id: t.status for t in plan.tasks}
    return [
        Blocker(
            task=t.id,
            title=t.title,
            status=t.status,
            result=t.result,
            waiting=[d for d in waiting[t.id] if status[d] == "pending"],
        )
        for t in stuck
    ]


Action = dict[str, str]  # {"command": what to run, "why": why now}


def next_actions(plan: Plan, engine: bool, *, clis: Collection[str], hub: bool) -> list[Action]:
    """What to do now, most urgent first, each naming a command that can run here.
    ``engine``: an engine holds the run lock (``RunLock.holder()``); ``clis``: the
    vendors' CLIs installed (a challenge or a review needs one); ``hub``: a host's shell
    asks, which can pipe a revised plan in (a person's is in a file)."""
    tasks = plan.tasks
    running = [t for t in tasks if t.status == "running"]
    live = bool(running) and engine
    opinion = bool(clis)
    actions = [
        *_running(running, engine),
        *_failed(tasks),
        *_blocked(tasks, hub),
        *(_reviews(tasks) if opinion else []),
        *([] if live else _ready(plan, opinion)),
    ]
    if tasks and all(t.status == "done" for t in tasks):
        actions += _finished(tasks, opinion)
    elif not actions:
        actions.append(_act("maestro status", "nothing can start now; look at the blockers above"))
    return actions


def _act(command: str, why: str) -> Action:
    return {"command": command, "why": why}


def _running(running: list[Task], engine: bool) -> list[Action]:
    """Tasks marked running: follow the live run, or resume the one that died."""
    if not running:
        return []
    if engine:
        return [
            _act(
                "maestro wait",
                f"a run is going ({_ids(running)} running); follow it until something happens",
            )
        ]
    return [
        _act(
            "maestro run",
            f"{_ids(running, 'Task')} marked running but no run process is alive; this resumes it",
        )
    ]


def _failed(tasks: list[Task]) -> list[Action]:
    """A retry for each of the first three failed tasks, with why it failed."""
    return [
        _act(
            f"maestro run {task.id}",
            f"retry Task {task.id} after reading why it failed: {one_line(task.result, 80) or 'no result recorded'}",
        )
        for task in [t for t in tasks if t.status == "failed"][:3]
    ]


def _blocked(tasks: list[Task], hub: bool) -> list[Action]:
    blocked = [t for t in tasks if t.status == "blocked"]
    if not blocked:
        return []
    where = "" if hub else " in your plan file"
    return [
        _act(
            f"maestro plan --from {'-' if hub else '<file>'}",
            f"{_ids(blocked, 'Task')} blocked: split or fix it{where} and re-plan (unchanged tasks keep their results)",
        )
    ]


def _reviews(tasks: list[Task]) -> list[Action]:
    """The first two tasks whose review asks for attention."""
    return [
        _act(f"maestro review {task.id}", f"the review of Task {task.id} says {task.review}")
        for task in [t for t in tasks if t.review in REVIEW_ATTENTION][:2]
    ]


def _ready(plan: Plan, opinion: bool) -> list[Action]:
    """Tasks ready to start (no run going): dispatch them; before a plan's first run, a
    challenge is worth offering (``opinion``: a CLI is installed to give it)."""
    ready = graph.ready(plan.tasks)
    if not ready:
        return []
    actions = []
    if opinion and all(t.status == "pending" for t in plan.tasks) and not plan.challenges:
        actions.append(
            _act(
                "maestro challenge",
                "optional: have other vendors' CLIs challenge the plan before it runs",
            )
        )
    actions.append(
        _act(
            "maestro run",
            f"dispatch the ready {_ids(ready, 'task')} ({_waiting_note(plan.tasks, ready)})",
        )
    )
    return actions


def _finished(tasks: list[Task], opinion: bool) -> list[Action]:
    """Every task done: a review if code went unreviewed (and a CLI can review it), the
    report, then the archive."""
    actions = []
    unreviewed = [t for t in tasks if t.specialist in ("code", "test") and not t.review]
    if opinion and unreviewed and not any(t.specialist == "review" for t in tasks):
        actions.append(
            _act(
                f"maestro review {unreviewed[0].id}",
                "optional: a cross-vendor review before you accept the work",
            )
        )
    actions.append(
        _act(
            "maestro report",
            "every task is done: write the walkthrough with tokens, cost and timing",
        )
    )
    actions.append(_act("maestro archive", "then move the plan and log away before the next goal"))
    return actions


def _ids(tasks: Sequence[Task], noun: str = "") -> str:
    ids = [t.id for t in tasks]
    shown = ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
    if not noun:
        return shown
    plural = noun + ("s" if len(ids) != 1 else "")
    verb = "is" if len(ids) == 1 else "are"
    return f"{plural} {shown}" + ("" if noun == "task" else f" {verb}")


def _waiting_note(tasks: Sequence[Task], ready: Sequence[Task]) -> str:
    pending = sum(1 for t in tasks if t.status == "pending") - len(ready)
    if pending:
        return f"{pending} more waiting on them"
    return "the last one" if len(ready) == 1 else "the last ones"

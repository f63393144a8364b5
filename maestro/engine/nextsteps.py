"""What to do next, from the plan's state: the blockers and the commands to run, most
urgent first. Policy, not presentation: `maestro status` shows them, in text or JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from maestro import graph
from maestro.formatting import one_line
from maestro.state.model import Plan, Task

REVIEW_ATTENTION = ("changes-requested", "flagged", "needs-human")


def blockers(plan: Plan) -> list[dict[str, Any]]:
    stuck = [t for t in plan.tasks if t.status in ("failed", "blocked")]
    if not stuck:
        return []
    waiting = graph.descendants_of(plan.tasks, [t.id for t in stuck])
    status = {t.id: t.status for t in plan.tasks}
    return [
        {
            "task": t.id,
            "title": t.title,
            "status": t.status,
            "result": t.result,
            "waiting": [d for d in waiting[t.id] if status[d] == "pending"],
        }
        for t in stuck
    ]


def next_actions(plan: Plan, engine: bool) -> list[dict[str, str]]:
    """What to do now, most urgent first, each naming the command to run. ``engine``:
    an engine holds the run lock (``RunLock.holder()``)."""
    tasks = plan.tasks
    actions: list[dict[str, str]] = []

    def add(command: str, why: str) -> None:
        actions.append({"command": command, "why": why})

    running = [t for t in tasks if t.status == "running"]
    live = running if engine else []
    stale = [t for t in running if t not in live]
    if live:
        add(
            "maestro wait",
            f"a run is going ({_ids(live)} running); follow it until something happens",
        )
    if stale and not live:
        add(
            "maestro run",
            f"{_ids(stale, 'Task')} marked running but no run process is alive; this resumes it",
        )
    for task in [t for t in tasks if t.status == "failed"][:3]:
        add(
            f"maestro run {task.id}",
            f"retry Task {task.id} after reading why it failed: {one_line(task.result, 80) or 'no result recorded'}",
        )
    blocked = [t for t in tasks if t.status == "blocked"]
    if blocked:
        add(
            "maestro plan --from -",
            f"{_ids(blocked, 'Task')} blocked: split or fix it and re-plan (unchanged tasks keep their results)",
        )
    for task in [t for t in tasks if t.review in REVIEW_ATTENTION][:2]:
        add(f"maestro review {task.id}", f"the review of Task {task.id} says {task.review}")
    ready = graph.ready(tasks)
    if ready and not live:
        fresh = all(t.status == "pending" for t in tasks)
        if fresh and not plan.challenges:
            add(
                "maestro challenge",
                "optional: have other vendors' CLIs challenge the plan before it runs",
            )
        add(
            "maestro run",
            f"dispatch the ready {_ids(ready, 'task')} ({_waiting_note(tasks, ready)})",
        )
    if tasks and all(t.status == "done" for t in tasks):
        unreviewed = [t for t in tasks if t.specialist in ("code", "test") and not t.review]
        if unreviewed and not any(t.specialist == "review" for t in tasks):
            add(
                f"maestro review {unreviewed[0].id}",
                "optional: a cross-vendor review before you accept the work",
            )
        add(
            "maestro report",
            "every task is done: write the walkthrough with tokens, cost and timing",
        )
        add("maestro archive", "then move the plan and log away before the next goal")
    elif not actions:
        add("maestro status", "nothing can start now; look at the blockers above")
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

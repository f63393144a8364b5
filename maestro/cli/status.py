"""`maestro status`: the goal, counts, task table, blockers and the next commands to run.

Kept light on purpose: it is run often (and benchmarked at 500 tasks), so it imports
only the plan store (which reads through its parse cache) and the graph, nothing heavy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from maestro import formatting, graph
from maestro.cli.context import Context, Result
from maestro.errors import NotFound
from maestro.formatting import money_text
from maestro.paths import ProjectPaths
from maestro.state.model import STATUSES, Plan, Task
from maestro.tables import aligned

EXAMPLES = """\
  maestro status
  maestro status --json          for hubs and scripts: counts, blockers, next actions
  maestro -C ../other status     another project"""

TITLE_WIDTH = 48
RESULT_WIDTH = 160
REVIEW_ATTENTION = ("changes-requested", "flagged", "needs-human")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options beyond --json


def shown_path(paths: ProjectPaths, which: str = "plan") -> str:
    path = getattr(paths, which)
    return formatting.shown_path(path, paths.root)


def no_plan(paths: ProjectPaths) -> NotFound:
    return NotFound(
        f"no plan yet: {shown_path(paths)} does not exist.",
        "write one with `maestro plan --from plan.yaml` (its shape: `maestro plan --schema`), "
        "or run /maestro:plan \"<goal>\" in Claude Code or Gemini CLI ($maestro plan in Codex).",
    )


def engine_alive(paths: ProjectPaths) -> bool:
    """Does an engine work on this project now? Only if it holds the run lock: a task's
    recorded pid may belong to another PID namespace or have been reused since."""
    from maestro.engine.rundir import RunLock

    return RunLock(paths).holder() is not None


def one_line(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def who(task: Task) -> str:
    if task.agent and task.specialist:
        return f"{task.specialist}/{task.agent}"
    return task.agent or task.specialist or "-"


def task_rows(tasks: Sequence[Task], *, with_status: bool) -> list[str]:
    """The compact task table shared by `plan` and `status`."""
    spent = with_status and any(t.usage.total or t.cost is not None for t in tasks)
    headers = ["ID", *(["Status"] if with_status else []), "Title", "Specialist/Agent", "Tool", "Depends"]
    headers += ["Tokens", "Cost"] if spent else []
    headers.append("Files")
    rows = []
    for t in tasks:
        row = [t.id, *([t.status] if with_status else []), one_line(t.title, TITLE_WIDTH), who(t),
               t.tool or "-", ", ".join(t.depends) or "-"]
        if spent:
            cost = money_text(t.cost, t.cost_estimated, places=2)
            row += [f"{t.usage.total:,}" if t.usage.total else "-", cost]
        row.append(", ".join(t.files) or "-")
        rows.append(row)
    return aligned(headers, rows)


def task_data(task: Task, *, full: bool = False) -> dict[str, Any]:
    """A task for the JSON envelope. Status keeps it to what progress needs (the plan file
    has the rest), which also keeps `status --json` fast on big plans."""
    data: dict[str, Any] = {
        "id": task.id,
        "title": task.title,
        "status": task.status,
        "specialist": task.specialist,
        "agent": task.agent,
        "tool": task.tool,
        "depends": task.depends,
        "files": task.files,
        "result": task.result,
        "attempts": task.attempts,
        "tokens": task.usage.total,
        "cost": task.cost,
        "review": task.review,
    }
    if full:
        data.update(criteria=task.criteria, validation=task.validation, risk=task.risk)
    return data


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
    an engine holds the run lock (see engine_alive)."""
    tasks = plan.tasks
    actions: list[dict[str, str]] = []

    def add(command: str, why: str) -> None:
        actions.append({"command": command, "why": why})

    running = [t for t in tasks if t.status == "running"]
    live = running if engine else []
    stale = [t for t in running if t not in live]
    if live:
        add("maestro wait", f"a run is going ({_ids(live)} running); follow it until something happens")
    if stale and not live:
        add("maestro run", f"{_ids(stale, 'Task')} marked running but no run process is alive; this resumes it")
    for task in [t for t in tasks if t.status == "failed"][:3]:
        add(f"maestro run {task.id}", f"retry Task {task.id} after reading why it failed: {one_line(task.result, 80) or 'no result recorded'}")
    blocked = [t for t in tasks if t.status == "blocked"]
    if blocked:
        add("maestro plan --from -", f"{_ids(blocked, 'Task')} blocked: split or fix it and re-plan (unchanged tasks keep their results)")
    for task in [t for t in tasks if t.review in REVIEW_ATTENTION][:2]:
        add(f"maestro review {task.id}", f"the review of Task {task.id} says {task.review}")
    ready = graph.ready(tasks)
    if ready and not live:
        fresh = all(t.status == "pending" for t in tasks)
        if fresh and not plan.challenges:
            add("maestro challenge", "optional: have other vendors' CLIs challenge the plan before it runs")
        add("maestro run", f"dispatch the ready {_ids(ready, 'task')} ({_waiting_note(tasks, ready)})")
    if tasks and all(t.status == "done" for t in tasks):
        unreviewed = [t for t in tasks if t.specialist in ("code", "test") and not t.review]
        if unreviewed and not any(t.specialist == "review" for t in tasks):
            add(f"maestro review {unreviewed[0].id}", "optional: a cross-vendor review before you accept the work")
        add("maestro report", "every task is done: write the walkthrough with tokens, cost and timing")
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


def load_plan(ctx: Context) -> Plan:
    from maestro.state.store import PlanStore

    store = PlanStore(ctx.paths)
    if not store.exists():
        raise no_plan(ctx.paths)
    return store.load()


def run(args: argparse.Namespace, ctx: Context) -> Result:
    del args
    plan = load_plan(ctx)
    counts = plan.counts()
    stuck = blockers(plan)
    actions = next_actions(plan, engine_alive(ctx.paths))
    tokens = sum(t.usage.total for t in plan.tasks)
    costs = [t.cost for t in plan.tasks if t.cost is not None]
    data: dict[str, Any] = {
        "goal": plan.goal,
        "source": {"hub": plan.source.hub, "time": plan.source.time} if plan.source else None,
        "counts": counts,
        "total": len(plan.tasks),
        "tokens": tokens,
        "cost": round(sum(costs), 6) if costs else None,
        "cost_estimated": any(t.cost_estimated for t in plan.tasks),
        "ready": [t.id for t in graph.ready(plan.tasks)],
        "tasks": [task_data(t) for t in plan.tasks],
        "blockers": stuck,
        "next": actions,
    }
    lines = [f"Goal: {plan.goal}"]
    if plan.source:
        lines.append(f"Source: {plan.source.hub} | {plan.source.time}")
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))
    spent = f"; {tokens:,} tokens" if tokens else ""
    if costs:
        spent += ", " + money_text(sum(costs), data["cost_estimated"], places=2)
    lines += [f"Tasks: {len(plan.tasks)} ({summary or 'none'}){spent}", ""]
    lines += task_rows(plan.tasks, with_status=True)
    if stuck:
        lines += ["", "Blockers:"]
        for item in stuck:
            why = one_line(item["result"], RESULT_WIDTH) or "no result recorded"
            waiting = f" Waiting on it: {', '.join(item['waiting'])}." if item["waiting"] else ""
            lines.append(f"  Task {item['task']} {item['status']}: {why}{waiting}")
    lines += ["", "Next:"]
    width = max(len(a["command"]) for a in actions)
    lines += [f"  {a['command'].ljust(width)}  {a['why']}" for a in actions]
    return Result("status", data, "\n".join(lines))

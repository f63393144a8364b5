"""`maestro status`: the goal, counts, task table, blockers and the next commands to run.

Kept light on purpose: it is run often (and benchmarked at 500 tasks), so it imports
only the plan store (the plan's parser) and the graph, nothing heavy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from maestro import formatting, graph, roster
from maestro.cli.context import Context, Result
from maestro.engine.caps import standing
from maestro.engine.nextsteps import blockers, next_actions
from maestro.engine.pullrequest import pull_request, pull_request_line
from maestro.engine.rundir import RunLock, latest_run
from maestro.engine.spend import Tally
from maestro.errors import NotFound
from maestro.formatting import money_text, one_line
from maestro.paths import ProjectPaths
from maestro.spokes.registry import detect_available
from maestro.state.model import STATUSES, Plan, Task
from maestro.state.store import PlanStore
from maestro.tables import aligned

EXAMPLES = """\
  maestro status
  maestro status --json          for hubs and scripts: counts, blockers, next actions
  maestro -C ../other status     another project"""

TITLE_WIDTH = 48
RESULT_WIDTH = 160


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options beyond --json


def shown_path(paths: ProjectPaths, which: str = "plan") -> str:
    path = getattr(paths, which)
    return formatting.shown_path(path, paths.root)


def engine_alive(paths: ProjectPaths) -> bool:
    """Does an engine work on this project now? Only if it holds the run lock: a task's
    recorded pid may belong to another PID namespace or have been reused since."""
    return RunLock(paths).holder() is not None


def who(task: Task) -> str:
    if task.agent and task.specialist:
        return f"{task.specialist}/{task.agent}"
    return task.agent or task.specialist or "-"


def task_rows(tasks: Sequence[Task], *, with_status: bool, colour: bool = False) -> list[str]:
    """The compact task table shared by `plan` and `status` (``colour``: each status in
    its colour)."""
    spent = with_status and any(t.usage.total or t.cost is not None for t in tasks)
    headers = [
        "ID",
        *(["Status"] if with_status else []),
        "Title",
        "Specialist/Agent",
        "Tool",
        "Depends",
    ]
    headers += ["Tokens", "Cost"] if spent else []
    headers.append("Files")
    rows = []
    for t in tasks:
        row = [
            t.id,
            *([t.status] if with_status else []),
            one_line(t.title, TITLE_WIDTH),
            who(t),
            t.tool or "-",
            ", ".join(t.depends) or "-",
        ]
        if spent:
            cost = money_text(t.cost, t.cost_estimated, places=2)
            row += [f"{t.usage.total:,}" if t.usage.total else "-", cost]
        row.append(", ".join(t.files) or "-")
        rows.append(row)
    return aligned(headers, rows, status=1 if with_status and colour else None)


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
        "cost_estimated": task.cost_estimated,
        "review": task.review,
    }
    if full:
        data.update(criteria=task.criteria, validation=task.validation, risk=task.risk)
    return data


def load_plan(ctx: Context) -> Plan:
    store = PlanStore(ctx.paths)
    if not store.exists():
        raise store.missing()
    return store.load()


def run(args: argparse.Namespace, ctx: Context) -> Result:
    del args
    plan = load_plan(ctx)
    data = status_data(plan, ctx)
    return Result("status", data, _text(plan, data, ctx.colour()))


def status_data(plan: Plan, ctx: Context) -> dict[str, Any]:
    """What `status --json` says of ``plan`` (the board shows the same)."""
    counts = plan.counts()
    stuck = blockers(plan)
    clis = [name for name in detect_available(ctx.env) if name in roster.REAL]
    actions = next_actions(
        plan, engine_alive(ctx.paths), clis=clis, hub=bool(roster.hub_of(ctx.env))
    )
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
        "run": last_run(ctx.paths),
        "pull_request": pull_request(ctx.paths, plan.goal),
        "spend": standing(ctx.settings, {t.id: Tally.of_task(t) for t in plan.tasks}),
    }
    return data


def last_run(paths: ProjectPaths) -> dict[str, Any] | None:
    """The latest run's id and how its processes ran (confined or not); None: no run."""
    try:
        run = latest_run(paths)
    except NotFound:
        return None
    return {"id": run.run_id, "sandbox": run.read_meta().get("sandbox")}


def _text(plan: Plan, data: dict[str, Any], colour: bool) -> str:
    """The status for people: the goal, the counts and spend, the tasks, the blockers and
    what to do next."""
    counts, stuck, actions = data["counts"], data["blockers"], data["next"]
    lines = [f"Goal: {plan.goal}"]
    if plan.source:
        lines.append(f"Source: {plan.source.hub} | {plan.source.time}")
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))
    spent = f"; {data['tokens']:,} tokens" if data["tokens"] else ""
    costs = [t.cost for t in plan.tasks if t.cost is not None]
    if costs:
        spent += ", " + money_text(sum(costs), data["cost_estimated"], places=2)
    lines.append(f"Tasks: {len(plan.tasks)} ({summary or 'none'}){spent}")
    last = data["run"]
    if last and last["sandbox"]:
        lines.append(f"Last run: {last['id']}; {last['sandbox']}")
    pr = data["pull_request"]
    if pr:
        lines.append(pull_request_line(pr))
    lines += (data["spend"] or {}).get("lines", [])
    lines.append("")
    lines += task_rows(plan.tasks, with_status=True, colour=colour)
    if stuck:
        lines += ["", "Blockers:"]
        for item in stuck:
            why = one_line(item["result"], RESULT_WIDTH) or "no result recorded"
            waiting = f" Waiting on it: {', '.join(item['waiting'])}." if item["waiting"] else ""
            lines.append(f"  Task {item['task']} {item['status']}: {why}{waiting}")
    lines += ["", "Next:"]
    width = max(len(a["command"]) for a in actions)
    lines += [f"  {a['command'].ljust(width)}  {a['why']}" for a in actions]
    return formatting.frame(lines)

"""`maestro task stop N --reason=TEXT`: stop a task whatever its state in the run.

A running task's spoke is ended through its session, as `maestro session stop` ends it:
the session records the reason first, and the engine, finding it when the spoke exits,
blocks the task with it. A task still waiting in a live run (for a slot or for its
dependencies) has no session yet: the run's engine is asked through its desk
(engine/requests.py) never to start it, and it blocks the task with the reason in the
plan, the run's events and the log, as for a running one. With no live run nothing would
start the task, so nothing is stopped: the command says so (a run started later takes
pending tasks as the plan lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from maestro import clock
from maestro.bus.addressing import caller
from maestro.bus.messages import Message
from maestro.bus.sessions import USER, SessionStore, current_id
from maestro.engine import ladder
from maestro.engine.dispatch import log_row
from maestro.engine.hierarchy import lineage
from maestro.engine.requests import ask
from maestro.engine.rundir import RunLock
from maestro.engine.scheduler import Outcome, Scheduler
from maestro.errors import MaestroError, NotFound
from maestro.formatting import one_line
from maestro.logfile import ExecutionLog
from maestro.paths import ProjectPaths
from maestro.planning.loading import refuse_controls
from maestro.state.model import ID_MAX, TASK_ID, TEXT_MAX, Plan, Task
from maestro.state.store import PlanStore

STOP = "task stop"  # the directive's subject


def stop_task(
    paths: ProjectPaths, env: Mapping[str, str], task_id: str, reason: str
) -> dict[str, Any]:
    """Stop Task ``task_id``: end its spoke if it runs, else have the live run never
    start it. Raise a one-line MaestroError when there is nothing to stop."""
    _checked(task_id, reason)
    me = caller(SessionStore(paths), current_id(env))
    task = _task(PlanStore(paths).view(), task_id)
    if task.status == "running":
        return stop_spoke(paths, task, reason, me.id)
    _check_waiting(task)
    holder = RunLock(paths).holder()
    if holder is None or not holder.get("run_id"):
        raise MaestroError(
            f"Task {task_id} is pending and no run is live: nothing would start it, so nothing was stopped.",
            f"to run the others without it, run them by id (`maestro run <id>`); to drop it, re-plan without Task {task_id}.",
        )
    run_id = str(holder["run_id"])
    answer = ask(paths, me.id, run_id, STOP, {"task": task_id, "reason": reason})
    return {"task": task_id, "was": "pending", "run": run_id, **answer}


def stop_spoke(paths: ProjectPaths, task: Task, reason: str, by: str) -> dict[str, Any]:
    """End a running task's spoke through its session (the reason recorded first)."""
    store = SessionStore(paths)
    running = [s for s in store.of_task(task.id) if s.status in ("working", "idle")]
    if not running:
        raise MaestroError(
            f"Task {task.id} is running but has no working session (it is starting or ending).",
            f"run `maestro task stop {task.id}` again in a moment.",
        )
    session, outcome = store.stop(running[-1].id, reason, by)
    return {
        "task": task.id,
        "was": "running",
        "session": session.id,
        "process": outcome,
        "reason": session.data["reason"],
    }


def _task(plan: Plan, task_id: str) -> Task:
    task = plan.find(task_id)
    if task is None:
        raise NotFound(f"no Task {task_id} in the plan.", "`maestro status` lists its tasks.")
    return task


def _checked(task_id: Any, reason: Any) -> tuple[str, str]:
    """The task's id and the reason, as the caller gave them or a spoke forged them: an
    id of the plan's form, and a reason within the bound of a plan's text (it is written
    into the plan, the session and the log)."""
    if not isinstance(task_id, str) or len(task_id) > ID_MAX or not TASK_ID.match(task_id):
        raise MaestroError(
            f"task stop: {one_line(str(task_id), 60)!r} is not a task id.",
            "give the id `maestro status` shows, e.g. 4 or 4.1.",
        )
    if not isinstance(reason, str) or not reason.strip():
        raise MaestroError("task stop: give a task id and a reason.", None)
    if len(reason) > TEXT_MAX:
        raise MaestroError(
            f"task stop: the reason is {len(reason):,} characters, over the limit of {TEXT_MAX:,}.",
            f"say it in {TEXT_MAX:,} characters or fewer.",
        )
    refuse_controls({"reason": reason}, STOP)
    return task_id, reason


def _check_waiting(task: Task) -> None:
    if task.status != "pending":
        raise MaestroError(
            f"Task {task.id} is {task.status}: nothing to stop.",
            "stop a task that runs or waits to run (`maestro status`).",
        )


def holder(
    paths: ProjectPaths,
    scheduler: Scheduler,
    store: PlanStore,
    emit: Callable[..., Any],
    log: ExecutionLog,
    installed: Collection[str],
) -> Callable[[Message, dict[str, Any]], dict[str, Any]]:
    """The run's desk handler for ``task stop`` (called on the scheduler's idle tick, in
    its loop's thread, so no task is launched meanwhile)."""

    def stop(message: Message, fields: dict[str, Any]) -> dict[str, Any]:
        task_id, reason = _checked(fields.get("task"), fields.get("reason"))
        plan = store.view()
        task = _task(plan, task_id)
        by = message.sender
        if by != USER and not set(SessionStore(paths).peek(by).task_ids) & set(lineage(plan, task)):
            raise MaestroError(
                f"session {by} may not stop Task {task_id}: only its coordinators or the person can.",
                "ask your coordinator: `maestro task report blocked ...`.",
            )
        if task.status == "running":  # it started between the ask and this tick
            return stop_spoke(paths, task, reason, by)
        _check_waiting(task)
        note = f"stopped by {by} before it started: {reason.strip()}"
        if task_id in scheduler.jobs and not scheduler.hold(task_id, Outcome("blocked", note)):
            raise MaestroError(
                f"this run has already started Task {task_id}.",
                f"run `maestro task stop {task_id}` again: it ends its spoke if it still runs.",
            )
        options = ladder.decision_options(task_id, installed)
        fix = f"run it again with `maestro run {task_id}` when it should go on."
        with store.edit_task(task_id) as edited:
            edited.status, edited.finished = "blocked", clock.iso()
            edited.result = f"{note} Fix: {fix} {ladder.decision_text(options)}"
        emit("task_blocked", task=task_id, reason=note, fix=fix)
        emit("decision", task=task_id, status="blocked", reason=note, options=options)
        log_row(
            log,
            action="Stop",
            target=f"Task {task_id}",
            tool=None,
            result=None,
            ok=False,
            outcome=note[:120],
            notes="before it started",
            task=task_id,
        )
        return {"task": task_id, "was": "pending", "status": "blocked", "reason": note}

    return stop

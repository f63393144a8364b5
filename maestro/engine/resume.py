"""Picking up after an engine that died (crash, SIGKILL, a closed laptop).

Called by a new run right after it took the project's run lock. Holding that lock proves
no other engine works on this project, so every task still marked ``running`` was left
by a dead one: it goes back to ``pending`` (its attempt stays counted), a log row and a
``recovered`` event say so, and the next scheduling pass runs it again. Done tasks are
never touched, so they never run twice.

A real spoke runs in its own process group and can outlive the engine that started it.
Its session records its process (``SessionStore.attach_process``: the pid with its start
time, where no spoke writes); recovery stops the sessions of the dead run's task that are
still working through that record, so a pid since reused is never signalled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maestro import clock
from maestro.bus.sessions import NO_PROCESS, USER, SessionStore
from maestro.errors import MaestroError
from maestro.logfile import LogRow
from maestro.paths import ProjectPaths

if TYPE_CHECKING:
    from maestro.logfile import ExecutionLog
    from maestro.state.model import Plan
    from maestro.state.store import PlanStore


@dataclass
class Recovered:
    task: str
    previous_run: str | None
    attempts: int
    stopped_spoke: int | None = None


def stop_leftover_spoke(paths: ProjectPaths, run_id: str | None, task_id: str) -> int | None:
    """Stop what run ``run_id`` left working for the task: each session of it still
    working, by the process its record names. The pid of the spoke stopped, or None."""
    if not run_id:
        return None
    store = SessionStore(paths)
    stopped = None
    for session in store.of_task(task_id):
        if session.data.get("run_id") != run_id or session.recorded_status != "working":
            continue
        with contextlib.suppress(MaestroError):
            _, done = store.stop(session.id, f"run {run_id} stopped while it ran", USER)
            if done != NO_PROCESS:
                stopped = session.data["process"]["pid"]
    return stopped


def recover(
    store: PlanStore,
    plan: Plan,
    paths: ProjectPaths,
    emit: Callable[..., object],
    log: ExecutionLog,
) -> list[Recovered]:
    """Tasks left running by a dead engine (in ``plan``, as loaded) back to pending. The
    caller holds the run lock."""

    if not any(t.status == "running" for t in plan.tasks):
        return []
    found: list[Recovered] = []
    with store.edit() as editable:
        for task in editable.tasks:
            if task.status != "running":
                continue
            found.append(Recovered(task.id, task.run_id, task.attempts))
            task.status = "pending"
            task.pid = None
            task.result = (
                f"Recovered: run {task.run_id or '?'} stopped while attempt {task.attempts} was running; "
                "back to pending."
            )
    for item in found:
        item.stopped_spoke = stop_leftover_spoke(paths, item.previous_run, item.task)
        emit(
            "recovered",
            task=item.task,
            previous_run=item.previous_run,
            attempts=item.attempts,
            stopped_spoke=item.stopped_spoke,
        )
        note = f"attempt {item.attempts} of run {item.previous_run or '?'} was cut off"
        if item.stopped_spoke:
            note += f"; its leftover spoke (pid {item.stopped_spoke}) was stopped"
        log.append(
            LogRow(
                time=clock.iso(),
                actor="Hub",
                action="Recover",
                target=f"Task {item.task}",
                tokens=None,
                duration_s=None,
                outcome="back to pending",
                notes=note,
                task=item.task,
            )
        )
    return found

"""Picking up after an engine that died (crash, SIGKILL, a closed laptop).

Called by a new run right after it took the project's run lock. Holding that lock proves
no other engine works on this project, so every task still marked ``running`` was left
by a dead one: it goes back to ``pending`` (its attempt stays counted), a log row and a
``recovered`` event say so, and the next scheduling pass runs it again. Done tasks are
never touched, so they never run twice.

A real spoke runs in its own process group and can outlive the engine that started it.
The engine records each spoke's pid in the run folder; recovery stops such a leftover,
but only after checking, in ``/proc/<pid>/environ``, that the process really is that
run's spoke for that task (a pid can be reused).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from maestro import clock
from maestro.logfile import LogRow
from maestro.paths import ProjectPaths
from maestro.pids import pid_alive, proc_environ, signal_group, stop_gracefully

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


def _is_spoke_of(pid: int, run_id: str, task_id: str) -> bool:
    env = proc_environ(pid) or {}
    return (
        env.get(b"MAESTRO_RUN_ID") == run_id.encode()
        and env.get(b"MAESTRO_TASK_ID") == task_id.encode()
    )


def stop_leftover_spoke(
    paths: ProjectPaths, run_id: str | None, task_id: str, grace_s: float = 3.0
) -> int | None:
    if not run_id:
        return None
    record = paths.runs_dir / run_id / f"spoke-{task_id}.pid"
    try:
        pid = int(record.read_text().strip())
    except (OSError, ValueError):
        return None
    if pid == os.getpid() or not pid_alive(pid) or not _is_spoke_of(pid, run_id, task_id):
        record.unlink(missing_ok=True)
        return None
    stop_gracefully(lambda sig: signal_group(pid, sig), lambda: pid_alive(pid), grace_s)
    record.unlink(missing_ok=True)
    return pid


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

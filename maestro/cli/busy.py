"""Refusing to replace or move the plan while a run is working on it.

`plan --from` and `archive` swap the plan file for another one (or for none). A live
engine holds the run lock from start to end, also between two dispatches when no task is
marked running, and it would go on to execute a plan that is not the one it started, or
die with "no plan". So the lock decides, not the task statuses alone.
"""

from __future__ import annotations

from typing import Any

from maestro.errors import StateConflict
from maestro.paths import ProjectPaths


def refuse_while_running(paths: ProjectPaths, plan: Any, doing: str) -> None:
    """Raise StateConflict while a run holds the run lock, or while a task of ``plan``
    (None: not read) is marked running by a live process. ``doing`` says what would
    happen: "re-planning", "archiving"."""
    from maestro.cli.status import pid_alive
    from maestro.engine.runs import RunLock

    fix = "follow the run to its end with `maestro wait`, or stop it with `maestro run --abort`; then run this again."
    lock = RunLock(paths)
    # No lock file: no run ever started here (and holder() would create the folder).
    holder = lock.holder() if lock.path.exists() else None
    if holder is not None:
        who = f"run {holder.get('run_id', '?')} (pid {holder.get('pid', '?')})"
        raise StateConflict(f"a Maestro run is working on the plan: {who}; {doing} now would change the plan "
                            "under it.", fix)
    busy = [t for t in plan.tasks if t.status == "running" and pid_alive(t.pid)] if plan is not None else []
    if busy:
        raise StateConflict(f"Task {busy[0].id} of the plan is running (process {busy[0].pid}); {doing} now would "
                            "change the plan under it.", fix)

"""Refusing to replace or move the plan while a run is working on it.

`plan --from` and `archive` swap the plan file for another one (or for none). A live
engine holds the run lock from start to end, also between two dispatches when no task is
marked running, and it would go on to execute a plan that is not the one it started, or
die with "no plan". So the lock decides, and only the lock.
"""

from __future__ import annotations

from maestro.engine.rundir import RunLock
from maestro.errors import StateConflict
from maestro.paths import ProjectPaths


def refuse_while_running(paths: ProjectPaths, doing: str) -> None:
    """Raise StateConflict while a run holds the run lock: that is what a live engine
    means (a task's recorded pid is no test: it may come from another PID namespace or
    have been reused). ``doing`` says what would happen: "re-planning", "archiving"."""

    holder = RunLock(paths).holder()
    if holder is not None:
        who = f"run {holder.get('run_id', '?')} (pid {holder.get('pid', '?')})"
        raise StateConflict(
            f"a Maestro run is working on the plan: {who}; {doing} now would change the plan "
            "under it.",
            "follow the run to its end with `maestro wait`, or stop it with `maestro run --abort`; "
            "then run this again.",
        )

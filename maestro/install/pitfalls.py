"""The known pitfalls `maestro doctor` looks for that are no one CLI's (each CLI's own are
in its module, ``Cli.checks``): each a function of the situation that returns a finding
with its fix, or None."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from maestro.install.checks import Check, Situation
from maestro.repo import Repo


def _inside_spoke(s: Situation) -> Check | None:
    if s.env.get("MAESTRO_SPOKE") != "1":
        return None
    return Check(
        "pitfalls",
        "inside a spoke",
        "info",
        "MAESTRO_SPOKE=1: this shell belongs to a task Maestro dispatched; `maestro run` refuses here.",
        "run Maestro from the hub session, not from a spoke.",
    )


def _stale_worktrees(s: Situation) -> Check | None:
    """Worktrees a killed run left (``maestro run`` removes them at its start) and entries
    ``git worktree prune`` would drop."""
    repo = Repo.find(s.project_root)
    if repo is None:
        return None
    found = repo.stale_worktrees(s.machine_dir / "worktrees")
    if not found:
        return None
    left = [str(f.path) for f in found if not f.kept and not f.prunable]
    kept = [str(f.path) for f in found if f.kept]
    prunable = [str(f.path) for f in found if f.prunable]
    parts = []
    if left:
        parts.append(f"{len(left)} worktree(s) a stopped run left: {', '.join(left)}")
    if kept:
        parts.append(f"{len(kept)} kept by --keep-worktrees: {', '.join(kept)}")
    if prunable:
        parts.append(f"{len(prunable)} registered with git, folder gone: {', '.join(prunable)}")
    # `maestro run` clears what a stopped run left and prunes; kept ones stay until the
    # person removes them, so the fix must not promise that a run will.
    fixes = []
    if left or prunable:
        fixes.append("`maestro run` removes a stopped run's worktrees when it starts")
    if kept:
        fixes.append("kept worktrees stay until you remove them")
    fixes.append("by hand: `git worktree remove --force PATH` for each, then `git worktree prune`.")
    return Check(
        "pitfalls",
        "stale worktrees",
        "warn" if left or prunable else "info",
        "; ".join(parts) + ".",
        "; ".join(fixes),
    )


SQLITE_SINCE = (3, 35, 0)  # UPDATE ... RETURNING, which the mailbox marks mail read with


def _old_sqlite(s: Situation) -> Check | None:
    if sqlite3.sqlite_version_info >= SQLITE_SINCE:
        return None
    return Check(
        "pitfalls",
        "sqlite",
        "fail",
        f"this Python's SQLite is {sqlite3.sqlite_version}; Maestro's mailbox needs 3.35 or "
        "newer (UPDATE ... RETURNING), so runs and `maestro mail` fail.",
        "run Maestro with a Python built against SQLite 3.35+ (python.org, Homebrew, uv or "
        "a current Linux distribution's python3).",
    )


PITFALLS: tuple[Callable[[Situation], Check | None], ...] = (
    _inside_spoke,
    _stale_worktrees,
    _old_sqlite,
)

"""One attempt's worktree and what it changed: the records the workspace (workspace.py)
makes and the landing (landing.py) reads, and the folder that holds them."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro.engine.guard import Found, Mark
from maestro.fsutil import private_folder
from maestro.paths import ProjectPaths
from maestro.repo import KEEP_SUFFIX, Repo, TreeChange, in_use

# Written by tools and test runners, never deliverables.
NOISE = (
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".coverage",
    ".tox",
    ".nox",
    "node_modules/.cache",
)
ZERO = re.compile(r"^0+$")
WORKTREE_INCLUDE = ".worktreeinclude"  # the convention Claude Code's worktrees read


def noise_globs(prefix: str = "") -> list[str]:
    globs = []
    for noise in NOISE:
        globs += [f"{prefix}**/{noise}", f"{prefix}**/{noise}/**"]
    return globs


@dataclass
class Worktree:
    name: str
    path: Path  # the worktree's top folder
    root: Path  # the project inside it (the top, or the project's sub-folder)
    base: str  # the commit it started from
    index: Path  # the private index that reads it
    mark: Mark | None = None  # the user's tree and repository when it was made
    found: Found | None = None  # what changed outside it meanwhile, put back


@dataclass(frozen=True)
class Unlandable:
    """A file of an attempt's work that must not or cannot land, why, and the fix."""

    path: str  # project-relative
    why: str
    fix: str

    def line(self) -> str:
        return f"{self.path} {self.why}"


@dataclass
class Measured:
    """What one attempt changed in its worktree, against the commit it started from."""

    tree: str
    changes: list[TreeChange]
    files: list[str]  # project-relative, sorted
    out_of_scope: list[str]
    outside: list[str]  # changed outside the worktree while it ran (put back)
    patch: str
    diff_stat: str
    diff_sha: str | None
    saved: str = ""  # where the versions found outside were put (project-relative)


@dataclass(frozen=True)
class Scope:
    """What one dispatch changed, as the scope gate judges it (gates.scope_gate), from
    either workspace: its own worktree or the shared tree."""

    out_of_scope: list[str]  # changed outside its Files
    # Unowned paths changed while other tasks ran too (only in the shared tree).
    ambiguous: list[str] = field(default_factory=list)
    checked: bool = True  # False: its changes cannot be measured (not a git repository)
    # Changed in the user's tree or repository while it ran (put back), and where the
    # versions found were saved (project-relative).
    outside: list[str] = field(default_factory=list)
    saved: str = ""
    unmeasured: list[str] = field(default_factory=list)  # claimed, yet no change at all
    unlandable: list[Unlandable] = field(default_factory=list)  # see Landings.unlandable


def shortstat(patch: str, files: int) -> str:
    plus = minus = 0
    in_hunk = False
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            plus += 1
        elif in_hunk and line.startswith("-"):
            minus += 1
    parts = [f"{files} file{'s' if files != 1 else ''} changed"]
    if plus:
        parts.append(f"{plus} insertion{'s' if plus != 1 else ''}(+)")
    if minus:
        parts.append(f"{minus} deletion{'s' if minus != 1 else ''}(-)")
    return ", ".join(parts)


def claimed_paths(parsed: Any) -> list[str]:
    """Files a spoke's answer says it created or modified."""
    found: list[str] = []
    submission = getattr(parsed, "submission", None)
    for line in getattr(submission, "changes", []) or []:
        head = str(line).split(":", 1)[0].strip().strip("`")
        if head and " " not in head:
            found.append(head)
    handoff = getattr(parsed, "handoff", None)
    report = getattr(handoff, "task_report", {}) or {}
    for key in ("Files Created", "Files Modified"):
        for item in str(report.get(key, "")).split(","):
            item = item.strip().strip("`")
            if item and item.lower() not in ("none", "-", "n/a") and " " not in item:
                found.append(item)
    return found


def guard_dir(paths: ProjectPaths, fallback: Path) -> Path:
    """Where the guard's private index lives: its stat data decides which files are read
    again, so a spoke must not be able to write it (never under ``.ai/maestro``, which a
    Codex spoke is granted). What dead runs left there goes (named, like worktrees, by
    their maker's pid: repo.in_use)."""
    folder = paths.private_dir / "guard"
    if not private_folder(folder, create=True):
        return fallback  # no private folder (a read-only home): as private as it gets
    for left in folder.glob(".*.index"):
        if not in_use(left):
            left.unlink(missing_ok=True)
    return folder


def worktrees_dir(paths: ProjectPaths) -> Path:
    return paths.machine_dir / "worktrees"


def clean_stale(paths: ProjectPaths, repo: Repo) -> list[Path]:
    """Remove what dead processes left (a run killed with SIGKILL): every worktree of
    Maestro's not kept on purpose and whose creator is gone, folders git no longer knows,
    and prunable entries."""
    removed = []
    where = worktrees_dir(paths)
    listed = repo.worktrees()
    stale = repo.stale_worktrees(where, listed)
    for entry in stale:
        if not entry.kept and not entry.prunable and not in_use(entry.path):
            repo.remove_worktree(entry.path)
            removed.append(entry.path)
    if where.is_dir():
        # (The folders just removed are gone: the listing before is the one that counts.)
        known = {e.path.resolve() for e in listed}
        for child in where.iterdir():
            if child.is_dir() and child.resolve() not in known:
                if not (where / f"{child.name}{KEEP_SUFFIX}").exists() and not in_use(child):
                    shutil.rmtree(child, ignore_errors=True)
                    removed.append(child)
            elif child.name.endswith((".index", ".index.lock")) and not in_use(child):
                child.unlink(missing_ok=True)  # (the lock: git's, left by a process killed)
    if removed or any(entry.prunable for entry in stale):
        repo.prune_worktrees()  # else nothing to prune: one git process saved per run
    return removed

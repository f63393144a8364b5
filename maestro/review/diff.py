"""The task's diff as text, for the reviewer, and its fingerprint.

A task a run did in its own worktree has its exact change recorded as a commit
(``Receipt.change``): the review reads that, whatever the live tree holds now. Otherwise
the diff covers the task's own files (its ``Files`` and whatever its receipt says it
changed), from the commit that was HEAD when the task ran (its receipt's ``commit``, so
work a person committed since still shows) or else HEAD, to the working tree; new
untracked files are shown whole. Its sha256 is the fingerprint a review records: a diff
with the fingerprint of the last reviewed one is not reviewed again. Git runs through
``maestro.git``, like every git call Maestro makes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from maestro.errors import MaestroError
from maestro.git import run_git
from maestro.repo import Repo
from maestro.state.model import Task

DIFF_MAX_CHARS = 60_000


def _git(root: Path, *args: str) -> tuple[int | None, str]:
    outcome = run_git(*args, cwd=root, timeout_s=60)
    return outcome.exit_code, outcome.stdout


def task_files(task: Task) -> list[str]:
    changed = task.receipt.files_changed if task.receipt else []
    return sorted(set(task.files) | set(changed))


def base_commit(root: Path, task: Task) -> str | None:
    candidates = [task.receipt.commit] if task.receipt and task.receipt.commit else []
    for ref in (*candidates, "HEAD"):
        code, out = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if code == 0 and out.strip():
            return out.strip()
    return None


def task_diff(root: Path, task: Task) -> str:
    files = task_files(task)
    if not files:
        return ""
    base = base_commit(root, task)
    parts: list[str] = []
    if base:
        code, text = _git(root, "diff", base, "--", *files)
        if code != 0:
            raise MaestroError(
                f"git could not diff Task {task.id}'s files against {base[:12]}.",
                "check the repository with `git status`.",
            )
        parts.append(text)
    code, listed = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", *files)
    new = [p for p in listed.split("\0") if p]
    if code != 0:
        # Not a git repository: every task file that exists is shown whole.
        new = [f for f in files if (root / f).is_file()]
    elif base is None:
        # No commit yet: staged files are new too.
        new += [
            p for p in _git(root, "ls-files", "--cached", "-z", "--", *files)[1].split("\0") if p
        ]
    for path in sorted(set(new)):
        # --no-index exits 1 when the files differ, which they always do here.
        parts.append(_git(root, "diff", "--no-index", "--", "/dev/null", path)[1])
    return "".join(parts)


def change_diff(root: Path, task: Task) -> str | None:
    """The task's exact change: the commit its run recorded (a run in worktrees), against
    the commit it started from; None when there is none (a task run in place, or the
    objects are gone)."""

    change = task.receipt.change if task.receipt else None
    repo = Repo.find(root) if change else None
    if repo is None or change is None:
        return None
    parent = repo.parent(change)
    if parent is None:
        return None
    return repo.patch(parent, change)


def diff_sha(diff_text: str) -> str:
    return hashlib.sha256(diff_text.encode("utf-8")).hexdigest()


def clip(diff_text: str, limit: int = DIFF_MAX_CHARS) -> str:
    """The diff for the prompt; a huge one is cut with a note saying so."""
    if len(diff_text) <= limit:
        return diff_text
    return (
        diff_text[:limit]
        + f"\n... (diff cut at {limit:,} of {len(diff_text):,} characters; read the files)\n"
    )

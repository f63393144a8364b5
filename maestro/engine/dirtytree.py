"""Uncommitted changes to the files a run's tasks own, found before the run starts.

A task's change to a file replaces what the file held when the run began: in place the
spoke writes the user's working tree itself; in worktrees its spoke starts from a snapshot
that holds the person's uncommitted edit and its accepted version lands over it. Either
way a person's uncommitted edit to a file a task owns would be replaced without a word
(an edit made *while* a run works is another matter: a landing merges it three-way and
never overwrites it). ``maestro run`` therefore lists,
before anything starts, the uncommitted changes (modified, staged, deleted or untracked,
against HEAD; ignored files and the state dir aside) to files owned by the tasks it may
start, and asks on a terminal; elsewhere it refuses unless ``--allow-dirty``.

Changes a run made are not a person's: when a run ends, each uncommitted file that tasks
own and that the run changed is recorded with the sha256 of its content
(``left-by-runs.json`` in the project's private folder, ``ProjectPaths.private_dir``). A
file that still holds exactly that content is not reported again, so a task depending on
another's uncommitted work, or a failed task run again, starts without asking. A file
edited after that no longer matches and is reported. The record is not under
``.ai/maestro/``, which a spoke may write: one naming the person's own edit would let a
task overwrite it unasked.

Limits, plainly: a project that is not a git repository has no check (nothing tells an
edit apart from the file's committed state); tasks a dead engine left running are
recovered without one (their files hold that engine's partial work); a change a person
makes while a run works is recorded as the run's; and a review's revision (`maestro
review`) is not recorded, so a later task owning the file the revision changed asks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro.engine.ownership import owned_by_any
from maestro.errors import MaestroError
from maestro.fsutil import atomic_write, private_folder, read_private
from maestro.paths import ProjectPaths
from maestro.repo import Repo
from maestro.state.store import PlanStore

if TYPE_CHECKING:
    from maestro.state.model import Plan

RECORD_FORMAT = 1
DELETED = "deleted"


@dataclass(frozen=True)
class Change:
    path: str  # relative to the project root
    state: str  # modified | added | deleted | untracked
    tasks: tuple[str, ...]  # ids of the tasks that own it

    def describe(self) -> str:
        owners = ", ".join(f"Task {t}" for t in self.tasks)
        return f"{self.path} ({self.state}; {owners})"


def _state(code: str) -> str:
    if code == "??":
        return "untracked"
    if "D" in code:
        return "deleted"
    if "A" in code:
        return "added"
    return "modified"


def _exclude(paths: ProjectPaths) -> list[str]:
    state = paths.state_dir
    return (
        [str(state.relative_to(paths.root))]
        if state.is_relative_to(paths.root) and state != paths.root
        else []
    )


def uncommitted(paths: ProjectPaths) -> dict[str, str] | None:
    """Every uncommitted path of the project (relative to its root) and its state, or
    None outside a git repository."""
    repo = Repo.find(paths.root)
    if repo is None:
        return None
    prefix = repo.prefix
    spec = ["."] + [f":(exclude){e}" for e in _exclude(paths)]
    out = repo.run(
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules=dirty",
        "--",
        *spec,
        cwd=paths.root,
    ).stdout
    found: dict[str, str] = {}
    for entry in out.split("\0"):
        if len(entry) < 4:
            continue
        path = entry[3:]  # porcelain paths are relative to the repository's top
        if path.startswith(prefix):
            found[path[len(prefix) :]] = _state(entry[:2])
    return found


def _content_hash(path: Path) -> str:
    try:
        if path.is_symlink():
            return "link:" + os.readlink(path)
        if path.is_dir():
            return "folder"
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return DELETED


def _owned(paths: Iterable[str], entries: list[str]) -> list[str]:
    return [p for p in paths if owned_by_any(entries, p)]


def _record_path(paths: ProjectPaths) -> Path:
    return paths.private_dir / "left-by-runs.json"


def _load_record(paths: ProjectPaths) -> dict[str, str]:
    try:
        data = json.loads(read_private(_record_path(paths)) or b"{}")
    except ValueError:
        return {}  # none yet, or unreadable: every change is then asked about
    files = (
        data.get("files")
        if isinstance(data, dict) and data.get("format") == RECORD_FORMAT
        else None
    )
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def owned_changes(
    paths: ProjectPaths,
    plan: Any,
    task_id: str | None,
    changed: dict[str, str] | None = None,
) -> list[Change]:
    """Uncommitted changes to files owned by the tasks a run may start (every pending task,
    or the one named while it is not done), less those a run left as they are now.
    ``changed``: what `uncommitted` returned, when the caller has it already."""
    if task_id is None:
        tasks = [t for t in plan.tasks if t.status == "pending"]
    else:
        named = plan.find(task_id)
        tasks = [named] if named is not None and named.status != "done" else []
    tasks = [t for t in tasks if t.files]
    if not tasks:
        return []
    changed = uncommitted(paths) if changed is None else changed
    if not changed:
        return []
    left = _load_record(paths)
    found = []
    for path, state in sorted(changed.items()):
        owners = tuple(t.id for t in tasks if owned_by_any(t.files, path))
        if owners and left.get(path) != _content_hash(paths.root / path):
            found.append(Change(path, state, owners))
    return found


def refusal(paths: ProjectPaths, changes: list[Change], *, asked: bool = False) -> MaestroError:
    """The one-line error for uncommitted changes the run would work on top of. Its stash
    leaves the state dir out: a plan not yet committed would go into the stash with the
    rest, and the next `maestro run` would find no plan."""
    shown = "; ".join(c.describe() for c in changes[:8])
    if len(changes) > 8:
        shown += f"; and {len(changes) - 8} more"
    how = "answer y when asked" if asked else "run again with --allow-dirty"
    stash = "git stash -u" + "".join(f" -- {shlex.quote(':!' + s)}" for s in _exclude(paths))
    return MaestroError(
        f"run not started: uncommitted changes to {len(changes)} file(s) the tasks own, which a task "
        f"may overwrite: {shown}.",
        f"commit or stash them first (`{stash}`), or, if the person who made them agrees, {how} "
        "to let the tasks work on top of them.",
    )


class Recorder:
    """Around one run: what the tasks' files held before, and after it the record of what
    the run left (see the module doc). Never fails the run: it only saves asking later."""

    def __init__(
        self, paths: ProjectPaths, changed: dict[str, str] | None = None, plan: Plan | None = None
    ) -> None:
        """``changed`` and ``plan``: what `uncommitted` returned and the plan loaded just
        now, when the caller has them (the check before the run), so neither ``git
        status`` nor the parse is done twice."""
        self.paths = paths
        self.before = self._hashes(changed, plan)

    def _hashes(
        self, changed: dict[str, str] | None = None, plan: Plan | None = None
    ) -> dict[str, str] | None:
        try:
            store = PlanStore(self.paths)
            if plan is None and not store.exists():
                return None
            entries = [entry for task in (plan or store.load()).tasks for entry in task.files]
            changed = uncommitted(self.paths) if changed is None else changed
        except (MaestroError, OSError):
            return None
        if changed is None:
            return None
        return {p: _content_hash(self.paths.root / p) for p in _owned(changed, entries)}

    def finish(self) -> None:
        if self.before is None:
            return
        after = self._hashes()
        if after is None:
            return
        earlier = _load_record(self.paths)
        files = {p: h for p, h in after.items() if self.before.get(p) != h or earlier.get(p) == h}
        path = _record_path(self.paths)
        if not private_folder(path.parent, create=True):
            return
        try:
            atomic_write(
                path,
                json.dumps({"format": RECORD_FORMAT, "files": files}, indent=1, sort_keys=True)
                + "\n",
                mode=0o600,
                durable=False,
            )
        except (MaestroError, OSError):
            pass  # the record only spares a question; the run's own outcome matters more

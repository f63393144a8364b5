"""The shared working tree as a run's workspace (``--in-place``, or outside git): what a
dispatch really changed, measured with git, and the receipt that records it.

A snapshot is the whole working tree written as a git tree object: ``git add -A`` into a
private index (``GIT_INDEX_FILE``, never the user's index), then ``git write-tree``.
Tracked and untracked files are included, ignored ones are not (.gitignore is honoured),
and neither HEAD, the index nor any ref changes; the blobs it writes are unreachable
objects that ``git gc`` prunes. Two snapshots compare with ``git diff-tree``, of which a
project in a sub-folder of a repository sees its own paths.

Concurrent tasks share one working tree, so changes are attributed by *intervals*: a
snapshot is taken whenever a writer (a spoke, or a validation command) starts or stops,
so between two consecutive snapshots the set of writers is constant. A path changed in
an interval belongs to:

- the running task whose ``Files`` own it (two running tasks never own the same file);
- else, if exactly one task's spoke was writing then (and no validation command), that
  task: it is an out-of-scope edit, and the scope gate sees it;
- else nobody can tell: every task writing in that interval gets it as *ambiguous*
  (reported, a warning, never a failure), and a change made while nothing ran (a person
  editing, a validation command alone) is recorded as the run's *unattributed* change.

A task's changes are then narrowed to its *net* change: paths that differ between the
tree when it first began and the tree when it ends. A file that appeared and vanished
within its life (a temp file of an atomic write, a scratch file) is not a change, even
when an interval boundary fell while it existed.

Limits, stated plainly: a task that edits a file another running task owns is credited to
the owner; a spoke that keeps writing after its process group was killed cannot; and
paths under the state dir and common caches (``__pycache__``, ``.pytest_cache``, ...)
are not measured (the engine itself and validation commands write there).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from maestro.engine.guard import Found
from maestro.engine.ownership import owned_by_any
from maestro.engine.worktree import Measured, Scope, noise_globs, shortstat
from maestro.paths import ProjectPaths
from maestro.repo import Repo
from maestro.state.model import Receipt, Task

if TYPE_CHECKING:
    from maestro.engine.landing import Landing
    from maestro.prompts.results import ParsedResult


@dataclass
class Changes:
    """What one task changed, as attributed so far."""

    owned: set[str] = field(default_factory=set)
    out_of_scope: set[str] = field(default_factory=set)
    ambiguous: set[str] = field(default_factory=set)
    first_tree: str | None = None
    last_tree: str | None = None

    @property
    def files(self) -> list[str]:
        return sorted(self.owned | self.out_of_scope)


class Observer:
    """Attributes working-tree changes to writers by snapshot intervals (see module doc).

    A writer is ``("spoke", task_id)`` or ``("validate", task_id)``. ``owners`` maps a task
    id to its Files entries.
    """

    def __init__(
        self, root: Path, owners: Callable[[str], list[str]], *, exclude: Iterable[str] = ()
    ) -> None:
        """``exclude``: globs (relative to ``root``) of paths never measured."""
        self.root = root
        self.owners = owners
        self.repo = Repo.find(root)
        prefix = self.repo.prefix if self.repo is not None else ""
        self.exclude = [*noise_globs(), *(prefix + e for e in exclude)]
        # A private index (never the user's) reads the tree: beside the user's, whose stat
        # data it starts from.
        index = self.repo.index if self.repo is not None else None
        self.index = index.with_name("maestro-snapshot.index") if index is not None else None
        self._lock = threading.Lock()
        self._writers: set[tuple[str, str]] = set()
        self._last: str | None = None
        self.tasks: dict[str, Changes] = {}
        self.unattributed: set[str] = set()

    @classmethod
    def of_run(cls, paths: ProjectPaths, owners: Callable[[str], list[str]]) -> Observer:
        """A run's, in the project's working tree: the state dir is not measured."""
        observer = cls(paths.root, owners)
        repo, state = observer.repo, paths.state_dir
        if repo is not None and state.is_relative_to(paths.root):
            name = f"{repo.prefix}{state.relative_to(paths.root)}"
            # An exclude pathspec naming an ignored folder makes git 2.39 refuse the command.
            if name not in repo.ignored([name]):
                observer.exclude.append(name + "/**")
        return observer

    def _snapshot(self) -> str:
        assert self.repo is not None and self.index is not None
        return self.repo.snapshot(self.repo.top, self.index, exclude=self.exclude)

    def _changed(self, before: str, after: str) -> list[str]:
        """The project's paths (relative to its root) that differ between two snapshots."""
        assert self.repo is not None
        prefix = self.repo.prefix
        changes = self.repo.tree_changes(before, after)
        return [c.path[len(prefix) :] for c in changes if c.path.startswith(prefix)]

    # -- the shared tree as a run's workspaces (context.Workspaces) -------------------------
    @property
    def measures(self) -> bool:
        return self.index is not None

    def open(self, task: Task) -> InPlace:
        return InPlace(self, task.id)

    def refuse_submodule_work(self, tasks: Sequence[Task]) -> None:
        """Nothing to refuse: a spoke in the shared tree sees every nested repository."""

    def release(self, change: str) -> None:
        """Nothing to release: the shared tree makes no change commits."""

    def closing_note(self) -> str:
        return ""

    def close(self) -> None:
        """Nothing to remove."""

    def _advance(self) -> str:
        now = self._snapshot()
        if self._last is not None and now != self._last:
            for path in self._changed(self._last, now):
                self._attribute(path)
        self._last = now
        return now

    def _attribute(self, path: str) -> None:
        spokes = sorted({tid for kind, tid in self._writers if kind == "spoke"})
        owners = [tid for tid in spokes if owned_by_any(self.owners(tid), path)]
        if owners:
            for tid in owners:
                self.tasks[tid].owned.add(path)
        elif len(spokes) == 1 and len(self._writers) == 1:
            self.tasks[spokes[0]].out_of_scope.add(path)
        elif spokes:
            for tid in spokes:
                self.tasks[tid].ambiguous.add(path)
        else:
            self.unattributed.add(path)

    def begin(self, kind: str, task_id: str) -> None:
        if not self.measures:
            return
        with self._lock:
            now = self._advance()
            changes = self.tasks.setdefault(task_id, Changes())
            if changes.first_tree is None:
                changes.first_tree = now
            self._writers.add((kind, task_id))

    def end(self, kind: str, task_id: str) -> Changes:
        changes = self.tasks.setdefault(task_id, Changes())
        if not self.measures:
            return changes
        with self._lock:
            now = self._advance()
            self._writers.discard((kind, task_id))
            changes.last_tree = now
            if changes.first_tree is not None and (
                changes.owned or changes.out_of_scope or changes.ambiguous
            ):
                net = set(self._changed(changes.first_tree, now))
                changes.owned &= net
                changes.out_of_scope &= net
                changes.ambiguous &= net
        return changes

    def receipt(
        self, task_id: str, *, validation: str | None, validation_exit: int | None
    ) -> Receipt:
        changes = self.tasks.get(task_id, Changes())
        receipt = Receipt(validation=validation, validation_exit=validation_exit)
        if not self.measures:
            return receipt
        assert self.repo is not None
        receipt.commit = self.repo.head()
        receipt.files_changed = changes.files
        if changes.first_tree and changes.last_tree and changes.files:
            paths = [self.repo.prefix + f for f in changes.files]
            patch = self.repo.patch(changes.first_tree, changes.last_tree, paths)
            receipt.diff_stat = shortstat(patch, len(changes.files))
            receipt.diff_sha = hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest()
        return receipt


class InPlace:
    """One dispatch in the shared working tree (a ``context.Workspace``): what it changed
    is attributed by the run's observer, the spoke's and its validation command's writes
    each as one writer's (see the module doc)."""

    measured: Measured | None = None  # nothing is read exactly in the shared tree
    landing: Landing | None = None  # nor landed: the spoke wrote the user's tree itself

    def __init__(self, observer: Observer, task_id: str) -> None:
        self.observer, self.task_id = observer, task_id
        self.root = self.check_root = observer.root
        self._changes = Changes()

    @contextlib.contextmanager
    def spoke(self) -> Iterator[None]:
        self.observer.begin("spoke", self.task_id)
        try:
            yield
        finally:
            self._changes = self.observer.end("spoke", self.task_id)

    def changes(self, parsed: ParsedResult) -> Scope:
        changes = self._changes
        return Scope(
            sorted(changes.out_of_scope), sorted(changes.ambiguous), self.observer.measures
        )

    @contextlib.contextmanager
    def validation(self) -> Iterator[Found]:
        self.observer.begin("validate", self.task_id)
        try:
            yield Found(self.task_id)  # (nothing is put back in the shared tree)
        finally:
            self.observer.end("validate", self.task_id)

    def finish(self, accepted: bool) -> None:
        """Nothing to land: the spoke wrote the user's tree itself."""

    def receipt(self, validation: str | None, validation_exit: int | None) -> Receipt:
        """The task's changes so far (every attempt of this run)."""
        return self.observer.receipt(
            self.task_id, validation=validation, validation_exit=validation_exit
        )

    def close(self, keep: bool) -> Path | None:
        return None  # nothing to remove

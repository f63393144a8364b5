"""What a dispatch really changed, measured with git, and the receipt that records it.

A snapshot is the whole working tree written as a git tree object: ``git add -A`` into a
private index (``GIT_INDEX_FILE``, never the user's index), then ``git write-tree``.
Tracked and untracked files are included, ignored ones are not (.gitignore is honoured),
and neither HEAD, the index nor any ref changes; the blobs it writes are unreachable
objects that ``git gc`` prunes. Two snapshots compare with ``git diff --relative`` (names, shortstat,
the patch itself), so a project in a sub-folder of a repository sees its own paths.

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

import hashlib
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from maestro.engine.ownership import owned_by_any
from maestro.engine.worktree import NOISE
from maestro.git import GitError, run_git
from maestro.state.model import Receipt


class GitTree:
    """Snapshots and diffs of one working tree."""

    def __init__(
        self,
        root: Path,
        *,
        exclude: Iterable[str] = (),
        index_path: Path | None = None,
        probe: bool = True,
    ) -> None:
        self.root = Path(root)
        self.exclude = [e for e in exclude if e]
        self._index = index_path
        self._gitdir: Path | None = None
        self._real_index: Path | None = None
        self.prefix = ""  # the root's path inside the repository ("" at its top, else "sub/")
        self._lock = threading.Lock()
        # probe=False: not used (a run in worktrees measures there), so no git process.
        self.is_repo = self._probe() if probe else False

    def _probe(self) -> bool:
        """One git process answers whether this is a work tree and where its git files are."""
        if shutil.which("git") is None:
            return False
        out = run_git(
            "rev-parse",
            "--is-inside-work-tree",
            "--show-prefix",
            "--absolute-git-dir",
            "--git-path",
            "index",
            cwd=self.root,
            timeout_s=30,
        )
        lines = out.stdout.split("\n")
        if out.exit_code != 0 or len(lines) < 4 or lines[0] != "true":
            return False
        self.prefix, self._gitdir = lines[1], Path(lines[2])
        index = Path(lines[3])
        self._real_index = index if index.is_absolute() else self.root / index
        return True

    def git(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        out = run_git(*args, cwd=self.root, extra_env=env)
        if check and (out.exit_code != 0 or out.timed_out):
            raise GitError(
                f"`git {' '.join(args[:3])}` failed in {self.root}: {' '.join(out.stderr.split())[:300]}",
                "check the repository with `git status`.",
            )
        return out.stdout

    def _pathspec(self) -> list[str]:
        spec = ["."]
        spec += [f":(exclude,glob){e}" for e in self.exclude]
        for noise in NOISE:
            spec += [f":(exclude,glob)**/{noise}", f":(exclude,glob)**/{noise}/**"]
        return spec

    @property
    def gitdir(self) -> Path:
        if self._gitdir is None:
            self._gitdir = Path(self.git("rev-parse", "--absolute-git-dir").strip())
        return self._gitdir

    def head(self) -> str | None:
        """HEAD's commit (None before the first commit)."""
        return self.git("rev-parse", "--verify", "-q", "HEAD", check=False).strip() or None

    def snapshot(self) -> str:
        """The working tree now, as a tree sha."""
        index = self._index_file()
        env = {"GIT_INDEX_FILE": str(index)}
        with self._lock:
            self.git("add", "-A", "--", *self._pathspec(), env=env)
            return self.git("write-tree", env=env).strip()

    def _index_file(self) -> Path:
        if self._index is None:
            self._index = self.gitdir / "maestro-snapshot.index"
        if not self._index.exists():
            # Start from the user's index so unchanged files are recognised by their
            # stat data instead of being hashed again.
            real = self._real_index
            if real is not None and real.exists():
                shutil.copyfile(real, self._index)
        return self._index

    def changed(self, before: str, after: str) -> list[str]:
        if before == after:
            return []
        out = self.git("diff", "--relative", "--name-only", "-z", "--no-renames", before, after)
        return [p for p in out.split("\0") if p]

    def diff(self, before: str, after: str, paths: list[str]) -> str:
        if not paths or before == after:
            return ""
        return self.git(
            "diff", "--relative", "--binary", "--no-renames", before, after, "--", *paths
        )

    def shortstat(self, before: str, after: str, paths: list[str]) -> str:
        if not paths or before == after:
            return ""
        return self.git(
            "diff", "--relative", "--shortstat", "--no-renames", before, after, "--", *paths
        ).strip()


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

    def __init__(self, tree: GitTree, owners: Callable[[str], list[str]]) -> None:
        self.tree = tree
        self.owners = owners
        self._lock = threading.Lock()
        self._writers: set[tuple[str, str]] = set()
        self._last: str | None = None
        self.tasks: dict[str, Changes] = {}
        self.unattributed: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self.tree.is_repo

    def _advance(self) -> str:
        now = self.tree.snapshot()
        if self._last is not None and now != self._last:
            for path in self.tree.changed(self._last, now):
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
        if not self.enabled:
            return
        with self._lock:
            now = self._advance()
            changes = self.tasks.setdefault(task_id, Changes())
            if changes.first_tree is None:
                changes.first_tree = now
            self._writers.add((kind, task_id))

    def end(self, kind: str, task_id: str) -> Changes:
        changes = self.tasks.setdefault(task_id, Changes())
        if not self.enabled:
            return changes
        with self._lock:
            now = self._advance()
            self._writers.discard((kind, task_id))
            changes.last_tree = now
            if changes.first_tree is not None and (
                changes.owned or changes.out_of_scope or changes.ambiguous
            ):
                net = set(self.tree.changed(changes.first_tree, now))
                changes.owned &= net
                changes.out_of_scope &= net
                changes.ambiguous &= net
        return changes

    def receipt(
        self, task_id: str, *, validation: str | None, validation_exit: int | None
    ) -> Receipt:
        changes = self.tasks.get(task_id, Changes())
        receipt = Receipt(validation=validation, validation_exit=validation_exit)
        if not self.enabled:
            return receipt
        receipt.commit = self.tree.head()
        receipt.files_changed = changes.files
        if changes.first_tree and changes.last_tree and changes.files:
            patch = self.tree.diff(changes.first_tree, changes.last_tree, changes.files)
            receipt.diff_stat = self.tree.shortstat(
                changes.first_tree, changes.last_tree, changes.files
            )
            receipt.diff_sha = hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest()
        return receipt

    def patch(self, task_id: str) -> str:
        """The task's own diff (the files attributed to it), for prompts and reviews."""
        changes = self.tasks.get(task_id)
        if not self.enabled or not changes or not changes.first_tree or not changes.last_tree:
            return ""
        return self.tree.diff(changes.first_tree, changes.last_tree, changes.files)

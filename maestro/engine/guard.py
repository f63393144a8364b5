"""What a spoke must not touch outside its worktree, seen and undone.

A spoke works in its own worktree, but it runs with its CLI's permissions: it can write
into the user's tree by absolute path, delete a file there, plant git configuration or a
hook (a worktree shares the repository's ``config``, ``hooks/`` and ``info/``), or move a
branch. Around each dispatch the guard takes a mark: the user's tree as a git tree
(through a private index, so only files whose stat data changed are read again), HEAD,
the refs, and the bytes of the repository's config, hooks and info files. After it, the
difference is what happened outside the worktree while the spoke ran, less what the run
itself did meanwhile (a landing, a ``--commit``):

- a file changed or created in the user's tree is put back as it was and the version
  found is saved under ``.ai/maestro/outside/<dispatch>/``; a deleted one is restored;
- git config, hooks and info files are put back (the planted version saved beside);
- moved, created or deleted branches and tags are put back; HEAD too.

Maestro cannot tell a person's edit made while a spoke ran from the spoke's: both are
undone the same way, and nothing is lost (the version found is saved, and the message
names the copy that takes it back). Remote-tracking refs (a fetch) and the stash are left
alone. Git ignores what it ignores: a write into an ignored file is not seen.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from maestro.fsutil import atomic_write
from maestro.repo import Repo, TreeChange, mine

_ZEROS = "0" * 40
# Refs a person's own git moves on its own (a fetch, a stash): never a spoke's to blame.
_LEFT_ALONE = ("refs/remotes/", "refs/stash", "refs/maestro/")
# The repository's files that change what git runs: configuration, hooks, info (exclude,
# attributes). Each is compared byte for byte.
_GIT_FILES = ("config", "config.worktree")
_GIT_FOLDERS = ("hooks", "info")


@dataclass(frozen=True)
class Mark:
    """The state before a dispatch."""

    tree: str
    head: bytes | None
    refs: dict[str, str]
    files: dict[str, tuple[bytes, int]]  # git-dir-relative path -> (content, mode)
    started_ns: int


@dataclass
class Found:
    """What changed outside the worktree during one dispatch, and was undone."""

    label: str  # the dispatch's: names the folder of the versions found
    paths: list[str] = field(default_factory=list)  # as the scope gate names them
    saved: Path | None = None  # where the versions found were put
    shown: str = ""  # the same, as the person reads it (project-relative)

    def __bool__(self) -> bool:
        return bool(self.paths)


class Guard:
    """The user's tree and repository around dispatches of one run (thread-safe)."""

    def __init__(
        self,
        repo: Repo,
        *,
        index: Path,
        exclude: Sequence[str],
        drop: Sequence[str],
        saved: Path,
        own: Sequence[str] = (),
    ) -> None:
        self.repo = repo
        self.top = repo.top
        self.index = index  # private; kept across marks so unchanged files are not hashed
        self.exclude = list(exclude)
        self.drop = list(drop)
        self.saved = saved  # versions found are put in a folder of it, one per dispatch
        self.own = set(own)  # files Maestro itself writes all along (a linked plan)
        common = repo.run("rev-parse", "--git-common-dir", "--git-dir").stdout.split("\n")
        self.common = _absolute(self.top, common[0])
        self.git_dir = _absolute(self.top, common[1])
        # The files this process's output goes to (a redirect may land in the project).
        self._outputs = []
        for fd in (1, 2):
            try:
                st = os.fstat(fd)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                self._outputs.append(st)
        self._lock = threading.Lock()  # one snapshot through the private index at a time
        self._dropped = False
        self._last: tuple[int, str] | None = None  # (when the last snapshot began, its tree)
        # Refs the run itself moved (a --commit): ref -> the value it set.
        self.moved: dict[str, str] = {}
        mine(index.name)
        self.pinned = self._files()  # the repository's config and hooks at the run's start

    # -- marks -------------------------------------------------------------------------
    def mark(self, landing: AbstractContextManager[object]) -> Mark:
        """The state now; the tree is read inside ``landing`` (a lock no landing writes the
        user's tree without), the rest before it."""
        started = time.time_ns()
        head, refs, files = self._head(), self._refs(), self._files()
        with landing:
            return Mark(self.tree(since=started), head, refs, files, started)

    def tree(self, since: int | None = None) -> str:
        """The user's tree now. With ``since`` (ns): the last snapshot serves when it began
        at or after that moment and the run wrote nothing into the tree after it (see
        ``wrote``): it is as good as a new one, and the dispatches that wait for the
        landing lock together share one snapshot instead of each taking its own."""
        with self._lock:
            last = self._last
            if since is not None and last is not None and last[0] >= since:
                return last[1]
            began = time.time_ns()
            # What is dropped leaves the private index once and is never added back (it is
            # excluded or ignored): only the index copied from the real one holds it.
            drop = () if self._dropped else self.drop
            tree = self.repo.snapshot(self.top, self.index, exclude=self.exclude, drop=drop)
            self._dropped = True
            self._last = (began, tree)
            return tree

    def wrote(self) -> None:
        """The run wrote into the user's tree (a landing): no earlier snapshot serves."""
        with self._lock:
            self._last = None

    def _head(self) -> bytes | None:
        try:
            return (self.git_dir / "HEAD").read_bytes()
        except OSError:
            return None

    def _refs(self) -> dict[str, str]:
        out = self.repo.run("for-each-ref", "--format=%(objectname) %(refname)").stdout
        refs = {}
        for line in out.splitlines():
            sha, _, name = line.partition(" ")
            if name and not name.startswith(_LEFT_ALONE):
                refs[name] = sha
        return refs

    def _files(self) -> dict[str, tuple[bytes, int]]:
        found = {}
        names = list(_GIT_FILES)
        for folder in _GIT_FOLDERS:
            try:
                names += [f"{folder}/{n}" for n in sorted(os.listdir(self.common / folder))]
            except OSError:
                continue
        for name in names:
            path = self.common / name
            try:
                if path.is_file() and not path.is_symlink():
                    found[name] = (path.read_bytes(), path.stat().st_mode & 0o777)
                elif path.is_symlink():
                    found[name] = (os.readlink(path).encode("utf-8", "surrogateescape"), -1)
            except OSError:
                continue
        return found

    def planted(self) -> list[str]:
        """The repository's config, hooks and info files changed since the run began."""
        now = self._files()
        return [
            f".git/{n}"
            for n in sorted(set(now) | set(self.pinned))
            if now.get(n) != self.pinned.get(n)
        ]

    def moved_by_run(self, commit: str) -> None:
        """The run committed ``commit`` on the current branch (``--commit``): not a
        spoke's doing."""
        ref = self.repo.run("symbolic-ref", "-q", "HEAD", check=False).stdout.strip()
        self.moved[ref or "HEAD"] = commit

    # -- after a dispatch --------------------------------------------------------------
    # Two steps: the repository first (before any other git command of Maestro's reads a
    # planted configuration), then the user's tree (once the worktree's own change is
    # known: a person's edit of a file the task changed too is the landing's to merge).
    def undo_git(self, mark: Mark, found: Found) -> None:
        """Config, hooks, info files, HEAD and refs changed since ``mark``, put back."""
        self._undo_files(mark, found)
        self._undo_refs(mark, found)

    def undo_tree(
        self,
        mark: Mark,
        found: Found,
        *,
        keep: Callable[[str], bool],
        landing: AbstractContextManager[object],
    ) -> None:
        """Files of the user's tree changed since ``mark``, put back; ``keep(path)`` says
        which (repository-relative) the run wrote meanwhile, left alone. All of it inside
        ``landing``: no landing writes the user's tree meanwhile."""
        asked = time.time_ns()
        with landing:
            self._undo_tree(mark, found, keep, self.tree(since=asked))

    def _undo_tree(self, mark: Mark, found: Found, keep: Callable[[str], bool], now: str) -> None:
        if now == mark.tree:
            return
        before = len(found.paths)
        for change in self.repo.tree_changes(mark.tree, now):
            if change.path in self.own or keep(change.path) or self._ours(change.path):
                continue
            if self._grown(change):
                continue
            where = self._where(found)
            target = self.top / change.path
            if change.status != "D":  # the version found: saved before it is put back
                _save(where / "tree" / change.path, self.repo.blob(change.new_sha))
            old = None if change.status == "A" else self.repo.blob(change.old_sha)
            _put(target, old, change.old_mode)
            kind = {"A": "created", "D": "deleted"}.get(change.status, "changed")
            found.paths.append(f"{change.path} ({kind})")
        if len(found.paths) > before:  # something was put back
            self.wrote()
            self.tree()  # the private index knows the restored files again

    def _ours(self, path: str) -> bool:
        """This process's own output, redirected into the project (`maestro run > run.log`)."""
        try:
            st = (self.top / path).stat()
        except OSError:
            return False
        return any(os.path.samestat(st, own) for own in self._outputs)

    def _grown(self, change: TreeChange) -> bool:
        """An untracked file that only grew (a log someone writes to): nothing was lost."""
        if not (change.status == "M" and change.old_mode == change.new_mode == "100644"):
            return False
        old, new = self.repo.blob(change.old_sha), self.repo.blob(change.new_sha)
        if not new.startswith(old):
            return False
        tracked = self.repo.run("ls-files", "--", f":(top,literal){change.path}").stdout
        return not tracked.strip()

    def _where(self, found: Found) -> Path:
        if found.saved is None:
            found.saved = self.saved / found.label
        return found.saved

    def _undo_files(self, mark: Mark, found: Found) -> None:
        now = self._files()
        for name in sorted(set(now) | set(mark.files)):
            before, after = mark.files.get(name), now.get(name)
            if before == after:
                continue
            path = self.common / name
            if after is not None:
                _save(self._where(found) / "git" / name, after[0])
                path.unlink(missing_ok=True)
            if before is not None:
                content, mode = before
                if mode == -1:
                    path.symlink_to(content.decode("utf-8", "surrogateescape"))
                else:
                    atomic_write(path, content, mode=mode, durable=False)
            kind = "planted" if before is None else "deleted" if after is None else "changed"
            found.paths.append(f".git/{name} ({kind})")
        head = self._head()
        ours = self.moved.get("HEAD")
        if head != mark.head and mark.head is not None and head != f"{ours}\n".encode():
            atomic_write(self.git_dir / "HEAD", mark.head, durable=False)
            found.paths.append(".git/HEAD (moved)")

    def _undo_refs(self, mark: Mark, found: Found) -> None:
        now = self._refs()
        for ref in sorted(set(now) | set(mark.refs)):
            before, after = mark.refs.get(ref), now.get(ref)
            if before == after or (after is not None and self.moved.get(ref) == after):
                continue
            if after is None:
                self.repo.run("update-ref", ref, before or _ZEROS, _ZEROS, check=False)
                kind = "deleted"
            elif before is None:
                self.repo.run("update-ref", "-d", ref, after, check=False)
                kind = "created"
            else:
                self.repo.run("update-ref", ref, before, after, check=False)
                kind = "moved"
            found.paths.append(f"{ref} ({kind}, put back)")


def _absolute(top: Path, path: str) -> Path:
    p = Path(path.strip())
    return p if p.is_absolute() else top / p


def _save(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.write_bytes(content)


def _put(target: Path, content: bytes | None, mode: str) -> None:
    """``target`` as it was: ``content`` with git's ``mode``, or gone (None)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    if content is None:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        target.symlink_to(content.decode("utf-8", "surrogateescape"))
        return
    atomic_write(target, content, mode=0o755 if mode == "100755" else 0o644, durable=False)

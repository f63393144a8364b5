"""A git repository as Maestro's worktrees use it (``Repo``), every command through
``git.run_git``; worktrees and scratch files named by their maker's pid."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from maestro.git import GitError, run_git, unfiltered
from maestro.pids import pid_alive

if TYPE_CHECKING:
    from maestro.process import ProcessOutcome

KEEP_REFS = "refs/maestro/changes/"

# -- the repository as Maestro's worktrees use it ------------------------------------------

# Internal commits (snapshots of a working tree, a task's change) are objects no branch
# points at: a fixed identity keeps them independent of the user's configuration.
_MAESTRO_IDENTITY = {
    "GIT_AUTHOR_NAME": "Maestro",
    "GIT_AUTHOR_EMAIL": "maestro@localhost",
    "GIT_COMMITTER_NAME": "Maestro",
    "GIT_COMMITTER_EMAIL": "maestro@localhost",
}


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees (``git diff-tree --raw``)."""

    status: str  # A added, M modified, D deleted, T type changed
    path: str  # relative to the repository's top
    old_mode: str
    new_mode: str
    old_sha: str  # all zeros when added
    new_sha: str  # all zeros when deleted


_WORKTREES = threading.Lock()  # one worktree add, remove or prune at a time in this process
# A worktree kept on purpose (--keep-worktrees) has this marker file beside it; a
# worktree's name, and the name of every scratch file or folder beside it, ends in
# -p<pid> of the process that made it (before its suffixes: `.index`, `.merge`,
# `.index.lock`).
KEEP_SUFFIX = ".kept"
_CREATOR = re.compile(r"-p(\d+)(?:\.[a-z]+)*$")
_SUFFIXES = re.compile(r"(?:\.[a-z]+)+$")


_MINE: set[str] = set()  # the worktree and scratch names this process made (see mine)


def mine(name: str) -> None:
    """Say that this process made the worktree or scratch file ``name`` (its pid ends
    it): in_use then knows it from what a dead process with the same pid left, which in
    a container, where every run may have the same pid, is the usual case."""
    _MINE.add(_bare(name))


def _bare(name: str) -> str:
    return _SUFFIXES.sub("", name.lstrip("."))


def in_use(path: Path) -> bool:
    """Whether the process that created the worktree (or scratch file) at ``path`` still
    lives: a review or challenge running beside a run, say, or this process when it made
    it (``mine``); one named with this pid that it did not make is a dead process's."""

    found = _CREATOR.search(path.name)
    if found is None:
        return False
    pid = int(found.group(1))
    if pid == os.getpid():
        return _bare(path.name) in _MINE
    return pid_alive(pid)


@dataclass(frozen=True)
class Stale:
    path: Path
    kept: bool  # kept on purpose (--keep-worktrees)
    prunable: bool  # registered, its folder gone


@dataclass(frozen=True)
class WorktreeEntry:
    path: Path
    head: str | None
    prunable: bool  # its folder is gone: `git worktree prune` drops it


class Repo:
    """One git repository, addressed by its top folder: snapshots of a working tree as
    commits (through a private index, so the user's index, HEAD and refs never change),
    detached worktrees, tree diffs, blobs and three-way merges of file contents."""

    def __init__(
        self,
        top: Path,
        *,
        prefix: str = "",
        object_format: str = "sha1",
        index: Path | None = None,
    ) -> None:
        self.top = Path(top)
        self.prefix = prefix  # the project's folder inside the repository ("" or "sub/")
        self.object_format = object_format
        self.index = index  # the top's own index file, when known (find asks for it)

    @classmethod
    def find(cls, folder: Path) -> Repo | None:
        """The repository holding ``folder``, or None (not a repository, or no git)."""
        if shutil.which("git") is None:
            return None
        out = run_git(
            "rev-parse",
            "--show-toplevel",
            "--show-prefix",
            "--show-object-format",
            "--git-path",
            "index",
            cwd=folder,
            timeout_s=30,
        )
        lines = out.stdout.split("\n")
        if out.exit_code != 0 or len(lines) < 4 or not lines[0]:
            return None
        index = Path(lines[3]) if lines[3] else None
        if index is not None and not index.is_absolute():
            index = Path(folder) / index
        return cls(
            Path(lines[0]),
            prefix=lines[1],
            object_format=lines[2] or "sha1",
            index=index,
        )

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        ok: tuple[int, ...] = (0,),
        hooks: bool = False,
        config: Sequence[str] = (),
    ) -> ProcessOutcome:
        out = run_git(*args, cwd=cwd or self.top, extra_env=env, hooks=hooks, config=config)
        if check and (out.exit_code not in ok or out.timed_out):
            raise GitError(
                f"`git {' '.join(args[:3])}` failed in {cwd or self.top}: "
                f"{' '.join(out.stderr.split())[:300]}",
                "check the repository with `git status`.",
            )
        return out

    def head(self) -> str | None:
        """HEAD's commit, None before the first one."""
        out = self.run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        return out.stdout.strip() or None

    def snapshot(
        self,
        folder: Path,
        index: Path,
        *,
        exclude: Sequence[str] = (),
        drop: Sequence[str] = (),
    ) -> str:
        """The working tree at ``folder`` (the top, or a worktree) as a tree sha: tracked and
        untracked-but-not-ignored files, read through the private index file ``index``.
        ``exclude``: glob pathspecs (relative to the top) not read; never one that names an
        ignored folder (git 2.39 then refuses the whole command). ``drop``: paths taken out
        of the snapshot afterwards (tracked or not). No filter driver runs, whatever the
        folder's ``.gitattributes`` name (``unfiltered``): every tree read here is one a
        spoke may have written (its worktree; the shared tree, in place or unconfined), and
        its files are read as their bytes."""
        if not index.exists():
            # Start from the folder's own index: unchanged files are then known by their
            # stat data instead of being hashed again.
            if self.index is not None and Path(folder).resolve() == self.top.resolve():
                real = self.index
            else:
                real = Path(self.run("rev-parse", "--git-path", "index", cwd=folder).stdout.strip())
                real = real if real.is_absolute() else folder / real
            if real.exists():
                shutil.copyfile(real, index)
        env = {"GIT_INDEX_FILE": str(index)}
        spec = [":/", *(f":(top,exclude,glob){e}" for e in exclude)]
        config = self.unfiltered
        self.run("add", "-A", "--", *spec, cwd=folder, env=env, config=config)
        if drop:
            gone = [f":(top,literal){d}" for d in drop]
            self.run(
                "rm",
                "-r",
                "-q",
                "--cached",
                "--ignore-unmatch",
                "--",
                *gone,
                cwd=folder,
                env=env,
                config=config,
            )
        # (Writing the index back, git reads again a file written in the same second as
        # the index: through the filters too.)
        return self.run("write-tree", cwd=folder, env=env, config=config).stdout.strip()

    def ignored(self, paths: Sequence[str]) -> set[str]:
        """Which of ``paths`` (relative to the top) git ignores."""
        return set(self.ignoring(paths))

    def ignoring(self, paths: Sequence[str], cwd: Path | None = None) -> dict[str, str]:
        """Which of ``paths`` (relative to ``cwd``, default the top) git ignores, each with
        the rule that does (``.gitignore:2: build/``). A tracked file is never ignored."""
        if not paths:
            return {}
        out = self.run("check-ignore", "-v", "--", *paths, cwd=cwd, check=False, ok=(0, 1))
        found = {}
        for line in out.stdout.splitlines():
            rule, _, path = line.partition("\t")  # <source>:<line>:<pattern>\t<path>
            source, number, pattern = [*rule.split(":", 2), "", ""][:3]
            if not pattern.startswith("!"):  # (a negation: the last rule says not ignored)
                found[path.rstrip("/")] = f"{source}:{number}: {pattern}"
        return found

    def submodules(self, index: Path | None = None) -> list[str]:
        """The paths (relative to the top) of the gitlinks in the index (``index``, else the
        repository's own): submodules, and repositories of their own that `git add` took."""
        env = {"GIT_INDEX_FILE": str(index)} if index is not None else None
        out = self.run("ls-files", "-z", "--stage", "--", ":/", env=env)
        found = []
        for entry in out.stdout.split("\0"):
            head, _, path = entry.partition("\t")
            if head.startswith("160000 "):
                found.append(path)
        return found

    def ignored_matching(
        self,
        folder: Path,
        patterns: Sequence[str],
        *,
        per_directory: str,
        skip: Sequence[str] = (),
    ) -> list[str]:
        """Files under ``folder`` that git ignores and that match ``patterns`` (gitignore
        syntax, relative to the top) or the patterns of a ``per_directory`` file (gitignore
        syntax, relative to the folder holding it), relative to ``folder``. Only what git
        ignores is looked into (a folder wholly ignored is one entry), ``skip`` aside."""
        listed = self.run(
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            cwd=folder,
        ).stdout
        skipped = tuple(s.rstrip("/") for s in skip if s.strip("/"))
        entries = [
            e
            for e in listed.split("\0")
            if e
            and e not in (".", "./")
            and not any(e.rstrip("/") == s or e.startswith(s + "/") for s in skipped)
        ]
        # An entry may hold a skipped folder (git lists `.ai/` when all it holds is
        # ignored): the skipped folders are excluded from the look inside it.
        excluded = [f":(exclude,literal){s}" for s in skipped]
        args = [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            f"--exclude-per-directory={per_directory}",
        ]
        args += [f"--exclude={p}" for p in patterns]
        found: set[str] = set()
        for start in range(0, len(entries), 500):  # a long list of entries, in parts
            spec = [f":(literal){e}" for e in entries[start : start + 500]]
            out = self.run(*args, "--", *spec, *excluded, cwd=folder).stdout
            found.update(f for f in out.split("\0") if f and not f.endswith("/"))
        return sorted(found)

    # refs that keep a run's commits alive against `git gc` (never a branch)
    def keep(self, commit: str) -> None:
        """Keep ``commit`` and its ancestors (where it started, the run's base) from
        `git gc`: a ref under ``refs/maestro/changes/``, which no branch list shows."""
        self.run("update-ref", f"{KEEP_REFS}{commit}", commit)

    def release(self, commits: Sequence[str]) -> None:
        """Drop the refs :meth:`keep` made for ``commits`` (one absent is no error)."""
        for commit in commits:
            if commit and re.fullmatch(r"[0-9a-f]{40,64}", commit):
                self.run("update-ref", "-d", f"{KEEP_REFS}{commit}", check=False)

    def kept(self) -> list[str]:
        """The commits :meth:`keep` holds."""
        out = self.run("for-each-ref", "--format=%(objectname)", KEEP_REFS).stdout
        return out.split()

    def commit_tree(
        self, tree: str, parents: Sequence[str], message: str, *, as_person: bool = False
    ) -> str:
        """A commit of ``tree``: Maestro's own, or (``as_person``) the person's, under
        their git identity (a pull request's commits, pushed in their name)."""
        args = ["commit-tree", tree, "-m", message]
        for parent in parents:
            args += ["-p", parent]
        return self.run(*args, env=None if as_person else _MAESTRO_IDENTITY).stdout.strip()

    def parent(self, commit: str) -> str | None:
        """The first parent of ``commit``, or None (no parent, or no such object)."""
        out = self.run("rev-parse", "--verify", "-q", f"{commit}^1^{{commit}}", check=False)
        return out.stdout.strip() or None

    # worktrees
    def add_worktree(self, path: Path, commit: str) -> None:
        """A detached worktree of ``commit`` at ``path``: no branch, no config write.

        Registered as `git worktree add` registers one (gitrepository-layout(5): a folder
        under the common git dir's ``worktrees/`` whose ``gitdir`` names the worktree's
        ``.git`` file, which names it back; ``commondir``; a detached ``HEAD``), then
        checked out by one ``read-tree``: one git process where `git worktree add` starts
        three (itself, ``update-ref`` and ``reset --hard``), which was a tenth of a
        dependency's hand-off to the next task. As git does, the folder is ``locked``
        until the checkout is complete, so no `git worktree prune` (the person's, another
        run's) takes it half made; `git worktree list` and ``remove`` know it as git's."""
        mine(path.name)  # before the folder is made: a cleanup meanwhile leaves it
        admin = self.common_dir / "worktrees" / path.name
        made: list[Path] = []  # what to take away if it cannot be completed
        try:
            with _WORKTREES:  # (git reads every registered worktree's files as it lists them)
                admin.mkdir(parents=True)
                made.append(admin)
                (admin / "locked").write_text("initializing\n", encoding="utf-8")
                path.mkdir(parents=True)
                made.append(path)
                (admin / "gitdir").write_text(f"{path.resolve() / '.git'}\n", encoding="utf-8")
                (path / ".git").write_text(f"gitdir: {admin}\n", encoding="utf-8")
                (admin / "commondir").write_text("../..\n", encoding="utf-8")
                (admin / "HEAD").write_text(f"{commit}\n", encoding="utf-8")
        except OSError as exc:
            for folder in made:
                shutil.rmtree(folder, ignore_errors=True)
            raise GitError(
                f"cannot make a worktree at {path}: {exc.strerror or exc}",
                "check the repository with `git worktree list` and the disk with `df -h`.",
            ) from None
        out = self.run("read-tree", "--reset", "-u", commit, cwd=path, check=False)
        (admin / "locked").unlink(missing_ok=True)
        if out.exit_code != 0:
            self.remove_worktree(path)
            raise GitError(
                f"cannot check out a worktree of {commit[:12]} in {self.top}: "
                f"{' '.join(out.stderr.split())[:300]}",
                "check the repository with `git worktree list` and `git status`.",
            )

    @functools.cached_property
    def unfiltered(self) -> list[str]:
        """``git.unfiltered``'s settings for this repository: its filter drivers as the
        configuration defines them at its first snapshot (a run's base, taken as it
        starts)."""
        return unfiltered(self.top)

    @functools.cached_property
    def common_dir(self) -> Path:
        """The git dir every worktree shares (``.git`` of the main checkout)."""
        common = Path(self.run("rev-parse", "--git-common-dir").stdout.strip())
        return (common if common.is_absolute() else self.top / common).resolve()

    def remove_worktree(self, path: Path) -> None:
        """The worktree at ``path`` unregistered, then its folder deleted: its folder under
        the git dir's ``worktrees/`` (the one its ``.git`` file names) goes at once, under
        the lock a registration takes, and its files (as many as the project's) after it,
        without the lock, so a worktree being made meanwhile does not wait for them. No
        git process runs, but for a folder whose ``.git`` names no folder of
        ``worktrees/``: it is deleted, then `git worktree prune` drops what git knew of it."""
        admin = self.admin_of(path)
        if admin is not None:
            with _WORKTREES:
                shutil.rmtree(admin, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)
        if admin is None:
            self.prune_worktrees()

    def admin_of(self, path: Path) -> Path | None:
        """The folder under ``worktrees/`` that the worktree at ``path`` names (its
        ``HEAD``, its ``index``), or None (no ``.git`` file, or one naming anything else)."""
        try:
            text = (path / ".git").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        named = Path(text.removeprefix("gitdir: "))
        named = named if named.is_absolute() else path / named
        admin = Path(os.path.realpath(named))
        if not text.startswith("gitdir: ") or admin.parent != self.common_dir / "worktrees":
            return None
        return admin

    def worktrees(self) -> list[WorktreeEntry]:
        with _WORKTREES:  # (a worktree half added meanwhile makes the listing fail)
            out = self.run("worktree", "list", "--porcelain", "-z").stdout
        entries: list[WorktreeEntry] = []
        path: Path | None = None
        head: str | None = None
        prunable = False
        for field_ in [*out.split("\0"), ""]:
            if not field_:
                if path is not None:
                    entries.append(WorktreeEntry(path, head, prunable))
                path, head, prunable = None, None, False
            elif field_.startswith("worktree "):
                path = Path(field_[9:])
            elif field_.startswith("HEAD "):
                head = field_[5:]
            elif field_.startswith("prunable"):
                prunable = True
        return entries

    def stale_worktrees(
        self, where: Path, entries: Sequence[WorktreeEntry] | None = None
    ) -> list[Stale]:
        """The worktrees under ``where`` whose creator is gone, and every prunable entry
        (of ``entries``, when the caller listed them already)."""
        where = where.resolve()
        found = []
        for entry in self.worktrees() if entries is None else entries:
            inside = entry.path.is_absolute() and entry.path.resolve().is_relative_to(where)
            if entry.prunable or (inside and not in_use(entry.path)):
                kept = (where / f"{entry.path.name}{KEEP_SUFFIX}").exists()
                found.append(Stale(entry.path, kept, entry.prunable))
        return found

    def prune_worktrees(self) -> None:
        with _WORKTREES:
            self.run("worktree", "prune", check=False)

    # trees and blobs
    def tree_changes(self, before: str, after: str) -> list[TreeChange]:
        if before == after:
            return []
        out = self.run(
            "diff-tree", "-r", "-z", "--no-renames", "--full-index", "--raw", before, after
        ).stdout
        parts = out.split("\0")
        found = []
        for meta, path in zip(parts[0::2], parts[1::2], strict=False):
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].split(" ")
            found.append(TreeChange(status[:1], path, old_mode, new_mode, old_sha, new_sha))
        return found

    def patch(self, before: str, after: str, paths: Sequence[str] = ()) -> str:
        """The diff as ``git apply --3way`` takes it (binary, full blob ids)."""
        if before == after:
            return ""
        return self.run(
            "diff", "--binary", "--full-index", "--no-renames", before, after, "--", *paths
        ).stdout

    def shortstat(self, before: str, after: str) -> str:
        if before == after:
            return ""
        return self.run("diff", "--shortstat", "--no-renames", before, after).stdout.strip()

    def blob(self, sha: str) -> bytes:
        return self.run("cat-file", "blob", sha).raw_stdout

    def blob_id(self, content: bytes) -> str:
        """The id git gives ``content`` as a blob, computed here (no process)."""
        algo = hashlib.sha256 if self.object_format == "sha256" else hashlib.sha1
        return algo(b"blob %d\0" % len(content) + content).hexdigest()

    def merge_commits(self, ours: str, theirs: str) -> tuple[str | None, list[str]]:
        """Three-way merge of two commits at their merge base: (tree, []) when clean,
        (None, conflicted paths) when not. Nothing is checked out."""
        out = self.run("merge-tree", "--write-tree", "--name-only", "-z", ours, theirs, ok=(0, 1))
        parts = out.stdout.split("\0")
        if out.exit_code == 0:
            return parts[0].strip(), []
        conflicted = []
        for name in parts[1:]:
            if not name:
                break  # the informational messages follow an empty field
            conflicted.append(name)
        return None, sorted(set(conflicted))

    def merge_file(self, ours: bytes, base: bytes, theirs: bytes, scratch: Path) -> bytes | None:
        """Three-way merge of one file's contents; None when the same lines changed on
        both sides (or the content is binary)."""
        if b"\0" in ours or b"\0" in base or b"\0" in theirs:
            return None
        scratch.mkdir(parents=True, exist_ok=True)
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = scratch / name
            path.write_bytes(data)
            names.append(str(path))
        out = self.run("merge-file", "-p", "-q", *names, check=False)
        if out.exit_code != 0:
            return None
        return out.raw_stdout

    # the user's branch (only with --commit)
    def commit_paths(self, paths: Sequence[str], message: str, index: Path) -> str:
        """Commit exactly ``paths`` (repository-relative) on the current branch, as the
        user (their identity, their hooks), staged in ``index``, a private copy of their
        index: theirs changes only once the commit is made, and then only for ``paths``
        (as `git commit --only` leaves it); whatever else they staged stays staged. A
        commit refused (a hook, a merge in progress) raises GitError and leaves their
        index exactly as it was."""
        spec = [f":(top,literal){p}" for p in paths]
        own = self.index or Path(self.run("rev-parse", "--git-path", "index").stdout.strip())
        own = own if own.is_absolute() else self.top / own
        if own.exists():
            shutil.copyfile(own, index)
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            self.run("add", "-A", "--", *spec, env=env)
            out = self.run(
                "commit",
                "-q",
                "--only",
                "-m",
                message,
                "--",
                *spec,
                env=env,
                check=False,
                hooks=True,
            )
        finally:
            index.unlink(missing_ok=True)
        if out.exit_code != 0 or out.timed_out:
            said = " ".join(out.stderr.split())[:200]
            raise GitError(
                f"`git commit` exited {out.exit_code}: {said}"
                if said
                else f"`git commit` exited {out.exit_code} and said nothing "
                "(a pre-commit or commit-msg hook refused it?)"
            )
        self.run("reset", "-q", "--", *spec)  # their index: these paths as committed
        return self.run("rev-parse", "HEAD").stdout.strip()

"""Isolated workspaces: every dispatch works in its own git worktree, and its change
reaches the user's tree only after its gates pass.

When a run starts, the user's working tree (tracked files and untracked ones that are not
ignored; the state dir aside) is written as a commit through a private index: the run's
*base*. The user's index, HEAD and refs never change. The run's *integration* commit
starts at the base and takes every task the run accepts, so a later task starts from its
dependencies' work. Each attempt gets a detached worktree of the integration commit under
``.ai/maestro/worktrees/`` (no branch), with the project's dependency folders linked in
and its ignored files that validation needs (``.env``) copied in.

After the spoke, the worktree is read the same way (a private index), and its tree
compared with the one it started from: that is the attempt's change, exactly, with
nothing attributed by timing. A spoke's own commits count (the working tree holds them).
The task's own files in the user's tree are watched while it runs, so a spoke that writes
there instead (an absolute path into the project) is caught.

An accepted change lands twice: on the integration commit (a three-way merge when other
tasks landed meanwhile) and in the user's working tree, file by file: a file the person
has not touched since the run began takes the task's version; one they edited is merged
three-way (``git merge-file``); if the same lines changed on both sides nothing is
written, the patch and the task's versions of the files are saved under
``.ai/maestro/patches/`` with the commands that merge them in, and the task stays done.
A failed attempt's worktree is removed (kept with ``--keep-worktrees``). A ref under
``refs/maestro/changes/`` keeps each change commit (and so where it started) from
``git gc`` until ``maestro archive`` puts its plan away.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro.engine.ownership import owned_by_any
from maestro.errors import MaestroError
from maestro.fsutil import atomic_write, ignore_in_git
from maestro.git import KEEP_SUFFIX, Repo, TreeChange, in_use, mine
from maestro.paths import ProjectPaths

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
_ZERO = re.compile(r"^0+$")
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
    base_tree: str
    index: Path  # the private index that reads it
    watched: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    started_ns: int = 0


@dataclass
class Measured:
    """What one attempt changed in its worktree, against the commit it started from."""

    tree: str
    changes: list[TreeChange]
    files: list[str]  # project-relative, sorted
    out_of_scope: list[str]
    outside: list[str]  # written into the user's tree instead of the worktree
    patch: str
    diff_stat: str
    diff_sha: str | None
    ambiguous: list[str] = field(default_factory=list)  # never, in a worktree
    unmeasured: list[str] = field(default_factory=list)  # claimed, yet no change at all


@dataclass
class Landing:
    change: str | None  # the task's change as a commit (its parent: where it started)
    status: str  # landed | conflict | empty
    conflicts: list[str] = field(default_factory=list)
    patch_file: Path | None = None
    committed: str | None = None  # the commit on the user's branch (--commit)
    commit_error: str | None = None
    # How each withheld file is recovered: "merge" (the person's file and the task's
    # started from a saved base), "added" (no base: both sides added it), "copy" (the
    # person's is gone), "deleted" (the task deleted it).
    recover: dict[str, str] = field(default_factory=dict)

    def note(self, shown: str) -> str:
        """What a person needs to know, for the task's Result (empty when it just landed)."""
        if self.status == "conflict":
            return (
                f"its change was not applied: you edited {', '.join(self.conflicts)} meanwhile; "
                + self.advice(shown)
            )
        if self.commit_error:
            return f"landed uncommitted: `git commit` failed: {self.commit_error}"
        return ""

    def advice(self, shown: str) -> str:
        """Commands that bring the task's version of each withheld file into the person's
        tree without touching their index (``git apply --3way`` would stage, and fails on
        a file the person created untracked). ``shown`` is the patch as the person sees it;
        the task's versions are saved beside it, in a folder of the same name."""
        saved = shown.removesuffix(".patch")
        steps = []
        for rel, how in self.recover.items():
            if how == "merge":
                steps.append(f"`git merge-file {rel} {saved}.base/{rel} {saved}/{rel}`")
            elif how == "added":
                steps.append(f"`git merge-file {rel} /dev/null {saved}/{rel}`")
            elif how == "copy":
                steps.append(f"`cp {saved}/{rel} {rel}`")
            else:
                steps.append(f"the task deleted {rel}")
        return (
            f"the task's versions are saved in {saved}/ (the patch: {shown}): "
            f"{'; '.join(steps)}, then resolve the conflict markers (your index is untouched)"
        )


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _shortstat(patch: str, files: int) -> str:
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


def literal_files(entries: Sequence[str]) -> list[str]:
    """A task's Files that name one file (folders and globs are for ownership)."""
    return [e for e in entries if e and not e.endswith("/") and not any(c in e for c in "*?[")]


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


class Workspaces:
    """One run's base and integration commits, its worktrees, and landing."""

    def __init__(self, paths: ProjectPaths, repo: Repo, run_id: str, settings: Any) -> None:
        self.paths = paths
        self.repo = repo
        self.run_id = run_id
        self.commit = bool(getattr(settings, "commit", False))
        self.keep = bool(getattr(settings, "keep_worktrees", False))
        self.link_names = tuple(getattr(settings, "workspace_links", ()) or ())
        source = getattr(settings, "source", None)
        self.links_from = source("workspace_links") if callable(source) else "default"
        self.copy_patterns = tuple(getattr(settings, "workspace_copy", ()) or ())
        self.dir = worktrees_dir(paths)
        self.patches = paths.machine_dir / "patches"
        self.top = repo.top.resolve()
        self.prefix = repo.prefix
        self._lock = threading.Lock()
        self._land_lock = threading.Lock()
        self._count = 0
        self._trees: dict[str, str] = {}
        # Project files this run landed in the user's tree, and when: not a spoke's doing.
        self._landed: dict[str, int] = {}
        # Worktrees done with, removed in the background (see discard_later).
        self._doomed: list[Worktree] = []
        self._remover: threading.Thread | None = None
        self._closed = False
        self.links: list[str] = []
        self.copies: list[str] = []  # project-relative ignored files copied into each worktree
        self.base = ""
        self.integration = ""
        self.head: str | None = None
        state = paths.state_dir.resolve()
        self.state = [str(state.relative_to(self.top))] if state.is_relative_to(self.top) else []
        self.exclude = noise_globs()

    # -- the run's start ----------------------------------------------------------------
    def start(self) -> None:
        """Clean what a dead run left, take the base, find the folders to link."""
        clean_stale(self.paths, self.repo)
        self.prepare()

    def prepare(self, base: str | None = None) -> None:
        """Take the base (``base``, or the user's working tree now) and find the folders to
        link. Leaves other worktrees alone: a run may be using them."""
        self.dir.mkdir(parents=True, exist_ok=True)
        ignore_in_git(self.dir)
        self.links, ignored = self._ignored()
        self.copies = self._to_copy()
        if base is not None:
            self.base = self.integration = base
            return
        index = self.dir / f".{self.run_id}-p{os.getpid()}.index"  # (see git.in_use)
        mine(index.name)
        index.unlink(missing_ok=True)
        # The state dir (plans, logs, these worktrees) is never part of the work: not read
        # when git does not ignore it already, and dropped when tracked.
        skip = [f"{s}/**" for s in self.state if s not in ignored]
        tree = self.repo.snapshot(self.top, index, exclude=self.exclude + skip, drop=self.state)
        index.unlink(missing_ok=True)
        head = self.head = self.repo.head()
        self.base = self.repo.commit_tree(
            tree,
            [head] if head else [],
            f"maestro run {self.run_id}: the working tree at its start",
        )
        self._trees[self.base] = tree
        self.integration = self.base

    def refuse_submodule_work(self, tasks: Sequence[Any]) -> None:
        """A worktree holds each submodule as an empty folder, and a change under it is not
        the project's (a gitlink): such a task's work would be lost. Refused before any
        dispatch."""
        inside = []
        for sub in self.repo.submodules():
            rel = self._relative(sub)
            if rel.startswith(".."):
                continue
            for t in tasks:
                hit = next((f for f in t.files if f == rel or f.startswith(rel + "/")), None)
                if hit is not None:
                    inside.append(f"task {t.id} ({hit}, in the submodule {rel})")
        if inside:
            raise MaestroError(
                f"{'; '.join(inside)}: a task's worktree holds a submodule empty, so its work "
                "there would be lost",
                "run with `maestro run --in-place`, or plan that work in the submodule's own "
                "repository.",
            )

    def _ignored(self) -> tuple[list[str], set[str]]:
        """The configured dependency folders that exist in the project and that git ignores
        (a tracked folder is in every worktree already), and which of the state dir and
        those folders git ignores (one ``git check-ignore``)."""
        root = self.paths.root
        files = [
            n for n in self.link_names if n and (root / n).exists() and not (root / n).is_dir()
        ]
        if files and self.links_from != "default":
            # A file would silently not be linked: say so rather than run without it.
            raise MaestroError(
                f"workspace_links ({self.links_from}) names {', '.join(files)}, which "
                f"{'is a file' if len(files) == 1 else 'are files'}: only folders are linked "
                "into worktrees",
                "move it to workspace_copy (each worktree gets its own copy of the file), "
                "or run with `maestro run --in-place` to work in the project's own tree.",
            )
        present = [n for n in self.link_names if n and (root / n).is_dir()]
        ignored = self.repo.ignored([*self.state, *(f"{self.prefix}{n}" for n in present)])
        return [n for n in present if f"{self.prefix}{n}" in ignored], ignored

    def _to_copy(self) -> list[str]:
        """The ignored files each worktree gets a copy of: those ``workspace_copy`` names
        (gitignore patterns from the project root) and those a ``.worktreeinclude`` file
        names (gitignore syntax, relative to its folder). Copied, never linked: a spoke
        editing its copy of ``.env`` leaves the user's alone. A file git does not ignore
        is in the base already and is not copied again."""
        patterns = []
        for raw in self.copy_patterns:
            negate, pattern = (raw.startswith("!"), raw.lstrip("!").lstrip("/"))
            if pattern:
                patterns.append(f"{'!' if negate else ''}/{self.prefix}{pattern}")
        if not patterns and not (self.paths.root / WORKTREE_INCLUDE).is_file():
            return []
        root = self.paths.root.resolve()
        skip = [*self.link_names, *(os.path.relpath(self.top / s, root) for s in self.state)]
        return self.repo.ignored_matching(
            self.paths.root, patterns, per_directory=WORKTREE_INCLUDE, skip=skip
        )

    # -- one attempt's worktree ---------------------------------------------------------
    def create(self, label: str, watch: Sequence[str] = ()) -> Worktree:
        """A new worktree of the integration commit for one attempt."""
        with self._lock:
            self._count += 1
            # The creator's pid ends the name: cleanup never takes a live process's worktree.
            name = f"{self.run_id}-{label}-{self._count}-p{os.getpid()}"
        return self._open(name, self.integration, watch)

    def close(self) -> None:
        """The run ends: worktrees still to be removed are removed before it returns."""
        with self._lock:
            self._closed = True
            remover = self._remover
        if remover is not None:
            remover.join()
        with self._lock:
            left, self._doomed = self._doomed, []
        self.repo.remove_worktrees([wt.path for wt in left])

    def discard_later(self, wt: Worktree, *, keep: bool = False) -> Path | None:
        """``discard``, with the removal itself done in the background: `git worktree
        remove` (~10 ms, more for a large tree) would otherwise stand between a finished
        task and the start of the tasks waiting for it. The run removes what is left when
        it closes; a killed run's leftovers go with the next run's start (clean_stale)."""
        if keep:
            return self.discard(wt, keep=True)
        wt.index.unlink(missing_ok=True)
        with self._lock:
            if not self._closed:
                self._doomed.append(wt)
                if self._remover is None:  # (it clears itself, under the lock, when done)
                    self._remover = threading.Thread(target=self._remove_doomed, daemon=True)
                    self._remover.start()
                return None
        self.repo.remove_worktree(wt.path)
        return None

    def _remove_doomed(self) -> None:
        while True:
            with self._lock:
                if not self._doomed:
                    self._remover = None
                    return
                doomed, self._doomed = self._doomed, []
            with contextlib.suppress(OSError, MaestroError):
                self.repo.remove_worktrees([wt.path for wt in doomed])

    def _open(self, name: str, base: str, watch: Sequence[str] = ()) -> Worktree:
        path = self.dir / name
        self.repo.add_worktree(path, base)
        root = path / self.prefix if self.prefix else path
        for link in self.links:
            target = root / link
            if not target.exists() and not target.is_symlink():
                # A nested folder (build/cache) whose parent git ignores has no parent here.
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(self.paths.root / link, target_is_directory=True)
        for rel in self.copies:
            source, target = self.paths.root / rel, root / rel
            if source.is_file() and not target.exists() and not target.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)  # the content (a link's target), not a link
        index = self.dir / f".{name}.index"
        own = _worktree_index(path)
        if own is not None and own.exists():
            shutil.copyfile(own, index)  # its stat data: unchanged files are not hashed again
        watched = {rel: _stat(self.paths.root / rel) for rel in watch}
        return Worktree(name, path, root, base, self._tree(base), index, watched, time.time_ns())

    def _tree(self, commit: str) -> str:
        tree = self._trees.get(commit)
        if tree is None:
            tree = self._trees[commit] = self.repo.tree_of(commit)
        return tree

    def measure(self, wt: Worktree, files: Sequence[str], claimed: Sequence[str] = ()) -> Measured:
        """The attempt's exact change; ``files`` is the task's Files (its scope)."""
        links = [f"{self.prefix}{link}" for link in self.links]
        tree = self.repo.snapshot(wt.path, wt.index, exclude=self.exclude, drop=links)
        changes = self.repo.tree_changes(wt.base_tree, tree)
        names = sorted(self._relative(c.path) for c in changes)
        out_of_scope = [n for n in names if not owned_by_any(list(files), n)]
        patch = self.repo.patch(wt.base_tree, tree) if changes else ""
        return Measured(
            tree=tree,
            changes=changes,
            files=names,
            out_of_scope=out_of_scope,
            outside=self._outside(wt, files, claimed, set(names)),
            # The answer names files it changed, but its worktree holds no change at all.
            unmeasured=[]
            if names
            else sorted({c for c in claimed if not c.startswith(("/", ".."))}),
            patch=patch,
            diff_stat=_shortstat(patch, len(changes)) if changes else "",
            diff_sha=hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest()
            if patch
            else None,
        )

    def _relative(self, repo_path: str) -> str:
        if not self.prefix:
            return repo_path
        if repo_path.startswith(self.prefix):
            return repo_path[len(self.prefix) :]
        return os.path.relpath("/" + repo_path, "/" + self.prefix.rstrip("/"))

    def _outside(
        self, wt: Worktree, files: Sequence[str], claimed: Sequence[str], inside: set[str]
    ) -> list[str]:
        """The task's own files (and those its answer names) that changed in the user's
        tree while it ran but not in its worktree: the spoke wrote them outside it."""
        found = []
        for rel in sorted(set(wt.watched) | set(claimed)):
            if rel in inside or rel.startswith(("/", "..")):
                continue
            if self._landed.get(rel, 0) >= wt.started_ns:
                continue  # another task of this run landed it meanwhile (a subtask, say)
            now = _stat(self.paths.root / rel)
            if rel in wt.watched:
                if now != wt.watched[rel]:
                    found.append(rel)
            elif now is not None and now[0] >= wt.started_ns:
                found.append(rel)
        return found

    def combined(self, wt: Worktree, measured: Measured) -> Worktree | None:
        """A worktree of the attempt's change on top of everything the run accepted since it
        began (None when nothing was): where a coordinating task's check sees its subtasks'
        work. A change that does not merge gets none (its landing reports the conflict)."""
        with self._lock:
            integration = self.integration
        if integration == wt.base:
            return None
        change = self.repo.commit_tree(measured.tree, [wt.base], "maestro: a change, checked")
        tree, _ = self.repo.merge_commits(integration, change)
        if tree is None:
            return None
        commit = self.repo.commit_tree(tree, [integration], "maestro: a change on the latest")
        self._trees[commit] = tree
        with self._lock:
            self._count += 1
            name = f"{self.run_id}-check-{self._count}-p{os.getpid()}"
        return self._open(name, commit)

    def discard(self, wt: Worktree, *, keep: bool = False) -> Path | None:
        """Remove the worktree; with ``keep`` leave it (marked kept) and return its path."""
        wt.index.unlink(missing_ok=True)
        if keep:
            (self.dir / f"{wt.name}{KEEP_SUFFIX}").write_text(str(wt.path) + "\n", encoding="utf-8")
            return wt.path
        self.repo.remove_worktree(wt.path)
        return None

    # -- landing --------------------------------------------------------------------------
    def land(self, task_id: str, title: str, wt: Worktree, measured: Measured) -> Landing:
        if not measured.changes:
            return Landing(None, "empty")
        message = f"Task {task_id}: {title}\n\nmaestro run {self.run_id}"
        change = self.repo.commit_tree(measured.tree, [wt.base], message)
        self.repo.keep(change)  # review reads it later: `git gc` must not take it
        self._trees[change] = measured.tree
        with self._land_lock:
            conflicts = self._integrate(change, wt.base)
            if not conflicts:
                writes, conflicts = self._merge_into_user_tree(wt, measured.changes)
            if conflicts:
                patch = self._save_patch(task_id, measured)
                recover = self._save_versions(patch, wt, measured, conflicts)
                return Landing(change, "conflict", conflicts, patch, recover=recover)
            for write in writes:
                write()
            now = time.time_ns()
            for item in measured.changes:
                self._landed[self._relative(item.path)] = now
            landing = Landing(change, "landed")
            if self.commit:
                try:
                    landing.committed = self.repo.commit_paths(
                        [c.path for c in measured.changes],
                        f"Task {task_id}: {title}\n\nLanded by maestro run {self.run_id}.",
                    )
                except Exception as exc:  # noqa: BLE001 - a hook or identity problem: reported, the files stay
                    landing.commit_error = " ".join(str(exc).split())[:200]
            return landing

    def _integrate(self, change: str, base: str) -> list[str]:
        if self.integration == base:
            self.integration = change
            return []
        tree, conflicts = self.repo.merge_commits(self.integration, change)
        if tree is None:
            return [self._relative(p) for p in conflicts]
        self.integration = self.repo.commit_tree(
            tree, [self.integration], f"maestro run {self.run_id}: integration"
        )
        self._trees[self.integration] = tree
        return []

    def _save_patch(self, task_id: str, measured: Measured) -> Path:
        path = self.patches / f"{self.run_id}-task-{task_id}.patch"
        atomic_write(path, measured.patch, durable=False)
        return path

    def _save_versions(
        self, patch: Path, wt: Worktree, measured: Measured, conflicts: list[str]
    ) -> dict[str, str]:
        """Beside the patch, the task's version of each withheld file (``<patch>/<path>``)
        and the version it started from (``<patch>.base/<path>``): what a three-way merge
        into the person's file needs, kept even when git's objects go."""
        theirs_dir = patch.with_suffix("")
        base_dir = patch.with_name(theirs_dir.name + ".base")
        by_path = {self._relative(c.path): c for c in measured.changes}
        recover: dict[str, str] = {}
        for rel in conflicts:
            change = by_path.get(rel)
            if change is None:
                continue
            if _ZERO.match(change.new_sha):
                recover[rel] = "deleted"
                continue
            atomic_write(theirs_dir / rel, self._theirs(wt, change), durable=False)
            try:
                mine = _read(self.top / change.path)
            except IsADirectoryError:
                mine = b""
            if mine is None:
                recover[rel] = "copy"
            elif _ZERO.match(change.old_sha):
                recover[rel] = "added"
            else:
                atomic_write(base_dir / rel, self.repo.blob(change.old_sha), durable=False)
                recover[rel] = "merge"
        return recover

    def _merge_into_user_tree(
        self, wt: Worktree, changes: list[TreeChange]
    ) -> tuple[list[Any], list[str]]:
        """Plan every file's write first; write nothing when one conflicts."""
        writes: list[Any] = []
        conflicts: list[str] = []
        scratch = self.dir / f".{wt.name}.merge"
        try:
            for change in changes:
                write = self._merge_one(wt, change, scratch)
                if write is None:
                    conflicts.append(self._relative(change.path))
                elif write is not True:
                    writes.append(write)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return writes, conflicts

    def _merge_one(self, wt: Worktree, change: TreeChange, scratch: Path) -> Any:
        """True: nothing to do; None: a conflict; else a function that writes the file."""
        target = self.top / change.path
        try:
            ours = _read(target)
        except IsADirectoryError:
            return None  # a folder where the task has a file
        has_base = not _ZERO.match(change.old_sha)
        has_theirs = not _ZERO.match(change.new_sha)
        ours_sha = None if ours is None else self.repo.blob_id(ours)
        theirs_sha = change.new_sha if has_theirs else None
        base_sha = change.old_sha if has_base else None
        if ours_sha == theirs_sha:
            return True
        if ours_sha == base_sha:
            content = self._theirs(wt, change) if has_theirs else None
            return lambda: _write(target, content, change.new_mode)
        if not (has_base and has_theirs and ours is not None):
            return None
        if change.new_mode == "120000" or change.old_mode == "120000" or target.is_symlink():
            return None
        merged = self.repo.merge_file(
            ours, self.repo.blob(change.old_sha), self._theirs(wt, change), scratch
        )
        if merged is None:
            return None
        return lambda: _write(target, merged, change.new_mode)

    def _theirs(self, wt: Worktree, change: TreeChange) -> bytes:
        """The task's version: read from the worktree when it still holds exactly it."""
        try:
            local = _read(wt.path / change.path)
        except IsADirectoryError:
            local = None
        if local is not None and self.repo.blob_id(local) == change.new_sha:
            return local
        return self.repo.blob(change.new_sha)


def _read(path: Path) -> bytes | None:
    """A file's content as git sees it (a link's target), None when absent; a folder
    standing there raises IsADirectoryError."""
    try:
        if path.is_symlink():
            return os.readlink(path).encode("utf-8", "surrogateescape")
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _write(path: Path, content: bytes | None, mode: str) -> None:
    if content is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(content.decode("utf-8", "surrogateescape"))
        return
    temp = path.with_name(f".{path.name}.maestro-landing")
    temp.write_bytes(content)
    current = path.stat().st_mode if path.exists() and not path.is_symlink() else 0o644
    executable = mode == "100755"
    bits = stat.S_IMODE(current) | (0o111 if executable else 0)
    if not executable:
        bits &= ~0o111
    os.chmod(temp, bits)
    os.replace(temp, path)


def _worktree_index(path: Path) -> Path | None:
    try:
        text = (path / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return None
    gitdir = Path(text[8:])
    return (gitdir if gitdir.is_absolute() else path / gitdir) / "index"


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


@dataclass(frozen=True)
class Mode:
    """Where a run's spokes work, and why: the first thing a run says."""

    repo: Repo | None  # None: in place
    why: str

    @property
    def in_place(self) -> bool:
        return self.repo is None

    def line(self) -> str:
        if self.repo is None:
            return f"in place, in the shared working tree ({self.why})"
        return f"each task in its own git worktree ({self.why})"


def mode_for(paths: ProjectPaths, settings: Any, *, in_place: bool = False) -> Mode:
    if in_place:
        return Mode(None, "--in-place")
    if getattr(settings, "in_place", False):
        return Mode(None, f"in_place = true, from {settings.source('in_place')}")
    repo = Repo.find(paths.root)
    if repo is None:
        return Mode(None, "not a git repository")
    return Mode(repo, "a git repository; --in-place to share the working tree")


class ReadOnlyWorktree:
    """A worktree for a reader (a reviewer, a challenger): the task's change commit, or the
    user's working tree as it is now. What the reader writes stays in it and is reported
    (``edited``), never reaches the user's tree, and goes with the worktree.

    ``with ReadOnlyWorktree(paths, settings, label, commit) as wt:`` gives the project
    folder inside it, or None outside git / in place (the reader then uses the project)."""

    def __init__(
        self, paths: ProjectPaths, settings: Any, label: str, commit: str | None = None
    ) -> None:
        self.paths, self.settings, self.label, self.commit = paths, settings, label, commit
        self.spaces: Workspaces | None = None
        self.worktree: Worktree | None = None
        self.root: Path | None = None

    def __enter__(self) -> Path | None:
        mode = mode_for(self.paths, self.settings)
        if mode.repo is None:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.spaces = Workspaces(self.paths, mode.repo, f"{self.label}-{stamp}", self.settings)
        self.spaces.prepare(self.commit)
        self.worktree = self.spaces.create("read")
        self.root = self.worktree.root
        return self.root

    def edited(self) -> list[str]:
        """Files the reader changed in its worktree (project-relative)."""
        if self.spaces is None or self.worktree is None:
            return []
        return self.spaces.measure(self.worktree, ()).files

    def __exit__(self, *exc: object) -> None:
        if self.spaces is not None and self.worktree is not None:
            self.spaces.discard(self.worktree)

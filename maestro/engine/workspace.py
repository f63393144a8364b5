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
A confined spoke (maestro/sandbox.py) cannot write outside its worktree, so what changes
in the user's tree meanwhile is theirs. Unconfined (sandbox off), what changed outside the
worktree while its spoke ran (the user's files, git's config, hooks and refs) is put back
and named (guard.py).

An accepted change lands on the run's integration commit and in the user's working tree
(landing.py); work that must not or cannot land fails the scope gate instead.
A failed attempt's worktree is removed (kept with ``--keep-worktrees``). A ref under
``refs/maestro/changes/`` keeps each change commit (and so where it started) from
``git gc`` until ``maestro archive`` puts its plan away.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro.engine.guard import Found, Guard, Mark
from maestro.engine.landing import Landing, Landings
from maestro.engine.ownership import owned_by_any
from maestro.engine.worktree import (
    WORKTREE_INCLUDE,
    Measured,
    Scope,
    Worktree,
    claimed_paths,
    clean_stale,
    guard_dir,
    noise_globs,
    shortstat,
    worktrees_dir,
)
from maestro.errors import MaestroError
from maestro.formatting import shown_path
from maestro.fsutil import ignore_in_git
from maestro.paths import ProjectPaths
from maestro.repo import KEEP_SUFFIX, Repo
from maestro.state.model import Receipt, Task

if TYPE_CHECKING:
    from maestro.engine.pullrequest import Delivery
    from maestro.prompts.results import ParsedResult


class Worktrees(Landings):
    """One run's base and integration commits, its worktrees, and landing."""

    def __init__(self, paths: ProjectPaths, repo: Repo, run_id: str, settings: Any) -> None:
        self.paths = paths
        self.repo = repo
        self.run_id = run_id
        self.commit = bool(getattr(settings, "commit", False))
        self.delivery: Delivery | None = None  # --pr: set before the run starts
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
        # Project files this run landed in the user's tree, and when: not a spoke's doing.
        self._landed: dict[str, int] = {}
        self.links: list[str] = []
        self.copies: list[str] = []  # project-relative ignored files copied into each worktree
        self.leading_out: dict[str, str] = {}  # copies not made: a link out of the project
        # The base's nested repositories (submodules, and those `git add` takes as gitlinks),
        # relative to the top: a worktree holds each as an empty folder.
        self.gitlinks: list[str] = []
        self.base = ""
        self.integration = ""
        self.head: str | None = None
        self.guard: Guard | None = None
        # Watched by the guard while its spokes and checks run: only when they are not
        # confined. Confined, they cannot write the person's tree or repository, so what
        # changes there meanwhile is the person's, never put back nor blamed.
        self.watched = not getattr(settings, "sandbox", False)
        state = paths.state_dir.resolve()
        self.state = [str(state.relative_to(self.top))] if state.is_relative_to(self.top) else []
        self.exclude = noise_globs()

    # -- the run's start ----------------------------------------------------------------
    def start(self) -> None:
        """Clean what a dead run left, take the base, find the folders to link."""
        clean_stale(self.paths, self.repo)
        # --pr: the work starts from the run's branch (or the person's last commit).
        self.prepare(self.delivery.start() if self.delivery is not None else None)

    def prepare(self, base: str | None = None) -> None:
        """Take the base (``base``, or the user's working tree now) and find the folders to
        link. Leaves other worktrees alone: a run may be using them."""
        self.dir.mkdir(parents=True, exist_ok=True)
        ignore_in_git(self.dir)
        self.links, ignored = self._ignored()
        self.copies = self._to_copy()
        index = guard_dir(self.paths, self.dir) / f".{self.run_id}-p{os.getpid()}.index"
        index.unlink(missing_ok=True)
        # The state dir (plans, logs, these worktrees) is never part of the work: not read
        # when git does not ignore it already, and dropped when tracked.
        skip = [f"{s}/**" for s in self.state if s not in ignored]
        self.guard = Guard(
            self.repo,
            index=index,
            exclude=self.exclude + skip,
            drop=self.state,
            saved=self.paths.machine_dir / "outside",
            own=self._written_by_maestro(),
        )
        if base is not None:
            self.base = self.integration = base
            return
        tree = self.guard.tree()
        self.gitlinks = self.repo.submodules(self.guard.index)
        head = self.head = self.repo.head()
        self.base = self.repo.commit_tree(
            tree,
            [head] if head else [],
            f"maestro run {self.run_id}: the working tree at its start",
        )
        self.integration = self.base

    def _written_by_maestro(self) -> list[str]:
        """The plan and the log when they are links to files elsewhere in the repository
        (paths.py follows them): Maestro writes them all along a run (repository-relative)."""
        own = []
        for path in (self.paths.plan, self.paths.log):
            target = path.resolve()
            if target.is_relative_to(self.top):
                own.append(str(target.relative_to(self.top)))
        return own

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
    measures = True  # (context.Workspaces) a worktree's change is always read exactly
    unattributed: frozenset[str] = frozenset()  # a worktree holds only its task's changes

    def open(self, task: Task) -> TaskWorktree:
        return TaskWorktree(self, task)

    def release(self, change: str) -> None:
        self.repo.release([change])

    def create(self, label: str) -> Worktree:
        """A new worktree of the integration commit for one attempt."""
        with self._lock:
            self._count += 1
            # The creator's pid ends the name: cleanup never takes a live process's worktree.
            name = f"{self.run_id}-{label}-{self._count}-p{os.getpid()}"
        return self._open(name, self.integration)

    def close(self) -> None:
        """The run ends: its guard's index goes (each worktree went with its dispatch)."""
        if self.guard is not None:
            self.guard.index.unlink(missing_ok=True)

    def _open(self, name: str, base: str) -> Worktree:
        mark = self._mark() if self.guard is not None and self.watched else None
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
            source, target = self._copy_source(rel), root / rel
            if source and source.is_file() and not target.exists() and not target.is_symlink():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)  # the content, not a link
        index = self.dir / f".{name}.index"
        admin = self.repo.admin_of(path)
        if admin is not None and (admin / "index").exists():
            # Its stat data: unchanged files are not hashed again.
            shutil.copyfile(admin / "index", index)
        return Worktree(name, path, root, base, index, mark)

    def _copy_source(self, rel: str) -> Path | None:
        """The file a worktree's copy of ``rel`` is read from: the file its links lead to
        (read when each worktree is made), None when they lead out of the project: a
        file outside it never reaches a spoke through a copy (the run names it once)."""
        real = Path(os.path.realpath(self.paths.root / rel))
        if real.is_relative_to(self.paths.root.resolve()):
            return real
        with self._lock:
            self.leading_out.setdefault(rel, str(real))
        return None

    def closing_note(self) -> str:
        """What the run says of the copies it did not make ("" when none)."""
        if not self.leading_out:
            return ""
        links = "; ".join(
            f"{rel} is a symlink leading out of the project (to {target})"
            for rel, target in sorted(self.leading_out.items())
        )
        return (
            f"{links}: not copied into the worktrees. Fix: put the file itself in the "
            "project, or leave it out of workspace_copy and .worktreeinclude."
        )

    def measure(self, wt: Worktree, files: Sequence[str]) -> Measured:
        """The attempt's exact change; ``files`` is the task's Files (its scope). What
        changed outside the worktree while it ran is put back first (see guard.py)."""
        first = self.guard is not None and wt.mark is not None and wt.found is None
        found = Found(wt.name)
        if first:
            assert self.guard is not None and wt.mark is not None
            wt.found = found
            self.guard.undo_git(wt.mark, found)  # before git reads the worktree
        links = [f"{self.prefix}{link}" for link in self.links]
        tree = self.repo.snapshot(wt.path, wt.index, exclude=self.exclude, drop=links)
        changes = self.repo.tree_changes(wt.base, tree)
        if first:
            assert wt.mark is not None
            self._undo_tree(wt.mark, found, {c.path for c in changes})
        names = sorted(self._relative(c.path) for c in changes)
        out_of_scope = [n for n in names if not owned_by_any(list(files), n)]
        patch = self.repo.patch(wt.base, tree) if changes else ""
        outside = wt.found or Found(wt.name)
        return Measured(
            tree=tree,
            changes=changes,
            files=names,
            out_of_scope=out_of_scope,
            outside=list(outside.paths),
            saved=outside.shown,
            patch=patch,
            diff_stat=shortstat(patch, len(changes)) if changes else "",
            diff_sha=hashlib.sha256(patch.encode("utf-8", "surrogateescape")).hexdigest()
            if patch
            else None,
        )

    def _mark(self) -> Mark:
        """The guard's mark, never taken while a landing writes the user's tree: it would
        see a landing's temporary file, which is gone (or there) when the mark is
        compared, and put back what the run never meant to leave."""
        assert self.guard is not None
        return self.guard.mark(self._land_lock)

    def _undo_tree(self, mark: Mark, found: Found, inside: Collection[str] = ()) -> None:
        """The user's files changed since ``mark``, put back into ``found``; left alone:
        what the run landed meanwhile (another task's work), and files the worktree
        changed too (``inside``: a person's edit of them is the landing's to merge, never
        overwritten)."""
        assert self.guard is not None
        started = mark.started_ns

        def keep(path: str) -> bool:
            return path in inside or self._landed.get(self._relative(path), 0) >= started

        self.guard.undo_tree(mark, found, keep=keep, landing=self._land_lock)
        found.shown = shown_path(found.saved, self.paths.root) if found.saved else ""

    @contextlib.contextmanager
    def contained(self, label: str) -> Iterator[Found]:
        """A command of Maestro's own run in a worktree (a validation command): what it
        changed outside the worktree meanwhile is put back, and named in the Found."""
        with self._lock:
            self._count += 1
            found = Found(f"{self.run_id}-{label}-{self._count}-p{os.getpid()}")
        if self.guard is None or not self.watched:
            yield found
            return
        mark = self._mark()
        try:
            yield found
        finally:
            self.guard.undo_git(mark, found)
            self._undo_tree(mark, found)

    def settle(self, wt: Worktree) -> None:
        """A worktree whose change was never measured (its spoke failed to start, say):
        what changed outside it is put back all the same."""
        if self.guard is not None and wt.mark is not None and wt.found is None:
            self.measure(wt, ())

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
        with self._lock:
            self._count += 1
            name = f"{self.run_id}-check-{self._count}-p{os.getpid()}"
        return self._open(name, commit)

    def discard(self, wt: Worktree, *, keep: bool = False) -> Path | None:
        """Remove the worktree; with ``keep`` leave it (marked kept) and return its path."""
        self.settle(wt)
        wt.index.unlink(missing_ok=True)
        if keep:
            (self.dir / f"{wt.name}{KEEP_SUFFIX}").write_text(str(wt.path) + "\n", encoding="utf-8")
            return wt.path
        self.repo.remove_worktree(wt.path)
        return None


class TaskWorktree:
    """One dispatch's own worktree (a ``context.Workspace``): what its spoke changed is
    read from it exactly, and its accepted change lands from it."""

    def __init__(self, spaces: Worktrees, task: Task) -> None:
        self.spaces, self.task = spaces, task
        self.worktree = spaces.create(f"task-{task.id}")
        self.root = self.worktree.root
        self.view: Worktree | None = None  # where its check runs when not its own worktree
        self.measured: Measured | None = None
        self.landing: Landing | None = None

    def spoke(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()  # its worktree is read afterwards

    def changes(self, parsed: ParsedResult) -> Scope:
        spaces, task, wt = self.spaces, self.task, self.worktree
        claimed = claimed_paths(parsed)
        measured = self.measured = spaces.measure(wt, task.files)
        scope = Scope(
            measured.out_of_scope,
            outside=measured.outside,
            saved=measured.saved,
            # The answer names files it changed, but its worktree holds no change at all.
            unmeasured=[]
            if measured.files
            else sorted({c for c in claimed if not c.startswith(("/", ".."))}),
            unlandable=spaces.unlandable(wt, measured, task.files, claimed),
        )
        if task.mode == "coordinate":
            # Its subtasks landed while it worked: its check needs their work too.
            self.view = spaces.combined(wt, measured)
        return scope

    @property
    def check_root(self) -> Path:
        return (self.view or self.worktree).root

    def validation(self) -> contextlib.AbstractContextManager[Found]:
        return self.spaces.contained(f"task-{self.task.id}-validation")

    def finish(self, accepted: bool) -> None:
        if self.measured is None:
            self.measured = self.spaces.measure(self.worktree, self.task.files)
        if accepted:
            task = self.task
            self.landing = self.spaces.land(task.id, task.title, self.worktree, self.measured)

    def receipt(self, validation: str | None, validation_exit: int | None) -> Receipt | None:
        """The attempt's exact change: its files, stat and hash; the commit it landed as on
        the user's branch (``--commit``), else HEAD when the run began; and the change
        itself as a commit (its parent is where it started), which review reads."""
        measured, landing = self.measured, self.landing
        if measured is None:
            return None
        return Receipt(
            diff_stat=measured.diff_stat,
            files_changed=measured.files,
            validation=validation,
            validation_exit=validation_exit,
            commit=landing.committed if landing and landing.committed else self.spaces.head,
            diff_sha=measured.diff_sha,
            change=landing.change if landing else None,
        )

    def close(self, keep: bool) -> Path | None:
        if self.view is not None:
            self.spaces.discard(self.view)
        return self.spaces.discard(self.worktree, keep=keep and self.spaces.keep)


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

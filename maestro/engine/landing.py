"""Landing: an accepted change reaches the integration commit and the user's tree, file
by file, three-way where the person edited too, or not at all (its patch and versions
saved with the commands that merge them in); and what of a change must not or cannot
land (a link leading out of the project, an ignored deliverable, a nested repository),
found in a change, or refused before any dispatch (a task's Files in a nested repository).

``Landings`` is the landing half of ``workspace.Worktrees``, which holds the run's
repository, base, integration commit and locks it uses.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro.engine.guard import Guard
from maestro.engine.ownership import owned_by_any
from maestro.engine.worktree import ZERO, Measured, Unlandable, Worktree
from maestro.errors import MaestroError
from maestro.filespec import literal_files
from maestro.fsutil import atomic_write
from maestro.repo import Repo, TreeChange, mine
from maestro.state.model import Task

if TYPE_CHECKING:
    from maestro.engine.pullrequest import Delivery


@dataclass
class Landing:
    change: str | None  # the task's change as a commit (its parent: where it started)
    status: str  # landed | conflict | empty
    conflicts: list[str] = field(default_factory=list)
    patch_file: Path | None = None
    committed: str | None = None  # the commit on the user's branch (--commit)
    commit_error: str | None = None  # why --commit was refused
    uncommitted: list[str] = field(default_factory=list)  # then: the files left unstaged
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
            return (
                f"its files are in your tree, uncommitted and unstaged "
                f"({', '.join(self.uncommitted)}): --commit was refused: {self.commit_error}"
            )
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


class Landings:
    """The landing half of ``Worktrees`` (its attributes are set there)."""

    repo: Repo
    top: Path  # the repository's top, resolved
    prefix: str  # the project's folder inside it ("" or "sub/")
    run_id: str
    commit: bool  # --commit
    delivery: Delivery | None  # --pr: the run's own branch (engine/pullrequest.py)
    dir: Path  # the run's worktrees folder
    patches: Path
    integration: str
    guard: Guard | None
    gitlinks: list[str]  # the base's nested repositories
    links: list[str]
    copies: list[str]
    _land_lock: threading.Lock
    _landed: dict[str, int]  # project files the run landed, and when

    def _relative(self, repo_path: str) -> str:
        if not self.prefix:
            return repo_path
        if repo_path.startswith(self.prefix):
            return repo_path[len(self.prefix) :]
        return os.path.relpath("/" + repo_path, "/" + self.prefix.rstrip("/"))

    def _nested(self, links: Sequence[str]) -> dict[str, str]:
        """The nested repositories at ``links`` (relative to the top), as a person knows
        them: a submodule (the user's index has it), or a repository of its own."""
        registered = self.repo.submodules()
        return {
            link: f"the submodule {self._relative(link)}"
            if link in registered
            else f"{self._relative(link)}, a git repository of its own (not a submodule)"
            for link in links
        }

    def refuse_submodule_work(self, tasks: Sequence[Task]) -> None:
        """A worktree holds each nested repository (a submodule, or one of its own that
        the base took as a gitlink) as an empty folder, and a change under it is not the
        project's: such a task's work would be lost. Refused before any dispatch."""
        hits = []
        for link in self.gitlinks:
            rel = self._relative(link)
            if rel.startswith(".."):
                continue
            for t in tasks:
                hit = next((f for f in t.files if f == rel or f.startswith(rel + "/")), None)
                if hit is not None:
                    hits.append((t.id, hit, link))
        if hits:
            named = self._nested([link for _, _, link in hits])
            inside = [f"task {tid} ({hit}, in {named[link]})" for tid, hit, link in hits]
            raise MaestroError(
                f"{'; '.join(inside)}: a task's worktree holds a nested repository empty, so "
                "its work there would be lost",
                "run with `maestro run --in-place`, or plan that work in that repository itself.",
            )

    def unlandable(
        self, wt: Worktree, measured: Measured, files: Sequence[str], claimed: Sequence[str] = ()
    ) -> list[Unlandable]:
        """What of the attempt's work must not or cannot land: a symlink leading out of the
        project (followed as it will stand once landed, through the change's other links
        and the user's tree); a deliverable git ignores (one of the task's own ``files``
        named literally or in its answer, ``claimed``, that its worktree holds but not its
        change); a file inside a nested repository. The scope gate fails on any, at every
        strictness."""
        found = self._links_out(wt, measured)
        found += self._ignored_deliverables(wt, measured, files, claimed)
        found += self._in_nested(wt, measured)
        return found

    def _ignored_deliverables(
        self, wt: Worktree, measured: Measured, files: Sequence[str], claimed: Sequence[str]
    ) -> list[Unlandable]:
        owned = [c for c in claimed if owned_by_any(list(files), c)]
        # Not asked: the linked folders (the user's own), nested repositories (check-ignore
        # refuses a path inside one: _in_nested names them).
        elsewhere = (
            *(f"{self.prefix}{link}/" for link in self.links),
            *(f"{link}/" for link in self.gitlinks),
        )
        written = sorted(
            rel
            for rel in {*literal_files(files), *owned}
            if rel not in measured.files
            and rel not in self.copies
            and not rel.startswith("/")
            and ".." not in rel.split("/")
            and not f"{self.prefix}{rel}/".startswith(elsewhere)
            and os.path.lexists(wt.root / rel)
        )
        return [
            Unlandable(
                rel,
                f"is ignored by git ({rule}), so it cannot land",
                f"change .gitignore so that git does not ignore it (`git check-ignore -v "
                f"{rel}` shows the rule), take it out of the task's Files, or run the task "
                "with `--in-place`.",
            )
            for rel, rule in sorted(self.repo.ignoring(written, cwd=wt.root).items())
        ]

    def _in_nested(self, wt: Worktree, measured: Measured) -> list[Unlandable]:
        """Files written inside a nested repository (a worktree holds each empty), and a
        nested repository the attempt made (`git init`): none of it is the project's."""
        written = {
            os.path.relpath(Path(folder, name), wt.path): link
            for link in self.gitlinks
            for folder, _, names in os.walk(wt.path / link)
            for name in names
        }
        named = self._nested(sorted(set(written.values()))) if written else {}
        fix = "plan that work in that repository itself, or run with `maestro run --in-place`."
        found = [
            Unlandable(self._relative(path), f"is inside {named[link]}, so it cannot land", fix)
            for path, link in sorted(written.items())
        ]
        for change in measured.changes:
            if change.new_mode == "160000" and change.path not in self.gitlinks:
                why = "is a git repository of its own (not a submodule), so it cannot land"
                made = "do that work without `git init` there, then run the task again."
                found.append(Unlandable(self._relative(change.path), why, made))
        return found

    def _links_out(self, wt: Worktree, measured: Measured) -> list[Unlandable]:
        links = {
            c.path: self._theirs(wt, c).decode("utf-8", "surrogateescape")
            if c.new_mode == "120000"
            else None
            for c in measured.changes
        }
        found = []
        for path, target in sorted(links.items()):
            if target is not None and self._leads_out(path, links):
                found.append(
                    Unlandable(
                        self._relative(path),
                        f"is a symlink leading out of the project (to {target})",
                        "replace each with a file, or with a link that stays inside the project.",
                    )
                )
        return found

    def _leads_out(self, path: str, links: dict[str, str | None]) -> bool:
        """Whether the link at ``path`` (relative to the top) leads out of the project,
        each link on the way followed as ``links`` has it (the change's paths: a link's
        target, None when not a link) or else as the user's tree has it."""
        where: list[str] = []
        todo = path.split("/")
        hops = 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not where:
                    return True  # above the repository's top
                where.pop()
                continue
            where.append(part)
            name = "/".join(where)
            target = links[name] if name in links else _link(self.top / name)
            if target is None:
                continue
            hops += 1
            if hops > 40:
                return True  # a loop of links, which leads nowhere
            where.pop()
            if target.startswith("/"):
                target = os.path.relpath(os.path.normpath(target), self.top)
                if target == ".." or target.startswith("../"):
                    return True
                where = []
            todo = target.split("/") + todo
        return not ("/".join(where) + "/").startswith(self.prefix)

    def land(self, task_id: str, title: str, wt: Worktree, measured: Measured) -> Landing:
        if not measured.changes:
            return Landing(None, "empty")
        delivery = self.delivery
        if delivery is None:
            message = f"Task {task_id}: {title}\n\nmaestro run {self.run_id}"
        else:  # a commit of the task on the run's own branch, the person's (--pr)
            message = delivery.message(task_id, title, self.run_id)
        pr = delivery is not None
        change = self.repo.commit_tree(measured.tree, [wt.base], message, as_person=pr)
        self.repo.keep(change)  # review reads it later: `git gc` must not take it
        with self._land_lock:
            conflicts = self._integrate(change, wt.base, message if pr else None)
            writes: list[Any] = []
            if not conflicts and delivery is None:
                writes, conflicts = self._merge_into_user_tree(wt, measured.changes)
            if conflicts:
                patch = self._save_patch(task_id, measured)
                recover = self._save_versions(patch, wt, measured, conflicts)
                return Landing(change, "conflict", conflicts, patch, recover=recover)
            if delivery is not None:  # the branch moves; the person's tree is not touched
                delivery.landed(self.integration)
                return Landing(change, "landed", committed=self.integration)
            for write in writes:
                write()
            if self.guard is not None:
                self.guard.wrote()
            now = time.time_ns()
            for item in measured.changes:
                self._landed[self._relative(item.path)] = now
            landing = Landing(change, "landed")
            planted = self.guard.planted() if self.guard is not None else []
            if self.commit and planted:
                # A commit runs the repository's hooks: never ones that appeared mid-run.
                landing.commit_error = (
                    f"{', '.join(planted)} changed since the run began, and a commit would run it"
                )
                landing.uncommitted = sorted(self._relative(c.path) for c in measured.changes)
            elif self.commit:
                index = self.dir / f".{self.run_id}-commit-p{os.getpid()}.index"  # (repo.in_use)
                mine(index.name)
                try:
                    landing.committed = self.repo.commit_paths(
                        [c.path for c in measured.changes],
                        f"Task {task_id}: {title}\n\nLanded by maestro run {self.run_id}.",
                        index,
                    )
                except Exception as exc:  # noqa: BLE001 - a hook, a merge, an identity: reported, the files stay
                    landing.commit_error = " ".join(getattr(exc, "message", str(exc)).split())
                    landing.uncommitted = sorted(self._relative(c.path) for c in measured.changes)
                if landing.committed and self.guard is not None:
                    self.guard.moved_by_run(landing.committed)
            return landing

    def _integrate(self, change: str, base: str, message: str | None = None) -> list[str]:
        """``change`` (made from ``base``) on the integration commit: itself when nothing
        landed meanwhile, else a merge of the two with the integration as its one parent
        (a run's history stays a line: with ``message``, the task's commit on its branch)."""
        if self.integration == base:
            self.integration = change
            return []
        tree, conflicts = self.repo.merge_commits(self.integration, change)
        if tree is None:
            return [self._relative(p) for p in conflicts]
        self.integration = self.repo.commit_tree(
            tree,
            [self.integration],
            message or f"maestro run {self.run_id}: integration",
            as_person=message is not None,
        )
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
            if ZERO.match(change.new_sha):
                recover[rel] = "deleted"
                continue
            atomic_write(theirs_dir / rel, self._theirs(wt, change), durable=False)
            try:
                mine = _read(self.top / change.path)
            except IsADirectoryError:
                mine = b""
            if mine is None:
                recover[rel] = "copy"
            elif ZERO.match(change.old_sha):
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
        has_base = not ZERO.match(change.old_sha)
        has_theirs = not ZERO.match(change.new_sha)
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


def _link(path: Path) -> str | None:
    """The target of the link at ``path``; None when it is no link."""
    try:
        return os.readlink(path)
    except OSError:
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

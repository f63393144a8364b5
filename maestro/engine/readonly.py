"""A worktree for a reader (a reviewer, a challenger): what it writes stays there and goes
with it, and what it changes outside is put back (guard.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from maestro.engine.workspace import Worktrees, mode_for
from maestro.engine.worktree import Worktree
from maestro.paths import ProjectPaths


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
        self.spaces: Worktrees | None = None
        self.worktree: Worktree | None = None
        self.root: Path | None = None

    def __enter__(self) -> Path | None:
        mode = mode_for(self.paths, self.settings)
        if mode.repo is None:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.spaces = Worktrees(self.paths, mode.repo, f"{self.label}-{stamp}", self.settings)
        self.spaces.prepare(self.commit)
        self.worktree = self.spaces.create("read")
        self.root = self.worktree.root
        return self.root

    def edited(self) -> list[str]:
        """Files the reader changed in its worktree (project-relative), and what changed
        outside it while it read (put back: guard.py)."""
        if self.spaces is None or self.worktree is None:
            return []
        measured = self.spaces.measure(self.worktree, ())
        return [*measured.files, *measured.outside]

    def outside(self) -> list[str]:
        """What changed outside the reader's worktree while it read, put back."""
        if self.spaces is None or self.worktree is None:
            return []
        return self.spaces.measure(self.worktree, ()).outside

    def __exit__(self, *exc: object) -> None:
        if self.spaces is not None and self.worktree is not None:
            self.spaces.discard(self.worktree)

"""`maestro archive`: move the plan and the log to `.ai/archive/<UTC time>/`."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from maestro import clock, formatting
from maestro.cli.busy import refuse_while_running
from maestro.cli.context import Context, Result
from maestro.cli.status import shown_path
from maestro.errors import MaestroError, NotFound, PlanError
from maestro.fsutil import file_lock
from maestro.logfile import lock_path
from maestro.paths import ProjectPaths
from maestro.repo import Repo
from maestro.state.store import PlanStore

EXAMPLES = """\
  maestro archive                 move .ai/MAESTRO.md and .ai/MAESTRO-LOG.md away
  maestro archive --dry-run       say what would move
  maestro archive --json

Refused while a run is working on the plan (`maestro wait` or `maestro run --abort` first)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="say what would move; move nothing")


@contextlib.contextmanager
def _locked(paths: ProjectPaths) -> Iterator[None]:
    """Hold the plan's and the log's locks, so no writer is between reading and writing."""

    with file_lock(PlanStore(paths).lock_path), file_lock(lock_path(paths)):
        yield


def _check_no_live_run(paths: ProjectPaths) -> None:
    refuse_while_running(paths, "archiving")


def new_folder(base: Path) -> Path:
    """A fresh folder named for now; a second archive in the same second gets -2, -3..."""
    stamp = clock.folder_stamp()
    for n in range(1, 1000):
        folder = base / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        return folder
    raise PlanError(
        f"too many archives named {stamp} in {base}.", "wait a second and run it again."
    )


def run(args: argparse.Namespace, ctx: Context) -> Result:
    paths = ctx.paths
    present = [p for p in (paths.plan, paths.log) if p.is_file()]
    if not present:
        raise NotFound(
            f"nothing to archive: neither {shown_path(paths)} nor {shown_path(paths, 'log')} exists.",
            "make a plan first with `maestro plan --from plan.yaml`.",
        )
    _check_no_live_run(paths)
    names = [shown_path(paths, "plan" if p == paths.plan else "log") for p in present]
    if args.dry_run:
        where = shown_path(paths, "archive_dir") + "/" + clock.folder_stamp() + "/"
        data = {"moved": [], "would_move": names, "folder": where, "dry_run": True}
        return Result("archive", data, f"Dry run: would move {' and '.join(names)} to {where}")
    with _locked(paths):
        present = [p for p in (paths.plan, paths.log) if p.is_file()]
        if not present:
            raise NotFound(
                "nothing to archive: the files were moved meanwhile.", "check `maestro status`."
            )
        changes = _changes(paths)
        folder = new_folder(paths.archive_dir)
        moved = []
        for path in present:
            # Same file system (both under the state dir), so each move is one rename.
            os.replace(path, folder / path.name)
            moved.append(shown_path(paths, "plan" if path == paths.plan else "log"))
        PlanStore(paths).forget()  # its versions must not be merged into a next plan
        released = _release(paths, changes)
    shown = formatting.shown_path(folder, paths.root, folder=True)
    data = {"moved": moved, "folder": shown, "dry_run": False, "released_changes": released}
    return Result("archive", data, f"Archived {' and '.join(moved)} to {shown}")


def _changes(paths: ProjectPaths) -> list[str]:
    """The change commits the plan's receipts name (a plan that does not parse: none)."""

    try:
        plan = PlanStore(paths).load()
    except MaestroError:
        return []
    return [t.receipt.change for t in plan.tasks if t.receipt and t.receipt.change]


def _release(paths: ProjectPaths, changes: list[str]) -> int:
    """Let `git gc` have the archived plan's change commits: its receipts are put away,
    and no review reads them any more. Returns how many refs went."""

    repo = Repo.find(paths.root) if changes else None
    if repo is None:
        return 0
    held = set(repo.kept())
    gone = [c for c in changes if c in held]
    repo.release(gone)
    return len(gone)

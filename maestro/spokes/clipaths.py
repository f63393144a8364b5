"""Where the spoke CLIs were found, for a shell whose PATH lacks them.

A hub's shell need not have the user's PATH: Codex runs each command of its model with
``bash -lc``, and the login profile sets PATH afresh (HOSTS.md section 5), so a ``maestro
run`` started there would find none of the user's spoke CLIs. So every lookup on a PATH
that has a CLI (``maestro install``, ``doctor``, a plan or a run from the user's shell)
records where it is, and a lookup on a PATH without it uses the record: the recorded
folder goes after PATH, so a PATH hit always wins and ``shutil.which`` checks that the
recorded file is still there and executable.

The record names programs Maestro runs: it is the user's own file in the user's state
folder (never under the project's state dir, which spokes write), read only when nobody
else could have written it; a spoke's lookups record nothing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from maestro.errors import DiskFull
from maestro.fsutil import atomic_write, read_private
from maestro.paths import user_state_dir


def record_file(env: Mapping[str, str]) -> Path:
    return user_state_dir(env) / "cli-paths.json"


def recorded(env: Mapping[str, str]) -> dict[str, str]:
    """Executable name -> the absolute path it was found at (it may be gone since)."""
    raw = read_private(record_file(env))
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return {
        name: path
        for name, path in (data.items() if isinstance(data, dict) else ())
        if isinstance(path, str) and os.path.isabs(path) and os.path.basename(path) == name
    }


def remember(found: Mapping[str, str], env: Mapping[str, str]) -> bool:
    """Record ``found`` (executable name -> the path a PATH lookup gave) over what was
    recorded; written only when that changes it (True), and left unwritten when it
    cannot be."""
    known = recorded(env)
    merged = {**known, **{name: path for name, path in found.items() if os.path.isabs(path)}}
    if merged == known:
        return False
    text = json.dumps(merged, indent=2, sort_keys=True) + "\n"
    path = record_file(env)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(path, text, mode=0o600, durable=False)
    except (OSError, DiskFull):  # a read-only home, a full disk: the next lookup tries again
        return False
    return True


def recorded_path(executable: str, env: Mapping[str, str]) -> str | None:
    """Where ``executable`` was recorded, while an executable file is still there."""
    where = recorded(env).get(executable)
    return where if where and shutil.which(where) else None


def search_path(executable: str, env: Mapping[str, str]) -> str:
    """``env``'s PATH, followed by the folder ``executable`` was recorded in when PATH
    does not have it."""
    path = env.get("PATH", os.defpath)
    where = recorded(env).get(executable)
    if where is None or shutil.which(executable, path=path):
        return path
    return os.pathsep.join(p for p in (path, os.path.dirname(where)) if p)

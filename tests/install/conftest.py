"""Shared helpers for the installer tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

FIXED_INVOCATION = "/opt/maestro venv/bin/maestro"  # a space, so quoting shows in snapshots
# pipx's link (what installers/install.sh gives), and a worst case: a venv deep in a long home.
TYPICAL_INVOCATION = "/home/alice/.local/bin/maestro"
LONG_INVOCATION = "/home/someone-with-a-long-name/.local/share/pipx/venvs/maestro-orchestra/bin/maestro"


class TextFile(SingleFileSnapshotExtension):
    """One readable text file per snapshot."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextFile)


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (outside .git) with its sha256: a tree's exact state."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def dirs(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir() and ".git" not in p.parts}

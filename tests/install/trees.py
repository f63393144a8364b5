"""Helpers for tests that compare folder trees byte for byte."""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (outside .git) with its sha256: a tree's exact state."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def dirs(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_dir() and ".git" not in p.parts
    }

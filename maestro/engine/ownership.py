"""Which paths a task owns: its `Files` entries, matched by the one rule of
``maestro.filespec`` (files, folders, gitignore-style globs), over lists of entries."""

from __future__ import annotations

from collections.abc import Iterable

from maestro.filespec import is_glob, normalize, overlap, owns

__all__ = ["is_glob", "normalize", "overlapping", "owned_by_any", "owns"]


def owned_by_any(entries: Iterable[str], path: str) -> bool:
    return any(owns(entry, path) for entry in entries)


def overlapping(first: Iterable[str], second: Iterable[str]) -> list[str]:
    """Entries of ``first`` that share a path with some entry of ``second``."""
    others = list(second)
    return [entry for entry in first if any(overlap(entry, other) for other in others)]

"""Which paths a task owns: its `Files` entries, matched against repository paths.

An entry is a file (``src/app.py``), a folder (``src/auth/`` or an existing directory
name) owning everything below it, or a glob (``tests/test_*.py``). Paths are compared as
POSIX paths relative to the project root, without a leading ``./``.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from maestro.graph import normalize_file

_GLOB_CHARS = set("*?[")


def normalize(entry: str) -> str:
    """``./src//a.py`` -> ``src/a.py``; a trailing slash is kept (it marks a folder)."""
    text = normalize_file(entry)
    return "" if text in (".", "./") else text


def is_glob(entry: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in entry)


def owns(entry: str, path: str) -> bool:
    """Does the `Files` entry cover the repository path ``path``?"""
    entry, path = normalize(entry), normalize(path)
    if not entry:
        return False
    if is_glob(entry):
        return fnmatchcase(path, entry) or fnmatchcase(path, entry.rstrip("/") + "/*")
    bare = entry.rstrip("/")
    return path == bare or path.startswith(bare + "/")


def owned_by_any(entries: Iterable[str], path: str) -> bool:
    return any(owns(entry, path) for entry in entries)


def _overlap(a: str, b: str) -> bool:
    a, b = normalize(a), normalize(b)
    if not a or not b:
        return False
    if is_glob(a) or is_glob(b):
        # Two globs, or a glob and a path: overlapping if either matches the other's
        # literal text. Conservative in the direction that matters (exclusion).
        return (
            owns(a, b.rstrip("/"))
            or owns(b, a.rstrip("/"))
            or fnmatchcase(a, b)
            or fnmatchcase(b, a)
        )
    return owns(a, b) or owns(b, a)


def overlapping(first: Iterable[str], second: Iterable[str]) -> list[str]:
    """Entries of ``first`` that share a path with some entry of ``second``."""
    others = list(second)
    return [entry for entry in first if any(_overlap(entry, other) for other in others)]

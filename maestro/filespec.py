"""What a task's Files entry covers: the one rule the scope gate, the scheduler and the
plan's conflict check share.

An entry is a file (``src/app.py``), a folder (``src/auth/``, or an existing folder's
name) owning everything below it, or a glob read the way a line of ``.gitignore`` is:
``*`` and ``?`` stay within one folder name, ``**`` spans any number of folders
(``src/**/*.py`` covers ``src/a.py`` and ``src/x/y/b.py``), ``[ab]`` is one of those
characters, a glob without a slash matches at any depth (``*.md``), and a folder a glob
matches owns everything below it. Paths are POSIX paths relative to the project root,
without a leading ``./``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from fnmatch import fnmatchcase

_GLOB_CHARS = frozenset("*?[")
Segments = tuple[str, ...]


def normalize_file(path: str) -> str:
    """One spelling per file: ``./src//a.py`` and ``src/a.py`` are the same file."""
    text = path.strip().replace("\\", "/")
    trailing = text.endswith("/")
    norm = posixpath.normpath(text) if text else text
    return norm + "/" if trailing and norm not in ("/", ".") else norm


def normalize(entry: str) -> str:
    """``./src//a.py`` -> ``src/a.py``; a trailing slash is kept (it marks a folder)."""
    text = normalize_file(entry)
    return "" if text in (".", "./") else text


def is_glob(entry: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in entry)


def literal_files(entries: Iterable[str]) -> list[str]:
    """The entries that name one file (folders and globs are for ownership)."""
    return [e for e in entries if e and not e.endswith("/") and not is_glob(e)]


def _below(entry: str) -> Segments:
    """The folder names an entry covers, open-ended (``**`` last: what is below it too);
    a glob without a slash may sit at any depth."""
    names = tuple(entry.rstrip("/").split("/"))
    if len(names) == 1 and is_glob(entry):
        names = ("**", *names)
    return (*names, "**")


def owns(entry: str, path: str) -> bool:
    """Does the `Files` entry cover the repository path ``path``? (``path`` is taken as
    written: a ``*`` in it is a character, not a wildcard.)"""
    entry, path = normalize(entry), normalize(path)
    if not entry or not path:
        return False
    if not is_glob(entry):
        bare = entry.rstrip("/")
        return path == bare or path.startswith(bare + "/")
    return _meet(_below(entry), tuple(path.rstrip("/").split("/")), literal=True)


def overlap(a: str, b: str) -> bool:
    """Could one path be covered by both entries? Exact for files, folders and a glob
    against either; two globs are taken to meet unless what they fix (folder names, the
    text before a name's first wildcard and after its last) keeps them apart: unsure is
    yes, the side that keeps two tasks from writing one file."""
    a, b = normalize(a), normalize(b)
    if not a or not b:
        return False
    if not is_glob(a) and not is_glob(b):
        return owns(a, b) or owns(b, a)
    return _meet(_below(a), _below(b))


def _meet(a: Segments, b: Segments, *, literal: bool = False) -> bool:
    """Is there a path both sequences of names match? ``**`` is any number of names;
    with ``literal``, ``b``'s names are a path's own, wildcards in them plain text."""
    seen: dict[tuple[int, int], bool] = {}

    def meet(i: int, j: int) -> bool:
        if (i, j) not in seen:
            seen[i, j] = _step(i, j)
        return seen[i, j]

    def _step(i: int, j: int) -> bool:
        if i < len(a) and a[i] == "**":
            return meet(i + 1, j) or (j < len(b) and meet(i, j + 1))
        if not literal and j < len(b) and b[j] == "**":
            return meet(i, j + 1) or (i < len(a) and meet(i + 1, j))
        if i == len(a) or j == len(b):
            return i == len(a) and j == len(b)
        return _names_meet(a[i], b[j], literal) and meet(i + 1, j + 1)

    return meet(0, 0)


def _names_meet(x: str, y: str, literal: bool) -> bool:
    if literal or not is_glob(y):
        return fnmatchcase(y, x) if is_glob(x) else x == y
    if not is_glob(x):
        return fnmatchcase(x, y)
    (px, sx), (py, sy) = _fixed(x), _fixed(y)
    return (px.startswith(py) or py.startswith(px)) and (sx.endswith(sy) or sy.endswith(sx))


def _fixed(glob: str) -> tuple[str, str]:
    """A name glob's text before its first wildcard and after its last."""
    first = min(glob.index(ch) for ch in _GLOB_CHARS if ch in glob)
    last = max(glob.rfind(ch) for ch in "*?]")
    return glob[:first], glob[last + 1 :] if last >= first else ""

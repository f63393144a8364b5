"""Claude Code's session store: a session made in one folder, resumed from another.

Claude Code keeps a session's transcript at ``<config>/projects/<slug>/<id>.jsonl``:
``<config>`` is ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``, and ``<slug>`` is the real path
of the folder it ran in (see ``slug``). ``claude -p --resume <id>`` looks under the slug of
the folder it starts in (and of the git worktrees that still exist) and otherwise answers
"No conversation found with session ID" (HOSTS.md section 5; Claude Code 2.1.197,
checked by tests/realcli/test_resume.py; 2.1.332 also finds a session under another
folder's slug). Each dispatch of a task works in a worktree of its own, removed when it
ends, so before a revision resumes, the session's latest transcript is copied under the
slug of the revision's folder, which both find.

Only the store's ``projects`` folder is written: the session id must be a UUID, no link
under ``projects`` is followed, and the copy is made under a temporary name, then renamed.
A transcript is data Claude reads back; nothing here runs it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

NOT_FOUND = "No conversation found with session ID"
SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
SLUG_CAP = 200  # a longer slug is cut here and ends in a hash of the path
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def slug(folder: str) -> str:
    """Claude Code's name for a folder's transcripts: each UTF-16 unit of the path that is
    not an ASCII letter or digit becomes ``-``; past ``SLUG_CAP`` units, the name is cut
    there and ends in ``-`` and the path's 32-bit string hash in base 36."""
    raw = folder.encode("utf-16-le")
    units = [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]
    name = "".join(chr(u) if u < 128 and chr(u).isalnum() else "-" for u in units)
    if len(name) <= SLUG_CAP:
        return name
    hashed = 0
    for unit in units:  # JavaScript's (h << 5) - h + c, kept to a signed 32-bit integer
        hashed = (hashed * 31 + unit) & 0xFFFFFFFF
    value = abs(hashed - (1 << 32) if hashed >= 1 << 31 else hashed)
    digits = ""
    while True:
        value, digit = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not value:
            break
    return f"{name[:SLUG_CAP]}-{digits}"


def projects_dir(env: Mapping[str, str]) -> Path:
    """Where the Claude Code started with ``env`` keeps its transcripts."""
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".claude"
    )
    return Path(config) / "projects"


def reach(env: Mapping[str, str], session: str, folder: Path | None = None) -> str | None:
    """Why Claude Code started with ``env`` cannot resume ``session`` (None: it can). With
    ``folder``, the session's latest transcript is made the one ``claude --resume`` finds
    when it starts there."""
    if not SESSION_ID.match(session):
        return f"{session!r} is not a Claude Code session id"
    store, name = projects_dir(env), f"{session}.jsonl"
    try:
        projects = os.open(store, _DIR)
    except OSError:
        return f"no transcript of session {session} under {store}"
    try:
        source = _latest(projects, name)
        if source is None:
            return f"no transcript of session {session} under {store}"
        target = slug(os.path.realpath(folder)) if folder is not None else source
        if source != target:
            _copy(projects, source, target, name)
    except OSError as exc:
        return f"its transcript under {store} could not be read or copied: {exc.strerror or exc}"
    finally:
        os.close(projects)
    return None


def _latest(projects: int, name: str) -> str | None:
    """The folder under ``projects`` whose ``name`` was written last (a resumed session
    grows the copy it resumed from), or None."""
    best, newest = None, -1
    with os.scandir(projects) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            try:
                info = os.stat(f"{entry.name}/{name}", dir_fd=projects, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size and info.st_mtime_ns > newest:
                best, newest = entry.name, info.st_mtime_ns
    return best


def _copy(projects: int, source: str, target: str, name: str) -> None:
    with contextlib.suppress(FileExistsError):
        os.mkdir(target, 0o700, dir_fd=projects)
    into = os.open(target, _DIR, dir_fd=projects)
    temp = f".{name}.{os.getpid()}.tmp"
    try:
        src = os.open(source, _DIR, dir_fd=projects)
        try:
            reader = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=src)
        finally:
            os.close(src)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with (
            open(reader, "rb") as data,
            open(os.open(temp, flags, 0o600, dir_fd=into), "wb") as out,
        ):
            while chunk := data.read(1 << 20):
                out.write(chunk)
        os.replace(temp, name, src_dir_fd=into, dst_dir_fd=into)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=into)
        raise
    finally:
        os.close(into)

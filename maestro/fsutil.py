"""Atomic writes and advisory locks: the only way Maestro changes shared files; and the
check that a file Maestro trusts is the user's own."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from maestro.errors import DiskFull

# A full disk and an exhausted quota: the user's to fix, so a one-line error, not a crash.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def _mount_of(path: Path) -> Path:
    folder = Path(os.path.abspath(path))
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    while not os.path.ismount(folder) and folder != folder.parent:
        folder = folder.parent
    return folder


def _size(count: int) -> str:
    amount = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if amount < 1024 or unit == "GB":
            return f"{amount:.0f} {unit}" if unit == "bytes" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} GB"


def disk_full(
    exc: OSError, path: Path | str | None, *, kept: bool = False, near: Path | None = None
) -> DiskFull:
    """The one-line error for a write that failed on a full disk or quota: which file,
    which disk (its mount point and what is free there), and the fix. ``kept`` says the
    write was atomic, so the file still holds what it had. Without a path (the error
    did not carry one), the disk is the one holding ``near`` (the project)."""
    given = path if path is not None else exc.filename
    target = Path(given) if given is not None else None
    mount = _mount_of(target or near or Path.cwd())
    try:
        free = f", {_size(shutil.disk_usage(mount).free)} free"
    except OSError:
        free = ""
    what = "the disk quota is exceeded" if exc.errno == errno.EDQUOT else "the disk is full"
    outcome = f" {target} kept its previous content." if kept else ""
    return DiskFull(
        f"{f'cannot write {target}' if target else 'a write failed'}: {what} "
        f"(the filesystem mounted at {mount}{free}).{outcome}",
        f"free some space on {mount}{' or raise the quota' if exc.errno == errno.EDQUOT else ''}, "
        "then run the command again.",
    )


IGNORE_ALL = "*\n"


def ignore_in_git(folder: Path) -> None:
    """Keep ``folder`` out of git's view (``git status``, ``git add -A``) with a
    ``.gitignore`` holding ``*`` in it, once the folder exists; the person's own
    ``.gitignore`` files are never touched. Best effort: a folder that cannot be written
    is reported by whatever writes in it."""
    ignore = folder / ".gitignore"
    if folder.is_dir() and not ignore.exists():
        with contextlib.suppress(OSError):
            ignore.write_text(IGNORE_ALL, encoding="utf-8")


def remove_empty_folder(folder: Path) -> bool:
    """Remove ``folder`` if it holds nothing, or only the ``.gitignore`` of
    ``ignore_in_git``; True when it is gone."""
    ignore = folder / ".gitignore"
    try:
        if [p.name for p in folder.iterdir()] == [".gitignore"]:
            if ignore.read_text(encoding="utf-8") != IGNORE_ALL:
                return False
            ignore.unlink()
        folder.rmdir()
    except OSError:
        return False
    return True


def atomic_write(
    path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True
) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new content, never a mix.

    The temp file lives in the same folder (so ``os.replace`` is atomic) and is fsynced
    before the rename. An existing file keeps its permission bits. ``durable=False`` skips
    the fsyncs: for files a crash of the machine may lose, but never half-written.
    A full disk or quota raises ``DiskFull`` naming the file and the disk; the file keeps
    its old content and no temp file is left behind.
    """
    path = Path(path)
    try:
        _write_replace(path, data, mode, durable)
    except OSError as exc:
        if is_disk_full(exc):
            raise disk_full(exc, path, kept=True) from None
        raise


def _write_replace(path: Path, data: bytes | str, mode: int | None, durable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if not durable:
        return
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


@contextlib.contextmanager
def file_lock(lock_path: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold an advisory ``flock`` on ``lock_path`` (created if missing) for the block.

    The lock file is separate from the data file: ``os.replace`` swaps the data file's
    inode, which would silently drop a lock held on it.
    """
    lock_path = Path(lock_path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def make_private(folder: Path) -> None:
    """Make each missing level of ``folder``, readable and writable by this user alone."""
    for level in reversed([folder, *folder.parents]):
        if not level.exists():
            with contextlib.suppress(FileExistsError):
                level.mkdir(mode=0o700)


def private_folder(folder: Path, *, create: bool = False) -> bool:
    """Is ``folder`` this user's own: a folder owned by this user and writable by nobody
    else (not another user's under `sudo` with HOME kept)? With ``create``, made first
    (``make_private``). Never raises: a folder that cannot be made (a read-only home, a
    spoke's sandbox) is not one."""
    try:
        if create:
            make_private(folder)
        info = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def read_private(path: Path) -> bytes | None:
    """The bytes of ``path``, or None unless it is this user's own file, not a link, in a
    ``private_folder``, writable by nobody else."""
    if not private_folder(path.parent):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return None
            return handle.read()
    except OSError:
        return None

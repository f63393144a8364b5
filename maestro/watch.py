"""Folders watched for changes, and the one wait built on them (``wait_until``): the one
way Maestro's waits wake without sleeping in a loop (`maestro wait` on a run's folder
and its doorbell, `mail wait`, the engine reading its workers' reports).

On Linux the watch is inotify's, read by the waiting thread itself: it blocks in
``select`` on the inotify descriptor and the kernel wakes it when a wanted file is
written, with no thread in between (watchdog's observer hands each event through two
threads first: several milliseconds more on a loaded machine, measured by
``bench/mail.py``). Elsewhere watchdog's observer, imported only there, sets an event.
Opening a file or closing it unwritten is not a change: a waiter reading the folder must
not wake itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import struct
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

Wanted = Callable[[Path], bool]  # a changed file's path -> whether it wakes the wait
T = TypeVar("T")

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_MASK = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY | IN_ATTRIB
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, name length


def _inotify() -> Any:
    """The running program's libc with inotify, or None (not Linux)."""
    try:
        # The program's own symbols, libc among them: no library search (find_library
        # would start ldconfig).
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - probe: raises where missing
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _inotify()


def watch(folders: Sequence[Path], wanted: Wanted | None = None) -> Watch:
    """A watch on ``folders`` (not recursive; each made if missing) for files ``wanted``
    accepts (default: any) being written, created or moved in. Armed on return: a change
    after it wakes the next ``wait``."""
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    if _LIBC is not None:
        return _Inotify(folders, wanted)
    return _Observed(folders, wanted)


def wait_until(
    folders: Sequence[Path],
    wanted: Wanted | None,
    check: Callable[[], T | None],
    timeout_s: float | None,
    *,
    recheck_s: Callable[[], float | None] = lambda: None,
    armed: threading.Event | None = None,
) -> T | None:
    """The one wait: ``check()``'s first answer that is not None, asked again when a file
    ``wanted`` in ``folders`` changes and at the latest ``recheck_s()`` seconds later (what
    makes no file event: a lock the kernel released); None once ``timeout_s`` passes. The
    watch is armed (``armed`` set) only when the first answer is None, and ``check`` asked
    once more right after, so nothing before it is missed."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    with contextlib.ExitStack() as armed_watch:
        bell: Watch | None = None
        while True:
            found = check()
            left = None if deadline is None else deadline - time.monotonic()
            if found is not None or (left is not None and left <= 0):
                return found
            if bell is None:
                bell = armed_watch.enter_context(watch(folders, wanted))
                if armed is not None:
                    armed.set()
            else:
                bell.wait(min((s for s in (recheck_s(), left) if s is not None), default=None))


class Watch:
    def wait(self, timeout_s: float | None) -> bool:
        """Block until a wanted file changes (True) or ``timeout_s`` passes (False;
        0 only looks)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Watch:  # noqa: PYI034 - the two watches share it
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Inotify(Watch):
    def __init__(self, folders: Sequence[Path], wanted: Wanted | None) -> None:
        self.wanted = wanted
        self.fd = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.folders: dict[int, Path] = {}
        for folder in folders:
            wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(folder), _MASK)
            if wd < 0:
                errno = ctypes.get_errno()
                os.close(self.fd)
                raise OSError(errno, f"cannot watch {folder}")
            self.folders[wd] = folder

    def wait(self, timeout_s: float | None) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        return bool(ready) and self._drain()

    def _drain(self) -> bool:
        hit = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return hit
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, _, _, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
                offset += _HEADER.size + length
                folder = self.folders.get(wd)
                name = os.fsdecode(raw.rstrip(b"\0"))
                if folder is not None and (self.wanted is None or self.wanted(folder / name)):
                    hit = True

    def close(self) -> None:
        os.close(self.fd)


# watchdog logs an error when its emitter is stopped during a read (our own stop racing
# an event); with logging not set up, Python would print it under a command's answer.
logging.getLogger("watchdog").addHandler(logging.NullHandler())


class _Observed(Watch):
    def __init__(self, folders: Sequence[Path], wanted: Wanted | None) -> None:
        # local: only where inotify is missing (macOS) is watchdog used at all; it takes
        # about 25 ms to import (measured on Linux), on `mail wait`, which hubs call in a loop.
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        self.event = threading.Event()
        wake = self.event

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                for path in (event.src_path, getattr(event, "dest_path", "")):
                    name = path.decode() if isinstance(path, bytes) else str(path)
                    if name and (wanted is None or wanted(Path(name))):
                        wake.set()

        self._observer = Observer()
        for folder in folders:
            self._observer.schedule(Handler(), str(folder), recursive=False)
        self._observer.daemon = True
        self._observer.start()

    def wait(self, timeout_s: float | None) -> bool:
        fired = self.event.wait(timeout_s)
        self.event.clear()
        return fired

    def close(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=2)

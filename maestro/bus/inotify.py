"""A folder watched with Linux inotify from the waiting thread itself.

`mail wait` blocks in ``select`` on the inotify descriptor: the kernel wakes it when a
doorbell file is written, with no thread in between. watchdog's observer hands each event
through two threads first, which on a loaded machine cost several milliseconds of
wake-up latency; it stays the fallback where inotify is missing (``available()``).
"""

from __future__ import annotations

import ctypes
import os
import select
import struct
from collections.abc import Callable

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE_SELF = 0x400
IN_IGNORED = 0x8000  # the watch is gone (its folder deleted or unmounted)
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, name length

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL | None:
    global _libc
    if _libc is None:
        try:
            # The running program's own symbols, libc among them: no library search
            # (ctypes.util.find_library would start ldconfig).
            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - probe: raises where missing
        except (OSError, AttributeError):
            return None
        _libc = libc
    return _libc


def available() -> bool:
    return _lib() is not None


class FolderWatch:
    """Watch ``folder`` (not recursively) for files whose name ``wanted`` accepts being
    written, created or moved in."""

    def __init__(self, folder: str, wanted: Callable[[str], bool]) -> None:
        libc = _lib()
        if libc is None:
            raise OSError("inotify is not available")
        self.wanted = wanted
        self.gone = False  # the folder was deleted: this watch will hear nothing more
        self.fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY | IN_ATTRIB
        if libc.inotify_add_watch(self.fd, os.fsencode(folder), mask) < 0:
            errno = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(errno, f"cannot watch {folder}")

    def wait(self, timeout_s: float | None) -> bool:
        """Block until a wanted file changes (True) or ``timeout_s`` passes (False)."""
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if not ready:
            return False
        return self._drain()

    def drain(self) -> None:
        """Drop the events queued so far (a kept watch, armed again for a new wait)."""
        self._drain()

    def _drain(self) -> bool:
        hit = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return hit
            offset = 0
            while offset + _HEADER.size <= len(data):
                _, mask, _, length = _HEADER.unpack_from(data, offset)
                if mask & (IN_IGNORED | IN_DELETE_SELF):
                    self.gone = True
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
                offset += _HEADER.size + length
                if self.wanted(os.fsdecode(raw.rstrip(b"\0"))):
                    hit = True

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> FolderWatch:  # noqa: PYI034 - a final helper class
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""The private folder of one dispatch's Unix socket, and the sweep of those a killed
engine left behind.

A confined dispatch reaches the office through a socket of its own, its door
(``bus.door``), made by ``listen(kind, name)``: a new folder of mode 0700
(``tempfile.mkdtemp``) with the socket bound in it, listening; ``remove(folder)`` takes
it away when the dispatch ends.

Where: the machine's /tmp, whatever TMPDIR says. Every confined process has a /tmp of its
own (``sandbox.TMP``), where only its own socket is bound, so it sees no other dispatch's;
the user's runtime folder (``/run/user/<uid>``) is in the read-only view of the machine
every sandbox has, and would show it every other dispatch's socket. (A Unix socket's path
also holds at most 107 bytes.)

An engine killed outright (SIGKILL, the machine's OOM killer) removes nothing. So a
folder's name says who made it, ``maestro-<kind>-<pid>-<start>-<namespace>-<random>``
(the maker's pid, its start time in clock ticks after boot, its PID namespace), and each
``listen`` first sweeps this user's folders whose maker is gone: no process with that pid,
or one that started at another time (the pid was recycled). A folder of another PID
namespace (a pid there means nothing here) or of a maker that could not say (no /proc) is
left alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

from maestro.errors import SpokeError
from maestro.pids import pid_namespace, proc_stat

# The machine's /tmp, under which every sandbox has a /tmp of its own (``sandbox.TMP``,
# the same path, checked by tests/test_socketdir.py).
ROOT = Path("/tmp")

KINDS = {"office": "the office's door"}  # bus.door
UNKNOWN = "0-0-0"  # the maker of a folder made where /proc could not say


def owner() -> str:
    """This process as a folder's name records it: ``<pid>-<start>-<namespace>``."""
    me = proc_stat(os.getpid())
    space = (pid_namespace() or "").partition("[")[2].rstrip("]")
    if me is None or me.start is None or not space.isdigit():
        return UNKNOWN
    return f"{os.getpid()}-{me.start}-{space}"


def listen(kind: str, name: str) -> socket.socket:
    """A Unix socket ``name``, listening, in a new private folder of ``kind`` (the
    folder: ``Path(sock.getsockname()).parent``), made after a ``sweep``. SpokeError when
    it cannot be made (nothing is left behind): the dispatch fails in one line."""
    sweep()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"maestro-{kind}-{owner()}-", dir=ROOT))
        try:
            listener.bind(str(folder / name))
            listener.listen()
        except OSError:
            remove(folder)
            raise
    except OSError as exc:
        listener.close()
        raise SpokeError(
            f"{KINDS[kind]} could not listen for a confined process ({exc}).",
            f"Maestro makes its sockets in {ROOT}: free space there, or run unconfined on "
            "purpose: `maestro run --no-sandbox`.",
        ) from None
    return listener


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _gone(pid: int, start: int) -> bool:
    """Has the process that started at ``start`` with ``pid`` ended (a zombie has)?"""
    found = proc_stat(pid)
    return found is None or found.gone or found.start != start


def sweep() -> None:
    """Take away this user's socket folders whose maker has ended without doing so."""
    space = owner().rpartition("-")[2]
    with contextlib.suppress(OSError), os.scandir(ROOT) as entries:
        for entry in entries:
            parts = entry.name.split("-")
            if len(parts) != 6 or parts[0] != "maestro" or parts[1] not in KINDS:
                continue
            pid, start, made_in = parts[2:5]
            if made_in != space or not (pid.isdigit() and start.isdigit()) or pid == "0":
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            if mine and _gone(int(pid), int(start)):
                remove(Path(entry.path))

"""Processes by pid: what ``/proc`` says of one (Linux), whether a process or a process
group still lives, signalling a group, and stopping one gracefully (SIGTERM, then
SIGKILL after a grace period)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcStat:
    """What ``/proc/<pid>/stat`` says of a process (man 5 proc)."""

    name: str
    state: str  # R, S, D, ...; Z zombie and X dead count as gone
    ppid: int
    pgid: int
    start: int | None  # clock ticks after boot (field 22): with the pid, one process for life

    @property
    def gone(self) -> bool:
        return self.state in ("Z", "X")


def has_proc() -> bool:
    return Path("/proc/self").exists()


def proc_stat(pid: int | str) -> ProcStat | None:
    """``/proc/<pid>/stat`` read, or None when it cannot be (no such process, no /proc)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces (and parentheses).
    name, _, rest = text.partition("(")[2].rpartition(")")
    fields = rest.split()
    if (
        len(fields) < 3
        or not fields[1].lstrip("-").isdigit()
        or not fields[2].lstrip("-").isdigit()
    ):
        return None
    start = int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None
    return ProcStat(name, fields[0], int(fields[1]), int(fields[2]), start)


def _proc_bytes(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def proc_cmdline(pid: int) -> list[bytes] | None:
    """Process ``pid``'s argv (``/proc/<pid>/cmdline``), or None when it cannot be read
    (no such process, not ours to read, no /proc). A zombie's is empty."""
    raw = _proc_bytes(f"/proc/{pid}/cmdline")
    return None if raw is None else raw.split(b"\0")


def pid_namespace() -> str | None:
    """This process's PID namespace (``pid:[4026531836]``): pids mean the same thing only
    to readers in the same one."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def boot_id() -> str | None:
    """This boot's id: a start time in clock ticks means the same thing only within it."""
    raw = _proc_bytes("/proc/sys/kernel/random/boot_id")
    return None if raw is None else raw.decode("ascii", "replace").strip()


def pid_alive(pid: int | None) -> bool:
    """True for a live process; a zombie (exited, not yet reaped) counts as dead. Without
    /proc the signal test alone decides."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = proc_stat(pid)
    return stat is None or not stat.gone


def _live_member(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running. Killed members stay zombies
    until their new parent reaps them, which a container's init may do only every second
    or two: they count as gone. Without /proc, any member counts."""
    if not Path("/proc").is_dir():
        return True
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = proc_stat(entry.name)
            if stat is not None and stat.pgid == pgid and not stat.gone:
                return True
    return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _live_member(pgid)


def _pid_depth(pid: int) -> int | None:
    """How many pid namespaces deep process ``pid`` lives (``NSpid`` in its status: one
    pid for each, ours first), or None when it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    line = next((ln for ln in text.splitlines() if ln.startswith("NSpid:")), None)
    return None if line is None else len(line.split()) - 1


def sandboxed(leader: int) -> list[int]:
    """The processes of the sandbox ``leader`` keeps: its children that live in a pid
    namespace below its own (bwrap's init), and all they started. [] when it keeps none
    (a CLI whose own sandbox is a grandchild keeps none), or without /proc."""
    depth = _pid_depth(leader)
    if depth is None:
        return []
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        stat = proc_stat(entry.name) if entry.name.isdigit() else None
        if stat is not None and not stat.gone:
            children.setdefault(stat.ppid, []).append(int(entry.name))
    found = [pid for pid in children.get(leader, ()) if (_pid_depth(pid) or 0) > depth]
    for pid in found:  # grows as it goes: every descendant, in the namespace or below
        found += children.get(pid, ())
    return found


def signal_group(pgid: int, sig: int) -> None:
    """``sig`` to process group ``pgid``. SIGTERM to a group whose leader keeps a sandbox
    goes to the processes in it instead: bwrap would end at once and take its sandbox
    with it by SIGKILL (``--die-with-parent``), so the program inside would never hear
    the SIGTERM it can stop cleanly at. The sandbox's init ignores it (a namespace's
    init hears only the signals it handles) and ends when the program does; SIGKILL
    goes to the group, and the sandbox ends with its keeper."""
    inside = sandboxed(pgid) if sig == signal.SIGTERM else []
    for pid in inside:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    if inside:
        return
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_gracefully(
    send: Callable[[int], None], running: Callable[[], bool], grace_s: float
) -> bool:
    """SIGTERM through ``send``, up to ``grace_s`` for ``running()`` to turn false, then
    SIGKILL if it did not; True when SIGKILL was needed. The one way Maestro stops a
    process or a group: the runner at a deadline, a leftover spoke on resume, a session."""
    send(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while running() and time.monotonic() < deadline:
        time.sleep(0.02)
    if running():
        send(signal.SIGKILL)
        return True
    return False

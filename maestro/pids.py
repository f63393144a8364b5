"""Processes by pid: what ``/proc`` says of one (Linux), whether a process or a process
group still lives, signalling a group, and stopping one gracefully (SIGTERM, then
SIGKILL after a grace period).

A pid here is always one of this process's pid namespace, the numbers its signals use.
/proc may number them otherwise: Maestro started in a pid namespace of its own with the
machine's /proc still mounted, as a command in Codex's sandbox is. There a pid is
translated before /proc is read (``_entry``), and back before it is signalled
(``_ours``); never read as it is, which would name another process."""

from __future__ import annotations

import errno
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
    ppid: int  # (these two as /proc numbers processes: see ``proc_level``)
    pgid: int
    start: int | None  # clock ticks after boot (field 22): with the pid, one process for life

    @property
    def gone(self) -> bool:
        return self.state in ("Z", "X")


def has_proc() -> bool:
    return Path("/proc/self").exists()


def proc_level() -> int:
    """How many pid namespaces this process's lies below the one /proc numbers pids in:
    0 but where /proc is another's (Maestro in a pid namespace of its own with the
    machine's /proc, as a command of Codex's sandbox is)."""
    return len(_status_ids("self", "NSpid") or [0]) - 1


def pidfd_number(handle: int) -> int | None:
    """The number /proc gives the process of pidfd ``handle`` (its fdinfo says); None when
    it has ended. OSError when /proc does not show it."""
    with open(f"/proc/self/fdinfo/{handle}", encoding="ascii") as info:
        found = [int(line.split()[1]) for line in info if line.startswith("Pid:")]
    if found and found[0] == -1:
        return None
    if not found or found[0] <= 0:
        raise OSError(errno.ESRCH, "/proc here does not show that process")
    return found[0]


def _entry(pid: int) -> str | None:
    """Process ``pid`` of this pid namespace as /proc names it; None when it cannot."""
    if pid <= 0 or proc_level() == 0:
        return str(pid)
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        number = pidfd_number(handle)
    except OSError:
        return None
    finally:
        os.close(handle)
    return None if number is None else str(number)


def _ours(entry: str, level: int) -> int | None:
    """The pid in this pid namespace of the process /proc names ``entry``; None when it
    lives in none below it."""
    ids = _status_ids(entry, "NSpid") if level else [int(entry)]
    return ids[level] if ids and len(ids) > level else None


def _status_ids(entry: str, field: str) -> list[int] | None:
    """A field of ``/proc/<entry>/status`` holding ids (``NSpid``: the process's pid in
    each pid namespace from /proc's down to its own), or None when it cannot be read."""
    try:
        text = Path(f"/proc/{entry}/status").read_text()
    except OSError:
        return None
    line = next((ln for ln in text.splitlines() if ln.startswith(field + ":")), None)
    return None if line is None else [int(x) for x in line.split()[1:]]


def proc_stat(pid: int) -> ProcStat | None:
    """``/proc/<pid>/stat`` read, or None when it cannot be (no such process, no /proc)."""
    entry = _entry(pid)
    return None if entry is None else _stat(entry)


def _stat(entry: str) -> ProcStat | None:
    """What /proc says of the process it names ``entry``; its numbers are /proc's."""
    try:
        text = Path(f"/proc/{entry}/stat").read_text()
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


def ancestors(limit: int = 64) -> list[str]:
    """The names of this process's ancestors, its parent's first, as far as its own pid
    namespace holds them; [] without /proc."""
    level, entry, names = proc_level(), "self", []
    for _ in range(limit):
        stat = _stat(entry)
        if stat is None or stat.ppid <= 0:
            break
        entry = str(stat.ppid)
        parent = _stat(entry) if _ours(entry, level) is not None else None
        if parent is None:  # (outside this pid namespace, or gone)
            break
        names.append(parent.name)
    return names


def _proc_bytes(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def proc_cmdline(pid: int) -> list[bytes] | None:
    """Process ``pid``'s argv (``/proc/<pid>/cmdline``), or None when it cannot be read
    (no such process, not ours to read, no /proc). A zombie's is empty."""
    entry = _entry(pid)
    raw = None if entry is None else _proc_bytes(f"/proc/{entry}/cmdline")
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
    level = proc_level()
    leader = _entry(pgid)  # the group's number in /proc, while its leader is there
    if leader is None and _entry(os.getpid()) is None:
        return True  # no pidfd to ask /proc by (Linux before 5.3): as without /proc
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _stat(entry.name)
            if stat is None or stat.gone:
                continue
            if leader is not None:
                if str(stat.pgid) == leader:
                    return True
            elif _member(entry.name, pgid, level):
                return True
    return False


def _member(entry: str, pgid: int, level: int) -> bool:
    """Is the process /proc names ``entry`` in group ``pgid`` of this pid namespace,
    whose leader has gone? Its ``NSpgid`` at this namespace's level says so for a process
    of this namespace or one below it; one of a sibling namespace has numbers of its own
    there, so its pid must lead back to ``entry``."""
    groups = _status_ids(entry, "NSpgid")
    if not groups or len(groups) <= level or groups[level] != pgid:
        return False
    pid = _ours(entry, level)
    return pid is not None and _entry(pid) == entry


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _live_member(pgid)


def _pid_depth(entry: str) -> int | None:
    """How many pid namespaces below /proc's the process /proc names ``entry`` lives, or
    None when it cannot be read."""
    ids = _status_ids(entry, "NSpid")
    return None if ids is None else len(ids) - 1


def sandboxed(leader: int) -> list[int]:
    """The processes of the sandbox ``leader`` keeps: its children that live in a pid
    namespace below its own (bwrap's init), and all they started. [] when it keeps none
    (a CLI whose own sandbox is a grandchild keeps none), or without /proc."""
    keeper = _entry(leader)
    depth = None if keeper is None else _pid_depth(keeper)
    if keeper is None or depth is None:
        return []
    children: dict[int, list[int]] = {}  # in /proc's numbers
    for entry in os.scandir("/proc"):
        stat = _stat(entry.name) if entry.name.isdigit() else None
        if stat is not None and not stat.gone:
            children.setdefault(stat.ppid, []).append(int(entry.name))
    found = [n for n in children.get(int(keeper), ()) if (_pid_depth(str(n)) or 0) > depth]
    for number in found:  # grows as it goes: every descendant, in the namespace or below
        found += children.get(number, ())
    level = proc_level()
    return [pid for pid in (_ours(str(n), level) for n in found) if pid is not None]


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

"""The one process runner every external CLI call goes through.

None of the host CLIs has a wall-clock timeout of its own, ``codex exec`` reads stdin to
EOF (an open pipe hangs it forever) and an agent's shell tool may leave children behind.
So every call here: an argv list (never a shell string), stdin at /dev/null, its own
process group, a deadline enforced by Maestro (SIGTERM to the group, then SIGKILL after
a grace period), stdout and stderr drained by threads so neither pipe can fill up and
block the child, and leftovers of the group cleaned up once the CLI itself has exited.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from maestro.errors import SpokeError

DEFAULT_GRACE_S = 3.0
_CHUNK = 1 << 16


@dataclass
class ProcessOutcome:
    stdout: str
    stderr: str
    exit_code: int | None  # negative: killed by that signal
    timed_out: bool
    duration_s: float
    aborted: bool = False  # on_stdout_line asked to stop (over budget)
    pid: int | None = None
    stopped_on_stderr: bool = False  # on_stderr_line asked to stop (the CLI began retrying)


class ExecutableNotFound(SpokeError):
    """argv[0] is not on PATH. Spoke adapters turn it into an install hint."""

    def __init__(self, executable: str) -> None:
        super().__init__(
            f"executable {executable!r} was not found on PATH.",
            f"install {executable} or add its folder to PATH.",
        )
        self.executable = executable


def _resolve(executable: str, env: dict[str, str]) -> str:
    if os.sep in executable:
        if os.access(executable, os.X_OK):
            return executable
        raise ExecutableNotFound(executable)
    found = shutil.which(executable, path=env.get("PATH", os.defpath))
    if found is None:
        raise ExecutableNotFound(executable)
    return found


# -- processes and groups: the one /proc stat reader, liveness test and group stop -------


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


def proc_environ(pid: int) -> dict[bytes, bytes] | None:
    """Process ``pid``'s environment as it started (``/proc/<pid>/environ``), or None when
    it cannot be read (no such process, another user's, no /proc)."""
    raw = _proc_bytes(f"/proc/{pid}/environ")
    if raw is None:
        return None
    return dict(item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)


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


def signal_group(pgid: int, sig: int) -> None:
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


def _stop_group(proc: subprocess.Popen[bytes], pgid: int, grace_s: float) -> None:
    """SIGTERM the whole group, give it ``grace_s`` to go, then SIGKILL what is left."""
    stop_gracefully(
        lambda sig: signal_group(pgid, sig),
        lambda: proc.poll() is None or group_alive(pgid),
        grace_s,
    )


def _drain_lines(
    pipe: IO[bytes],
    sink: list[bytes],
    on_line: Callable[[str], bool] | None,
    abort: threading.Event,
    wake: threading.Event,
    errors: list[BaseException],
) -> None:
    for raw in iter(pipe.readline, b""):
        sink.append(raw)
        if on_line is None or abort.is_set():
            continue
        try:
            stop = on_line(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except Exception as exc:  # noqa: BLE001 - surfaced after the process is cleaned up
            errors.append(exc)
            on_line = None
            continue
        if stop:
            abort.set()
            wake.set()
    pipe.close()


def _drain(pipe: IO[bytes], sink: list[bytes]) -> None:
    sink.extend(iter(lambda: pipe.read1(_CHUNK), b""))  # type: ignore[attr-defined]  # a BufferedReader
    pipe.close()


def run_process(
    argv: list[str],
    *,
    cwd: Path | str,
    env: dict[str, str] | None = None,
    timeout_s: float,
    on_stdout_line: Callable[[str], bool] | None = None,
    on_start: Callable[[int], None] | None = None,
    grace_s: float = DEFAULT_GRACE_S,
    on_stderr_line: Callable[[str], bool] | None = None,
) -> ProcessOutcome:
    """Run ``argv`` to completion or to its deadline and return what it printed.

    ``on_stdout_line`` sees every stdout line as it arrives; returning True stops the
    process (the outcome says ``aborted``). ``on_stderr_line`` does the same for stderr
    (the outcome says ``stopped_on_stderr``). ``on_start`` gets the pid once it runs.
    """
    env = dict(os.environ if env is None else env)
    cwd = Path(cwd)
    if not cwd.is_dir():
        raise SpokeError(
            f"working directory {cwd} does not exist.",
            "create it or dispatch from the project root.",
        )
    executable = _resolve(argv[0], env)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            [executable, *argv[1:]],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        if exc.errno == errno.E2BIG:
            longest = max(len(arg.encode()) for arg in argv)
            raise SpokeError(
                f"cannot start {argv[0]}: its command line is too long for the system (longest argument, "
                f"usually the prompt: {longest:,} bytes; Linux allows 131,072 per argument, about 2 MB in all).",
                "shorten what the task sends: its clarification, or the downstream context of its dependencies.",
            ) from None
        raise SpokeError(
            f"cannot start {argv[0]}: {exc.strerror or exc}.",
            f"check that {executable} is an executable program.",
        ) from None
    pgid = proc.pid  # start_new_session makes the child its own group leader
    if on_start is not None:
        on_start(proc.pid)

    out: list[bytes] = []
    err: list[bytes] = []
    abort = threading.Event()
    stop_err = threading.Event()
    wake = threading.Event()
    callback_errors: list[BaseException] = []
    assert proc.stdout is not None and proc.stderr is not None
    err_reader = (
        threading.Thread(
            target=_drain_lines,
            args=(proc.stderr, err, on_stderr_line, stop_err, wake, callback_errors),
            daemon=True,
        )
        if on_stderr_line is not None
        else threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True)
    )
    readers = [
        threading.Thread(
            target=_drain_lines,
            args=(proc.stdout, out, on_stdout_line, abort, wake, callback_errors),
            daemon=True,
        ),
        err_reader,
    ]

    def _await_exit() -> None:
        proc.wait()
        wake.set()

    waiter = threading.Thread(target=_await_exit, daemon=True)
    for thread in (*readers, waiter):
        thread.start()

    deadline = started + timeout_s
    timed_out = False
    while proc.poll() is None and not abort.is_set() and not stop_err.is_set():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        wake.wait(remaining)
        wake.clear()
    if proc.poll() is None:
        _stop_group(proc, pgid, grace_s)
    duration = time.monotonic() - started
    if group_alive(pgid):
        # The CLI exited but something it started (an agent's background command) is
        # still in its group, holding the pipes open: it belongs to this dispatch.
        _stop_group(proc, pgid, grace_s)
    for thread in readers:
        thread.join(timeout=grace_s + 2.0)
    if callback_errors:
        raise callback_errors[0]
    return ProcessOutcome(
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr=b"".join(err).decode("utf-8", "replace"),
        exit_code=proc.returncode,
        timed_out=timed_out,
        duration_s=duration,
        aborted=abort.is_set(),
        pid=proc.pid,
        stopped_on_stderr=stop_err.is_set() and not abort.is_set(),
    )


def spawn_detached(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    output: Path,
    pass_fds: tuple[int, ...] = (),
) -> int:
    """Start ``argv`` in its own session, detached from our terminal, its output appended
    to ``output``; return its pid without waiting for it.

    Not :func:`run_process`: that one waits for its child under a deadline, while a
    detached engine must outlive the command that started it. ``pass_fds`` are inherited
    (the run lock handed to the engine); every other descriptor is closed.
    """
    executable = _resolve(argv[0], env)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("ab") as log:
        proc = subprocess.Popen(
            [executable, *argv[1:]],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
    return proc.pid

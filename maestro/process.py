"""The one process runner every external CLI call goes through.

None of the host CLIs has a wall-clock timeout of its own, ``codex exec`` reads stdin to
EOF (an open pipe hangs it forever) and an agent's shell tool may leave children behind.
So every call here: an argv list (never a shell string), stdin at /dev/null, its own
process group, a deadline enforced by Maestro (SIGTERM to the group, then SIGKILL after
a grace period), stdout and stderr drained as they come so neither pipe can fill up and
block the child, and leftovers of the group cleaned up once the CLI itself has exited.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from maestro.errors import SpokeError
from maestro.pids import group_alive, signal_group, stop_gracefully

DEFAULT_GRACE_S = 3.0
# After this long without stdout (the answer channel), ``on_quiet`` is called, and again
# after as long again: a person waiting on a spoke hears that it still works.
QUIET_S = 30.0
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
    raw_stdout: bytes = b""  # stdout as bytes: file contents read through git stay exact


# Signals that end a program, which a sandbox or a shell reports as exit 128 + N (a
# program may exit 145 on its own: Gemini CLI exits with an HTTP status mod 256).
_KILLING = frozenset(
    (signal.SIGHUP, signal.SIGINT, signal.SIGABRT, signal.SIGKILL, signal.SIGSEGV)
    + (signal.SIGBUS, signal.SIGTERM)
)


def ended(exit_code: int | None) -> str:
    """How a process ended, in words: ``exited 1``, ``was killed (SIGKILL)``, and ``exited
    137 (killed: SIGKILL)`` (how a sandbox or a shell reports a program it ran killed)."""
    if exit_code is not None and exit_code < 0:
        try:
            return f"was killed ({signal.Signals(-exit_code).name})"
        except ValueError:
            return f"was killed (signal {-exit_code})"
    if exit_code is not None and exit_code - 128 in _KILLING:
        return f"exited {exit_code} (killed: {signal.Signals(exit_code - 128).name})"
    return f"exited {exit_code}"


class ExecutableNotFound(SpokeError):
    """argv[0] is not on PATH. Spoke adapters turn it into an install hint."""

    def __init__(self, executable: str) -> None:
        super().__init__(
            f"executable {executable!r} was not found on PATH.",
            f"install {executable} or add its folder to PATH.",
        )
        self.executable = executable


def resolve(executable: str, env: dict[str, str]) -> str:
    if os.sep in executable:
        if os.access(executable, os.X_OK):
            return executable
        raise ExecutableNotFound(executable)
    found = shutil.which(executable, path=env.get("PATH", os.defpath))
    if found is None:
        raise ExecutableNotFound(executable)
    return found


# -- processes and groups: the one /proc stat reader, liveness test and group stop -------


class _Pipes:
    """A child's stdout and stderr, read in the calling thread with a selector: no reader
    threads, whose start and GIL hand-offs cost each call a few milliseconds (a dispatch
    runs several git commands). Every byte is kept; a line callback sees each whole line
    (and a last one without its newline) until it asks to stop or raises."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        on_stdout_line: Callable[[str], bool] | None,
        on_stderr_line: Callable[[str], bool] | None,
    ) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.files = (proc.stdout, proc.stderr)
        self.out, self.err = _Stream(on_stdout_line), _Stream(on_stderr_line)
        self.selector = selectors.DefaultSelector()
        self.selector.register(proc.stdout.fileno(), selectors.EVENT_READ, self.out)
        self.selector.register(proc.stderr.fileno(), selectors.EVENT_READ, self.err)
        # Readable once the process has exited (Linux 5.3+): its end wakes the selector like
        # its output does. Without it, an exit with the pipes held open is polled for.
        self.exited = False
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self._pidfd = os.pidfd_open(proc.pid)  # type: ignore[attr-defined,unused-ignore]  # Linux only
            self.selector.register(self._pidfd, selectors.EVENT_READ, None)

    @property
    def open(self) -> bool:
        return any(key.data is not None for key in self.selector.get_map().values())

    @property
    def polls_for_exit(self) -> bool:
        return self._pidfd is None

    @property
    def stopped(self) -> bool:
        return self.out.stopped or self.err.stopped

    def pump(self, timeout_s: float) -> bool:
        """Read what comes within ``timeout_s``; False when nothing did."""
        events = self.selector.select(max(0.0, timeout_s))
        for key, _ in events:
            if key.data is None:  # the pidfd: the process has exited
                self.selector.unregister(key.fd)
                self.exited = True
                continue
            data = os.read(key.fd, _CHUNK)
            if not data:
                self.selector.unregister(key.fd)
                key.data.finish()
            else:
                key.data.feed(data)
        return bool(events)

    def drain(self, deadline: float) -> None:
        """The rest of the output, once the process group is gone (or at the deadline: a
        process outside the group may hold a pipe open for good)."""
        while self.open and time.monotonic() < deadline:
            self.pump(deadline - time.monotonic())

    def close(self) -> None:
        self.selector.close()
        for pipe in self.files:
            pipe.close()
        if self._pidfd is not None:
            os.close(self._pidfd)


class _Stream:
    def __init__(self, on_line: Callable[[str], bool] | None) -> None:
        self.chunks: list[bytes] = []
        self.on_line = on_line
        self.stopped = False
        self.error: BaseException | None = None
        self._partial: list[bytes] = []  # the line so far, in pieces: a long one costs no copies
        self.fed_at: float | None = None  # monotonic time of the last data

    def feed(self, data: bytes) -> None:
        self.chunks.append(data)
        self.fed_at = time.monotonic()
        if self.on_line is None or self.stopped:
            return
        head, newline, rest = data.partition(b"\n")
        if not newline:
            self._partial.append(data)
            return
        *lines, last = rest.split(b"\n")
        self._partial, first = [last] if last else [], b"".join([*self._partial, head])
        for raw in (first, *lines):
            self._line(raw)

    def finish(self) -> None:
        if self._partial and self.on_line is not None and not self.stopped:
            self._line(b"".join(self._partial))
        self._partial = []

    def _line(self, raw: bytes) -> None:
        if self.on_line is None or self.stopped:
            return
        try:
            self.stopped = bool(self.on_line(raw.decode("utf-8", "replace").rstrip("\r")))
        except Exception as exc:  # noqa: BLE001 - surfaced after the process is cleaned up
            self.error, self.on_line = exc, None

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def _stop_group(
    proc: subprocess.Popen[bytes], pgid: int, grace_s: float, pipes: _Pipes | None = None
) -> None:
    """SIGTERM the whole group, give it ``grace_s`` to go (reading its pipes meanwhile, so
    a full one cannot keep it from exiting), then SIGKILL what is left."""

    def running() -> bool:
        if pipes is not None and pipes.open:
            pipes.pump(0.0)
        return proc.poll() is None or group_alive(pgid)

    stop_gracefully(lambda sig: signal_group(pgid, sig), running, grace_s)


# Without a pidfd, a process that exited while its group still holds its pipes is noticed
# within this.
_IDLE_S = 0.25


def _start(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    pass_fds: Sequence[int] = (),
    stdin: int | None = None,
) -> subprocess.Popen[bytes]:
    """``argv`` started in its own session, stdin at /dev/null (or ``stdin``), both pipes
    captured, ``pass_fds`` open in it too; a missing folder, executable or an over-long
    command line is a SpokeError that says so."""
    if not cwd.is_dir():
        raise SpokeError(
            f"working directory {cwd} does not exist.",
            "create it or dispatch from the project root.",
        )
    executable = resolve(argv[0], env)
    try:
        return subprocess.Popen(
            [executable, *argv[1:]],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    except ValueError:  # "embedded null byte": a NUL in an argument or the environment
        raise SpokeError(
            f"cannot start {argv[0]}: its command line or environment holds a NUL character.",
            "remove the NUL from what the task sends (its criteria, clarification or context).",
        ) from None
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
    on_quiet: Callable[[float], None] | None = None,
    quiet_s: float | None = None,
    pass_fds: Sequence[int] = (),
    stdin: int | None = None,
) -> ProcessOutcome:
    """Run ``argv`` to completion or to its deadline and return what it printed.

    ``on_stdout_line`` sees every stdout line as it arrives; returning True stops the
    process (the outcome says ``aborted``). ``on_stderr_line`` does the same for stderr
    (the outcome says ``stopped_on_stderr``). ``on_start`` gets the pid once it runs;
    when it raises, what was started is stopped and the error goes on to the caller.
    ``pass_fds`` stay open in it, ``stdin`` (a descriptor) is its standard input.
    ``on_quiet`` gets the seconds since the start each time stdout has been silent for
    ``quiet_s`` (default ``QUIET_S``), counting from the start, its last output or the
    last call.
    """
    env = dict(os.environ if env is None else env)
    started = time.monotonic()
    proc = _start(argv, Path(cwd), env, pass_fds, stdin)
    pgid = proc.pid  # start_new_session makes the child its own group leader
    pipes = _Pipes(proc, on_stdout_line, on_stderr_line)
    try:
        if on_start is not None:
            try:
                on_start(proc.pid)
            except BaseException:
                _stop_group(proc, pgid, 0.0, pipes)
                proc.wait()
                raise
        every = QUIET_S if quiet_s is None else quiet_s
        quiet = _Quiet(on_quiet, every, started) if on_quiet is not None else None
        timed_out = _follow(proc, pipes, started + timeout_s, quiet)
        if proc.poll() is None:
            _stop_group(proc, pgid, grace_s, pipes)
        duration = time.monotonic() - started
        if group_alive(pgid):
            # The CLI exited but something it started (an agent's background command) is
            # still in its group, holding the pipes open: it belongs to this dispatch.
            _stop_group(proc, pgid, grace_s, pipes)
        pipes.drain(time.monotonic() + grace_s + 2.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s + 2.0)
    finally:
        pipes.close()
    for stream in (pipes.out, pipes.err):
        if stream.error is not None:
            raise stream.error
    return ProcessOutcome(
        stdout=pipes.out.text(),
        stderr=pipes.err.text(),
        raw_stdout=b"".join(pipes.out.chunks),
        exit_code=proc.returncode,
        timed_out=timed_out,
        duration_s=duration,
        aborted=pipes.out.stopped,
        pid=proc.pid,
        stopped_on_stderr=pipes.err.stopped and not pipes.out.stopped,
    )


@dataclass
class _Quiet:
    """When stdout has been silent for ``every`` seconds, ``call`` hears of it."""

    call: Callable[[float], None]
    every: float
    started: float
    told: float | None = None

    def due(self, stdout_at: float | None) -> float:
        return max(self.started, stdout_at or 0.0, self.told or 0.0) + self.every

    def check(self, stdout_at: float | None) -> None:
        now = time.monotonic()
        if now >= self.due(stdout_at):
            self.told = now
            self.call(now - self.started)


def _follow(
    proc: subprocess.Popen[bytes], pipes: _Pipes, deadline: float, quiet: _Quiet | None
) -> bool:
    """Read the pipes until the process has ended and closed them, a line callback asks
    to stop, or the deadline passes (then True). A process that has exited while its
    group still holds the pipes open ends the reading too (the caller stops the group)."""
    while pipes.open and not pipes.stopped and not pipes.exited:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True
        wait = min(remaining, _IDLE_S) if pipes.polls_for_exit else remaining
        if quiet is not None:
            wait = max(0.0, min(wait, quiet.due(pipes.out.fed_at) - time.monotonic()))
        pumped = pipes.pump(wait)
        if quiet is not None:
            quiet.check(pipes.out.fed_at)
        if not pumped and pipes.polls_for_exit and proc.poll() is not None:
            return False
    if pipes.stopped or pipes.exited:
        return False
    try:  # both pipes closed: the exit itself, within the deadline
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return True
    return False


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
    executable = resolve(argv[0], env)
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

"""Is a session's process still there? Asked of things the kernel keeps honest.

Two signals, either one enough:

- an ``flock`` on the session's ``alive.lock``, held by the process that runs the session
  (or by the engine that dispatched it, for the dispatch's whole life). The kernel drops
  it when the last descriptor closes: a process killed by SIGKILL, by its sandbox, or in
  another PID namespace lets go, and nothing stale remains;
- the recorded pid *with its start time*, PID namespace and boot id. A bare pid number
  proves nothing: it may belong to another namespace (a Codex sandbox runs each command
  in its own) or have been recycled. The pid is trusted only when this reader sees the
  same namespace and boot and ``/proc/<pid>/stat`` shows the same start time.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from maestro.pids import boot_id, pid_namespace, proc_stat


@dataclass(frozen=True)
class ProcessMark:
    """What identifies one process for its whole life, as one reader sees it."""

    pid: int
    start: int | None  # clock ticks after boot (/proc/<pid>/stat field 22)
    namespace: str | None
    boot: str | None

    @classmethod
    def of(cls, pid: int) -> ProcessMark:
        stat = proc_stat(pid)
        return cls(
            pid,
            stat.start if stat else None,
            pid_namespace(),
            boot_id(),
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "pid": self.pid,
            "start": self.start,
            "namespace": self.namespace,
            "boot": self.boot,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ProcessMark | None:
        pid = data.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            return None
        start = data.get("start")
        namespace, boot = data.get("namespace"), data.get("boot")
        return cls(
            pid,
            start if isinstance(start, int) else None,
            namespace if isinstance(namespace, str) else None,
            boot if isinstance(boot, str) else None,
        )

    def alive(self) -> bool:
        """True only when this very process still runs (not a zombie, not a recycled pid)."""
        if self.start is None or self.namespace is None or self.boot is None:
            return False  # recorded where /proc could not say: the pid alone proves nothing
        if self.namespace != pid_namespace() or self.boot != boot_id():
            return False
        stat = proc_stat(self.pid)
        return stat is not None and not stat.gone and stat.start == self.start


def lock_held(path: Path) -> bool:
    """Does some process hold the flock on ``path``? Read-only probe: a shared lock taken
    and dropped at once succeeds only when nobody holds the exclusive one."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class Lease:
    """The exclusive flock that says "this session is alive" while it is held.

    ``fd`` may be handed to the session's own process (``subprocess.Popen(pass_fds=...)``)
    so the lock lives exactly as long as that process, whoever started it; ``release``
    closes this process's copy."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        # Blocking: a probe holds its shared lock for microseconds only.
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Lease:  # noqa: PYI034 - a final helper class
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

"""One run on disk: its folder, its event stream, the project's run lock, detaching.

``.ai/maestro/runs/<run-id>/`` holds:

- ``run.json``: what the run is (format version, pid, started, options, final status);
- ``events.jsonl``: one JSON object per line, appended as things happen (the stream
  `maestro wait` follows);
- ``engine.log``: the detached engine's own output (plain progress lines);
- ``wait-cursor.json``: how far `maestro wait` has shown the events;
- ``task-<id>-attempt-<n>.stream.jsonl``: the spoke's stdout, line by line as it prints
  it (its streamed events: what the board shows as the attempt's transcript);
- ``task-<id>-attempt-<n>.prompt.md`` / ``.output.txt``: full prompts and raw outputs, at
  log level ``detailed`` only.

``.ai/maestro/runs/latest`` names the newest run. ``.ai/maestro/run.lock`` is held (flock)
by the one engine working on the project; ``run.holder.json`` beside it names that engine's
run id and pid, replaced whole on each start. Holding it is what "the engine is alive" means everywhere (wait, status, plan, archive, resume).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maestro import clock
from maestro.errors import MaestroError, NotFound
from maestro.fsutil import atomic_write
from maestro.paths import ID_PATTERN, ProjectPaths
from maestro.pids import has_proc, pid_alive, proc_cmdline

FORMAT_VERSION = 1
LATEST = "latest"
RUN_ID = re.compile(ID_PATTERN)


def new_run_id() -> str:
    """Sortable by start time, unique when two runs start in the same second."""
    return f"{clock.folder_stamp()}-{secrets.token_hex(2)}"


def is_engine_of(pid: int, run_id: str) -> bool:
    """Is process ``pid``, as this shell sees it, the engine of ``run_id``? A foreground
    engine is this very program; a detached one carries ``--run-id`` on its command line.
    Without /proc there is no telling, and the pid is trusted; so is a live process whose
    command line is not ours to read."""
    argv = proc_cmdline(pid)
    if argv is None:
        return not has_proc() or pid_alive(pid)
    return b"maestro" in b" ".join(argv) and (run_id.encode() in argv or b"--run-id" not in argv)


class EventLog:
    """Append-only JSON lines. Each event is written with one ``write`` on an O_APPEND
    descriptor, so a reader never sees half an event followed by another one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seq = 0
        if path.exists():
            self._seq = sum(1 for _ in read_events(path)[0])

    def emit(self, kind: str, **data: Any) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            event = {"v": FORMAT_VERSION, "seq": self._seq, "time": clock.iso(), "kind": kind}
            event.update({k: v for k, v in data.items() if v is not None})
            line = (json.dumps(event, ensure_ascii=False, default=str) + "\n").encode("utf-8")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            return event


def recording(runner: Callable[..., Any], path: Path) -> Callable[..., Any]:
    """The process ``runner`` with each stdout line also appended to ``path`` as it comes
    (one ``write`` per line on an O_APPEND descriptor), before the caller's own line
    callback sees it."""

    def run(argv: list[str], **kwargs: Any) -> Any:
        seen = kwargs.get("on_stdout_line")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

        def line(text: str) -> bool:
            os.write(fd, (text + "\n").encode("utf-8", "replace"))
            return bool(seen and seen(text))

        try:
            return runner(argv, **{**kwargs, "on_stdout_line": line})
        finally:
            os.close(fd)

    return run


def read_events(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete events from byte ``offset``; returns them and the offset after the last."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    events = []
    for raw in data[: end + 1].splitlines():
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            continue  # a line damaged by hand; skipping it loses only that line
        if isinstance(event, dict):
            events.append(event)
    return events, offset + end + 1


@dataclass(frozen=True)
class RunDir:
    paths: ProjectPaths
    run_id: str

    def __post_init__(self) -> None:
        # An id, never a path: `wait --run ../../elsewhere` must not write there.
        if not RUN_ID.fullmatch(self.run_id):
            raise MaestroError(
                f"{self.run_id!r} is not a run id.",
                "give one as `maestro run` named it (a folder of .ai/maestro/runs/), "
                "e.g. 20261121T120000Z-1a2b.",
            )

    @property
    def path(self) -> Path:
        return self.paths.runs_dir / self.run_id

    @property
    def events_path(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def meta_path(self) -> Path:
        return self.path / "run.json"

    @property
    def output_path(self) -> Path:
        return self.path / "engine.log"

    @property
    def cursor_path(self) -> Path:
        return self.path / "wait-cursor.json"

    def artifact(self, task_id: str, attempt: int, suffix: str) -> Path:
        return self.path / f"task-{task_id}-attempt-{attempt}.{suffix}"

    def create(self, **meta: Any) -> RunDir:
        self.path.mkdir(parents=True, exist_ok=True)
        self.write_meta(
            format_version=FORMAT_VERSION, run_id=self.run_id, created=clock.iso(), **meta
        )
        atomic_write(self.paths.runs_dir / LATEST, self.run_id + "\n", durable=False)
        return self

    def read_meta(self) -> dict[str, Any]:
        try:
            data = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError:
            raise MaestroError(
                f"{self.meta_path} is not valid JSON.",
                "delete that run folder; it is only a record.",
                file=self.meta_path,
            ) from None
        version = data.get("format_version", FORMAT_VERSION)
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise MaestroError(
                f"run {self.run_id} was written by a newer Maestro (format {version}).",
                "upgrade Maestro to follow it.",
            )
        return dict(data)

    def write_meta(self, **fields: Any) -> None:
        meta = self.read_meta() if self.meta_path.exists() else {}
        meta.update(fields)
        # Not fsynced (nor `latest`): the run lock, not this record, says whether a run
        # lives, and a machine that crashed has no run left to describe.
        atomic_write(
            self.meta_path,
            json.dumps(meta, indent=2, ensure_ascii=False, default=str) + "\n",
            durable=False,
        )

    def events(self) -> EventLog:
        return EventLog(self.events_path)


def latest_run(paths: ProjectPaths) -> RunDir:
    pointer = paths.runs_dir / LATEST
    try:
        run_id = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        run_id = ""
    if not run_id or not (paths.runs_dir / run_id).is_dir():
        raise NotFound(
            "no run has been started in this project.", "start one with `maestro run --detach`."
        )
    return RunDir(paths, run_id)


def find_run(paths: ProjectPaths, run_id: str | None) -> RunDir:
    if run_id is None:
        return latest_run(paths)
    run = RunDir(paths, run_id)
    if not run.path.is_dir():
        known = (
            sorted(p.name for p in paths.runs_dir.iterdir() if p.is_dir())
            if paths.runs_dir.is_dir()
            else []
        )
        hint = (
            f"known runs: {', '.join(known[-5:])}."
            if known
            else "start one with `maestro run --detach`."
        )
        raise NotFound(f"no run {run_id} in this project.", hint)
    return run


class RunLock:
    """The project's one-engine-at-a-time lock (flock on run.lock), and the one test of
    whether an engine is alive.

    The kernel drops an flock when the last descriptor of its holder closes, so the lock
    is held exactly as long as the engine process lives: killed by a signal, by the
    sandbox its command ran in, or on another PID namespace's machine, it lets go. A pid
    number cannot say as much (another namespace's pid, a recycled one), so liveness is
    never read from a pid. A detached engine inherits the lock already taken by the
    command that started it (``LOCK_FD_VAR``), so there is no moment when a run exists
    and nobody holds its lock.
    """

    LOCK_FD_VAR = "MAESTRO_RUN_LOCK_FD"
    # A holder() probe takes the lock for an instant; an engine starting in that instant
    # tries again for this long before calling the project busy.
    PATIENCE_S = 1.0

    def __init__(self, paths: ProjectPaths) -> None:
        self.path = paths.machine_dir / "run.lock"
        # Who holds the lock, in a file of its own replaced whole: a reader sees the old
        # record or the new one, never an empty or half-written one (the lock file itself
        # cannot be replaced without dropping the lock).
        self.record = paths.machine_dir / "run.holder.json"
        self._fd: int | None = None

    def holder(self) -> dict[str, Any] | None:
        """Who holds the lock (run id, pid), or None when nobody does: no engine is alive.
        Read-only: a project where nothing can be written has no engine either."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None  # no lock file: no engine ever ran here
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return _read_holder(self.record)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)

    def alive(self, run_id: str) -> bool:
        """Is an engine working on ``run_id`` right now?"""
        holder = self.holder()
        # No record yet: the project's first engine between its flock and its record.
        return holder is not None and holder.get("run_id", run_id) == run_id

    def acquire(self, run_id: str) -> None:
        fd = self._inherited(run_id)
        if fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _flock_patiently(fd, self.PATIENCE_S):
                os.close(fd)
                raise busy_error(_read_holder(self.record))
        # Lost in a crash, the lock is gone too: no fsync.
        atomic_write(self.record, json.dumps({"run_id": run_id, "pid": os.getpid()}), durable=False)
        self._fd = fd

    def _inherited(self, run_id: str) -> int | None:
        """The descriptor the detaching command passed down for this very run, if any."""
        raw = os.environ.pop(self.LOCK_FD_VAR, "")
        number, _, for_run = raw.partition(":")
        if not number.isdigit() or for_run != run_id:
            return None
        fd = int(number)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(self.path))
        except OSError:
            return None
        if not same or not _flock_patiently(fd, 0):
            return None
        os.set_inheritable(fd, False)  # spokes must not keep the engine's lock alive
        return fd

    def hand_over(self, run_id: str) -> tuple[int, dict[str, str]]:
        """Take the lock for a run a detached engine will do: returns the descriptor to
        pass to it and the environment entry that names it. The caller closes its copy
        once the engine started (closing, not unlocking: the engine holds the same lock)."""
        self.acquire(run_id)
        assert self._fd is not None
        fd, self._fd = self._fd, None
        return fd, {self.LOCK_FD_VAR: f"{fd}:{run_id}"}

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @contextlib.contextmanager
    def held(self, run_id: str) -> Iterator[None]:
        self.acquire(run_id)
        try:
            yield
        finally:
            self.release()


def _flock_patiently(fd: int, patience_s: float) -> bool:
    deadline = time.monotonic() + patience_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def _read_holder(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        data = {}
    return data if isinstance(data, dict) else {}


def busy_error(holder: dict[str, Any] | None) -> MaestroError:
    holder = holder or {}
    who = f"run {holder.get('run_id', '?')} (pid {holder.get('pid', '?')})"
    return MaestroError(
        f"another Maestro run is in progress in this project: {who}.",
        "follow it with `maestro wait`, or stop it with `maestro run --abort`.",
    )

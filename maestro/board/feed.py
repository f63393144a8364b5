"""The board's one follower: it watches the project's state folders (inotify, through
``maestro.watch``, the way `maestro wait` follows a run), reads the run's new events,
and keeps the latest page state as JSON. Each page's event stream waits on it; a page
that is slow or gone never holds anything up, since a stream only ever takes the newest
state (plus notices of what grew since it last looked: a transcript, named, not its
text; the office's mail or sessions).

An event is applied to the state at once (a task's status, CLI, attempt, tokens and
times, as the terminal's live view applies it); the plan, which the state is built from
as `maestro status` builds it, is read again after a change, at most every
``FULL_EVERY_S`` and never more than a tenth of the time (``READ_SHARE``), by a thread of
its own: reading a plan of 200 tasks takes 25-90 ms, a run writes
its plan twice per dispatch, and an event arriving meanwhile must not wait for the read
(``bench/board.py``: p95 from the engine's record to the page, 221 ms with the read in
this thread, 23 ms beside it). Events that arrive during a read are applied again on top of
what it read: the engine writes the plan before it records the event.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from maestro.board import snapshot
from maestro.cli.context import Context
from maestro.engine import keptstreams
from maestro.engine.rundir import LATEST, RunLock, read_events
from maestro.watch import watch

EVENTS_SHOWN = 40  # the latest events the page lists
NOTES_KEPT = 256  # notices a slow page may catch up on
IDLE_S = 1.0  # how often an idle follower checks that the engine still holds its lock
FULL_EVERY_S = 2.0  # the plan is read again at most this often
READ_SHARE = 0.1  # of the wall time, at most, spent reading it (a plan of 1000 tasks: 0.4 s)
ENDS = {"task_done": "done", "task_failed": "failed", "task_blocked": "blocked"}
REVIEW_SESSION = re.compile(r"review-t(\d+(?:\.\d+)*)-[0-9a-f]+")


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")


class Feed:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.paths = ctx.paths
        self.changed = threading.Condition()
        self.version = 0  # of ``state``
        self.state = b"{}"
        self.data: dict[str, Any] = {}
        self.notes: deque[tuple[int, bytes]] = deque(maxlen=NOTES_KEPT)
        self.note_count = 0
        self.events: deque[dict[str, Any]] = deque(maxlen=EVENTS_SHOWN)
        self.run_id: str | None = None
        self.offset = 0
        self.alive: bool | None = None
        self.stopped = False
        self._touched: set[Path] = set()
        self._due: float | None = None  # when the plan is to be read again
        self._read_at = 0.0
        self._read_took = 0.0  # the last read's time
        self._lock = threading.Lock()  # ``data``, and the events a plan read must re-apply
        self._since: list[dict[str, Any]] | None = None  # None: no read under way
        self._reading = threading.Event()  # set: the reader reads the plan again
        self._threads = [
            threading.Thread(target=self._follow, name="board-feed", daemon=True),
            threading.Thread(target=self._reader, name="board-plan", daemon=True),
        ]

    def start(self) -> Feed:
        self._refresh()
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        with self.changed:
            self.stopped = True
            self.changed.notify_all()
        self._reading.set()

    # -- following ----------------------------------------------------------------------

    def _run_folder(self) -> Path | None:
        try:
            run_id = (self.paths.runs_dir / LATEST).read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if run_id != self.run_id:
            with self._lock:
                self.run_id, self.offset = run_id, 0
                self.events.clear()
        folder = self.paths.runs_dir / run_id
        return folder if snapshot.SAFE_ID.fullmatch(run_id) and folder.is_dir() else None

    def _wanted(self, path: Path) -> bool:
        self._touched.add(path)
        return True

    def _folders(self, run: Path | None) -> list[Path]:
        """The folders to watch that exist: the board never makes one in the project (a
        folder that appears later is watched from the next wake on)."""
        machine = self.paths.machine_dir
        wanted = [self.paths.state_dir, self.paths.runs_dir, machine / "mail" / "bell"]
        wanted += [machine / "sessions", *([run] if run else [])]
        wanted += [machine / kind for kind in keptstreams.KINDS]  # reviews', challenges' streams
        return [folder for folder in wanted if folder.is_dir()]

    def _follow(self) -> None:
        while not self.stopped:
            run = self._run_folder()
            folders = self._folders(run)
            with watch(folders, self._wanted) as watching:
                self.refresh()  # what changed before the watch was armed
                while not self.stopped:
                    wait = IDLE_S if self._due is None else self._due - time.monotonic()
                    woke = watching.wait(max(0.0, wait))
                    touched, self._touched = self._touched, set()
                    if any(p.name == LATEST for p in touched) or self._folders(run) != folders:
                        break  # a new run, or a folder made: watch it
                    if woke:
                        self._take(touched, run)
                    if self._due is not None and time.monotonic() >= self._due:
                        self.refresh()
                    elif not woke and (RunLock(self.paths).holder() is not None) != self.alive:
                        self.refresh()  # an engine started or went away without a word

    def _take(self, touched: set[Path], run: Path | None) -> None:
        grown = [p for p in touched if p.name.endswith(keptstreams.SUFFIX)]
        for path in grown:
            name = path.name.removesuffix(keptstreams.SUFFIX)
            # A reviewer's stream (its task named) or a challenger's; else a task attempt's.
            if path.parent.name in keptstreams.KINDS:
                match = REVIEW_SESSION.fullmatch(name)
                where = {path.parent.name: name, "task": match.group(1) if match else None}
            else:
                task, _, attempt = name.removeprefix("task-").partition("-attempt-")
                where = {
                    "run": run.name if run else None,
                    "task": task,
                    "attempt": int(attempt or 0),
                }
            self._note(b"transcript", where)
        mail, sessions = (
            self.paths.machine_dir / "mail" / "bell",
            self.paths.machine_dir / "sessions",
        )
        if any(p.parent == mail for p in touched):
            self._note(b"office", {"mail": True})  # mail sent: a question waits for a reply
        elif any(p.parent == sessions for p in touched):
            self._note(b"office", {"mail": False})  # a session came or went
        if len(grown) < len(touched):
            with self._lock:
                events = self._new_events()
                if self._since is not None:
                    self._since += events
                if self._apply(events):
                    self._publish()
            pause = max(FULL_EVERY_S, self._read_took / READ_SHARE)
            self._due = self._due or max(time.monotonic(), self._read_at + pause)

    def _note(self, kind: bytes, data: dict[str, Any]) -> None:
        with self.changed:
            self.note_count += 1
            self.notes.append((self.note_count, b"event: " + kind + b"\ndata: " + _json(data)))
            self.changed.notify_all()

    def _new_events(self) -> list[dict[str, Any]]:
        if not self.run_id:
            return []
        path = self.paths.runs_dir / self.run_id / "events.jsonl"
        events, self.offset = read_events(path, self.offset)
        self.events.extend(events)
        return events

    def _apply(self, events: list[dict[str, Any]]) -> bool:
        """The events' changes to the tasks of the state, as the live view makes them."""
        plan = self.data.get("plan")
        if not events or not plan:
            return bool(events)
        tasks = {t["id"]: t for t in plan["tasks"]}
        for event in events:
            task = tasks.get(str(event.get("task")))
            kind = event.get("kind")
            if task is None:
                continue
            if kind == "task_started":
                task.update(status="running", tool=event.get("tool"), finished=None)
                task.update(attempts=max(task["attempts"], int(event.get("attempt") or 0)))
                task["started"] = event.get("time")
            elif kind in ENDS or kind == "task_pending":
                task.update(status=ENDS.get(str(kind), "pending"), finished=event.get("time"))
            if kind == "task_done":
                task.update(tokens=event.get("tokens", task["tokens"]), cost=event.get("cost"))
        plan["counts"] = {status: 0 for status in plan["counts"]}
        for task in tasks.values():
            plan["counts"][task["status"]] = plan["counts"].get(task["status"], 0) + 1
        return True

    def _publish(self) -> None:
        self.data["events"] = list(self.events)
        payload = _json(self.data)
        with self.changed:
            if payload != self.state:
                self.version += 1
                self.state = payload
                self.changed.notify_all()

    def refresh(self) -> None:
        """Have the plan read again, now."""
        self._read_at, self._due = time.monotonic(), None
        self._reading.set()

    def _reader(self) -> None:
        while True:
            self._reading.wait()
            self._reading.clear()
            if self.stopped:
                return
            self._refresh()

    def _refresh(self) -> None:
        """Read the plan and the new events, and publish the state when it changed."""
        with self._lock:
            self._since = self._new_events()
        begun = time.monotonic()
        fresh = snapshot.state(self.ctx)
        self._read_took = time.monotonic() - begun
        with self._lock:
            self.data = fresh
            self._apply(self._since or [])
            self._since = None
            self.alive = bool(self.data.get("run") and self.data["run"]["alive"])
            self._publish()

    # -- a page's stream ----------------------------------------------------------------

    def next(
        self, version: int, notes: int, timeout_s: float
    ) -> tuple[int, bytes | None, int, list[bytes]]:
        """Wait up to ``timeout_s`` for a state newer than ``version`` or notes past
        ``notes``; returns the new version and state (None: unchanged), the notes' count
        and the notes."""
        with self.changed:
            self.changed.wait_for(
                lambda: self.stopped or self.version != version or self.note_count != notes,
                timeout_s,
            )
            state = self.state if self.version != version else None
            fresh = [data for n, data in self.notes if n > notes]
            return self.version, state, self.note_count, fresh

"""The run's engine tells the person, away from the board, what of its run waits for them:
each moment of ``needs.waiting`` that arose in this run, once, through the channels the
person turned on (maestro/notify.py). The board need not be open.

The engine's own thread only looks, and only when something may have made a moment: an
event of ``TRIGGERS``, or its workers' doorbell (a question), seen on the scheduler's idle
tick, with the plan the engine holds. A thread of the notifier's own sends, one notice
after the other, so a webhook that takes its 5 s to fail never holds up a dispatch; at the
run's end the engine gives the last notices ``FLUSH_S`` at most. What was handed to that
thread is remembered in the run's folder (``notified.json``) before it is sent, so an
engine started again on the run never sends a moment twice. A channel that fails is one
``notify`` event of the run (the live view and ``engine.log`` print it); a system with no
desktop notifier says so once, and the run goes on.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from typing import Any

from maestro import notify
from maestro.bus.mailwait import Doorbell
from maestro.bus.workers import run_session_id
from maestro.config import Settings
from maestro.engine.needs import Need, waiting
from maestro.engine.rundir import RunDir
from maestro.errors import MaestroError
from maestro.fsutil import atomic_write
from maestro.state.model import Plan

FORMAT_VERSION = 1
TRIGGERS = ("decision", "task_failed", "task_blocked", "task_report", "review", "run_ended")
FLUSH_S = 2 * notify.TIMEOUT_S + 1  # a desktop and a webhook each at their longest


def notice(need: Need, project: str) -> notify.Notice:
    fields = {
        "id": need.id,
        "kind": need.kind,
        "project": project,
        "run": need.run,
        "task": need.task,
        "task_title": need.title,
        "asked": need.asked,
        "since": need.since,
        "command": need.command,
        "mail": need.mail,
    }
    return notify.Notice(
        f"maestro · {project}: {need.headline}", f"{need.asked}\n{need.command}", fields
    )


class Notifier:
    def __init__(
        self, settings: Settings, env: dict[str, str], run: RunDir, emit: Callable[..., Any]
    ) -> None:
        self.settings, self.env, self.run, self.emit = settings, env, run, emit
        self.on = bool(notify.channels(settings))
        self.path = run.path / "notified.json"
        self.sent = self._read() if self.on else set()
        self._due = True
        self._bell = Doorbell(settings.paths, run_session_id(run.run_id))
        self._queue: queue.Queue[Need | None] = queue.Queue()
        self._thread = threading.Thread(target=self._send_all, name="notify", daemon=True)
        self._absent: set[str] = set()  # channels this system lacks, said once
        self._finished = False

    def __enter__(self) -> Notifier:  # noqa: PYI034 - a final class
        if self.on:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish(None)

    def saw(self, event: dict[str, Any]) -> None:
        """An event of the run: a moment may have begun (any thread)."""
        if event.get("kind") in TRIGGERS:
            self._due = True

    def look(self, plan: Callable[[], Plan]) -> None:
        """On the engine's idle tick: hand what newly waits to the sending thread."""
        if not self.on or not (self._bell.due() or self._due):
            return
        self._due = False
        try:
            fresh = [
                need
                for need in waiting(self.settings.paths, plan())
                if need.run == self.run.run_id and need.id not in self.sent
            ]
            if fresh:
                self._write(self.sent | {need.id for need in fresh})
        except (MaestroError, OSError):
            return  # the plan mid-edit, a full disk: the next event looks again
        self.sent.update(need.id for need in fresh)
        for need in fresh:
            self._queue.put(need)

    def finish(self, plan: Callable[[], Plan] | None) -> None:
        """The run's end: a last look (``plan``), then the notices still to send are
        given ``FLUSH_S`` at most. Once."""
        if self._finished:
            return
        self._finished = True
        if self.on:
            if plan is not None:
                self._due = True
                self.look(plan)
            self._queue.put(None)
            self._thread.join(FLUSH_S)
        self._bell.close()

    # -- the sending thread ------------------------------------------------------------

    def _send_all(self) -> None:
        project = self.settings.paths.root.name
        while (need := self._queue.get()) is not None:
            try:
                done = notify.send(notice(need, project), self.settings, self.env, self._absent)
            except Exception as exc:  # noqa: BLE001 - one notice's fault never ends the others
                done = [notify.Sent("notify", False, f"{type(exc).__name__}: {exc}")]
            for sent in done:
                if sent.absent:
                    self._absent.add(sent.channel)
                if not sent.ok:
                    self.emit(
                        "notify",
                        channel=sent.channel,
                        need=need.id,
                        detail=sent.detail
                        + (": no desktop notifications this run" if sent.absent else ""),
                        fix=sent.fix,
                    )

    # -- what was sent -----------------------------------------------------------------

    def _read(self) -> set[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return set()
        sent = data.get("sent") if isinstance(data, dict) else None
        return {str(s) for s in sent} if isinstance(sent, list) else set()

    def _write(self, sent: set[str]) -> None:
        record = {"format_version": FORMAT_VERSION, "sent": sorted(sent)}
        atomic_write(self.path, json.dumps(record) + "\n")

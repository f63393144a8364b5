"""How a run ends: the status and message it ends with (stopped by its token budget,
aborted, incomplete, finished), and the signals that end it: Ctrl-C (SIGINT) stops it
as `maestro run --stop` does (running tasks finish, nothing new starts), SIGTERM aborts
it as `--abort` does; each handler is installed for the run's life and the previous one
put back after."""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

from maestro.engine import caps
from maestro.engine.scheduler import Scheduler, ScheduleReport
from maestro.state.model import Task


class _SchedulerSignal:
    """While the scheduler runs (from the main thread: only it may set handlers), the
    signal ``signum`` goes to ``_handle``; the handler before is put back after."""

    signum: signal.Signals

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.previous: Any = None

    def __enter__(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(self.signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(self.signum, self.previous)


class stop_on_sigint(_SchedulerSignal):
    """Ctrl-C while the run's tasks go on: the first stops launching, as a request the
    scheduler takes at its next turn (a KeyboardInterrupt raised in the middle of a
    launch would leave a task half started, and be taken for the second); the second
    leaves at once (KeyboardInterrupt: the next `maestro run` recovers the tasks)."""

    signum = signal.SIGINT

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.scheduler.interrupt_requested:
            raise KeyboardInterrupt
        self.scheduler.interrupt_requested = True


class abort_on_sigterm(_SchedulerSignal):
    """SIGTERM (`maestro run --abort`) stops launching; running tasks finish."""

    signum = signal.SIGTERM

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.scheduler.request_stop("aborted by `maestro run --abort`")


def run_ending(report: ScheduleReport, ran: list[Task]) -> tuple[str, str]:
    """(status, message) of a run: paused at a budget cap, aborted, incomplete (a task
    failed or is blocked, or tasks still wait), or finished."""
    if report.stopped and caps.pauses(report.stopped):
        return "stopped", report.stopped
    if report.stopped:
        left = len(report.waiting) + sum(o.status == "pending" for o in report.outcomes.values())
        return "aborted", (
            f"{report.stopped}: running tasks finished, {left} task(s) left pending. "
            "Run `maestro run` to continue."
        )
    unsuccessful = [t for t in ran if t.status in ("failed", "blocked")]
    if unsuccessful:
        parts = [
            f"Task {t.id} {t.status}: {(t.result or '').split(' Options:')[0].rstrip('.')}"
            for t in unsuccessful
        ]
        if report.waiting:
            parts.append(f"waiting on them: Task {', '.join(report.waiting)}")
        return "incomplete", "; ".join(parts) + ". See `maestro status` for the options."
    if report.waiting:
        return "incomplete", "; ".join(
            f"Task {jid} waits for Task {', '.join(deps)}" for jid, deps in report.waiting.items()
        )
    return "finished", (
        "every task it ran is done." if ran else "nothing to run: no pending task is ready."
    )

"""Eager DAG scheduling: a job starts the moment its dependencies are done.

Not batch waves: a wave-based runner waits for the slowest task of a wave before starting
anything of the next one; here each completion immediately frees its dependants. Limits:
at most ``max_concurrent`` jobs at once, and never two running jobs that own the same file
(they share one working tree). The stagger between spokes is not kept here but where a
spoke starts (stagger.py), so a job that is ready is launched at once.

Jobs may be added while it runs (``add``): the subtasks a coordinating task's spoke
spawns (``maestro task spawn``). A subtask (``Job.parent``) starts only once its parent
has, may share its parent's files (they lie within them), and its parent, waiting for
it, holds no slot of ``max_concurrent`` meanwhile.

The scheduler knows nothing about spokes or plans: it is given jobs and a ``run_one``
function (blocking, called in a worker thread) that returns an `Outcome`. The engine
injects the dispatch pipeline; the benchmark injects sleeps.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from maestro.engine.ownership import overlapping
from maestro.errors import MaestroError
from maestro.graph import topological_order

# How often the loop wakes with nothing to do, to notice a stop request (Ctrl-C, SIGTERM,
# `maestro run --abort`). Completions wake it at once; this only bounds stop latency.
_IDLE_WAKE_S = 0.25
INTERRUPTED = "interrupted (Ctrl-C)"


@dataclass(frozen=True)
class Job:
    id: str
    depends: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    parent: str | None = None  # the coordinating job that spawned it


@dataclass
class Outcome:
    """What became of one job. ``pending`` means it did not run (refused or stopped)."""

    status: str  # done | failed | blocked | pending
    note: str = ""
    stop_run: str | None = None  # set to stop launching anything else, with the reason


@dataclass
class Timing:
    started: float
    finished: float | None = None


@dataclass
class ScheduleReport:
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    timings: dict[str, Timing] = field(default_factory=dict)
    stopped: str | None = None  # why the run stopped early, if it did
    waiting: dict[str, list[str]] = field(default_factory=dict)  # never ran: blocking deps
    peak_concurrency: int = 0

    @property
    def wall_s(self) -> float:
        if not self.timings:
            return 0.0
        start = min(t.started for t in self.timings.values())
        end = max((t.finished or t.started) for t in self.timings.values())
        return end - start


def _ranks(jobs: dict[str, Job]) -> dict[str, int]:
    """Length of the longest chain of dependants below each job (itself included).

    Launching the job with the longest tail first keeps the critical path moving when
    more jobs are ready than slots are free. Computed from the last job of a topological
    order back to the first, so a chain thousands of jobs deep needs no recursion. A
    cycle (the plan reader refuses those before a run) raises PlanError naming it.
    """

    children: dict[str, list[str]] = {jid: [] for jid in jobs}
    for job in jobs.values():
        for dep in job.depends:
            if dep in children:
                children[dep].append(job.id)
    rank = {jid: 1 for jid in jobs}
    for job in reversed(topological_order(list(jobs.values()))):
        rank[job.id] = 1 + max((rank[c] for c in children[job.id]), default=0)
    return rank


class Scheduler:
    def __init__(
        self,
        jobs: Iterable[Job],
        run_one: Callable[[str], Outcome],
        *,
        max_concurrent: int,
        done: Iterable[str] = (),
        may_launch: Callable[[str], str | None] | None = None,
        on_idle: Callable[[], None] | None = None,
        order: Callable[[str], Any] | None = None,
        on_interrupt: Callable[[int], object] | None = None,
        after_one: Callable[[], object] | None = None,
    ) -> None:
        self.jobs = {job.id: job for job in jobs}
        self.run_one = run_one
        self.max_concurrent = max(1, int(max_concurrent))
        self.done = set(done)
        self.may_launch = may_launch
        self.on_idle = on_idle
        self.on_interrupt = on_interrupt
        # What a job's thread does once its outcome is in (the runner's tidying): its
        # dependents are launched meanwhile; the run waits for it before it ends.
        self.after_one = after_one
        self._threads: list[threading.Thread] = []
        self._order = order or (lambda jid: jid)
        self._rank = _ranks(self.jobs)
        self._parents = {job.parent for job in self.jobs.values() if job.parent}
        self._stop_reason: str | None = None
        self._stop_lock = threading.Lock()
        # One run's state (see run()).
        self._report = ScheduleReport()
        # Not launched yet, the first to launch first (see _next_ready); run() starts it anew.
        self._pending: list[str] = sorted(self.jobs, key=self._priority)
        self._running: dict[str, Job] = {}
        self._finished: queue.Queue[tuple[str, Outcome | BaseException]] = queue.Queue()
        self._crash: BaseException | None = None
        self._added: list[Job] = []
        # Set by a Ctrl-C handler (engine.run): acted on at the loop's next turn, never in
        # the middle of a launch, as the first Ctrl-C (see _collect).
        self.interrupt_requested = False

    def request_stop(self, reason: str) -> None:
        """Launch nothing more; jobs already running finish. Safe from any thread."""
        with self._stop_lock:
            if self._stop_reason is None:
                self._stop_reason = reason

    @property
    def stopping(self) -> str | None:
        # A Ctrl-C not yet taken by the loop already holds back spokes about to start.
        if self._stop_reason is None and self.interrupt_requested:
            return INTERRUPTED
        return self._stop_reason

    def add(self, job: Job) -> None:
        """A job to schedule from now on (a spawned subtask). Safe from any thread; the
        loop takes it at its next turn."""
        with self._stop_lock:
            self._added.append(job)

    def hold(self, jid: str, outcome: Outcome) -> bool:
        """Never launch ``jid``, still waiting (for a slot or its dependencies): it ends
        with ``outcome`` (`maestro task stop`). False when it was launched already. From
        the loop's own thread only (its idle tick), so nothing launches meanwhile."""
        if jid not in self._pending:
            return False
        self._pending.remove(jid)
        self._report.outcomes[jid] = outcome
        return True

    def _take_added(self) -> None:
        with self._stop_lock:
            added, self._added = self._added, []
        fresh = [job for job in added if job.id not in self.jobs]
        if fresh:
            self.jobs.update((job.id, job) for job in fresh)
            self._parents.update(job.parent for job in fresh if job.parent)
            self._pending += [job.id for job in fresh]
            self._rank = _ranks(self.jobs)
            self._pending.sort(key=self._priority)

    def _lineage(self, job: Job) -> set[str]:
        """The job's parent, its parent's parent, ...: coordinators whose files it shares."""
        seen: set[str] = set()
        parent = job.parent
        while parent is not None and parent not in seen:
            seen.add(parent)
            above = self.jobs.get(parent)
            parent = above.parent if above else None
        return seen

    def _holding_slots(self) -> int:
        """Running jobs that count against max_concurrent: a coordinator whose subtasks are
        still to finish is waiting for them, so it yields its slot to them."""
        if self._parents.isdisjoint(self._running):
            return len(self._running)  # (no coordinator runs: no need to look at every job)
        waiting = {
            self.jobs[jid].parent
            for jid in (*self._pending, *self._running)
            if self.jobs[jid].parent
        }
        return sum(1 for jid in self._running if jid not in waiting)

    def run(self) -> ScheduleReport:
        self._report = report = ScheduleReport()
        self._pending = sorted(self.jobs, key=self._priority)
        self._running = {}
        while True:
            self._take_interrupt()
            self._take_added()
            self._launch_ready()
            if not self._running:  # nothing runs, and nothing could start
                break
            self._collect()
        for thread in self._threads:
            thread.join()
        if self._crash is not None:
            raise self._crash
        report.stopped = self._stop_reason
        for jid in sorted(self._pending, key=self._order):
            report.waiting[jid] = [d for d in self.jobs[jid].depends if d not in self.done]
        return report

    def waiting(self) -> int:
        """Jobs not launched yet (ready or not): none means no task will want a worktree
        unless a running one is retried or spawns."""
        return len(self._pending)

    def _launch_ready(self) -> None:
        """Launch ready jobs, the longest tail first, while slots are free."""
        while (
            self._stop_reason is None
            and not self.interrupt_requested
            and self._holding_slots() < self.max_concurrent
        ):
            jid = self._next_ready()
            if jid is None:
                return
            refusal = self.may_launch(jid) if self.may_launch else None
            if refusal:
                self.request_stop(refusal)
                return
            self._pending.remove(jid)
            self._running[jid] = self.jobs[jid]
            self._report.timings[jid] = Timing(started=time.monotonic())
            self._report.peak_concurrency = max(self._report.peak_concurrency, len(self._running))
            # One daemon thread per running job (never more than max_concurrent): a second
            # Ctrl-C can then end the process without waiting for spokes; the next run
            # recovers them.
            thread = threading.Thread(
                target=self._work, args=(jid,), name=f"maestro-task-{jid}", daemon=True
            )
            thread.start()
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _priority(self, jid: str) -> tuple[int, Any]:
        """The longest tail first, then the plan's order."""
        return -self._rank[jid], self._order(jid)

    def _next_ready(self) -> str | None:
        # The first ready job of the pending list, kept in launch order: a launch looks at
        # the jobs before it, not at every pending one (all of them, 2,000 times over, in a
        # run of 2,000 independent tasks).
        return next((jid for jid in self._pending if self._is_ready(self.jobs[jid])), None)

    def _is_ready(self, job: Job) -> bool:
        if not all(dep in self.done for dep in job.depends):
            return False
        parent = job.parent
        if parent in self.jobs and not (parent in self._running or parent in self.done):
            return False  # a subtask runs under its coordinator: not before it has started
        lineage = self._lineage(job)
        busy_files = [
            f for jid, other in self._running.items() if jid not in lineage for f in other.files
        ]
        return not (busy_files and overlapping(job.files, busy_files))

    def _work(self, jid: str) -> None:
        try:
            result: Outcome | BaseException = self.run_one(jid)
        except MaestroError as exc:
            result = Outcome("failed", str(exc))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread once running jobs finish
            result = exc
        self._finished.put((jid, result))
        if self.after_one is not None:
            try:
                self.after_one()
            except BaseException as exc:  # noqa: BLE001 - raised by run() at its end
                self._crash = self._crash or exc

    def _collect(self) -> None:
        """Wait for running jobs to finish (all that finished together), or for the idle
        tick; the first Ctrl-C stops launching, the second leaves at once."""
        try:
            items = [self._finished.get(timeout=_IDLE_WAKE_S)]
        except queue.Empty:
            if self.on_idle:
                self.on_idle()
            return
        except KeyboardInterrupt:
            if self._stop_reason == INTERRUPTED:
                raise  # the second Ctrl-C: leave now, running tasks are recovered later
            self.interrupt_requested = True
            self._take_interrupt()
            return
        while not self._finished.empty():
            items.append(self._finished.get_nowait())
        for jid, result in items:
            self._record(jid, result)

    def _take_interrupt(self) -> None:
        """The first Ctrl-C: launch nothing more, say so once; running jobs finish."""
        if self.interrupt_requested and self._stop_reason != INTERRUPTED:
            self.request_stop(INTERRUPTED)
            if self._stop_reason == INTERRUPTED and self.on_interrupt:
                self.on_interrupt(len(self._running))

    def _record(self, jid: str, result: Outcome | BaseException) -> None:
        self._running.pop(jid, None)
        self._report.timings[jid].finished = time.monotonic()
        if isinstance(result, BaseException):
            self._crash = self._crash or result
            self.request_stop(f"internal error in task {jid}")
            result = Outcome("failed", f"internal error: {result}")
        self._report.outcomes[jid] = result
        if result.status == "done":
            self.done.add(jid)
        if result.stop_run:
            self.request_stop(result.stop_run)

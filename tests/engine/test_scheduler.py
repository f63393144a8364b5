import threading
import time

import pytest

from maestro.engine.scheduler import Job, Outcome, Scheduler


class Recorder:
    """A run_one that sleeps per job and records start/end and concurrency."""

    def __init__(self, durations, outcomes=None):
        self.durations = durations
        self.outcomes = outcomes or {}
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.peak = 0
        self.times: dict[str, tuple[float, float]] = {}
        self.overlaps: list[tuple[str, str]] = []

    def __call__(self, jid):
        start = time.monotonic()
        with self.lock:
            for other in self.running:
                self.overlaps.append((jid, other))
            self.running.add(jid)
            self.peak = max(self.peak, len(self.running))
        time.sleep(self.durations.get(jid, 0.0))
        with self.lock:
            self.running.discard(jid)
            self.times[jid] = (start, time.monotonic())
        return self.outcomes.get(jid, Outcome("done"))


def test_eager_start_does_not_wait_for_the_slowest_of_a_wave():
    # 1 (slow) and 2 (fast) are both ready; 3 depends on 2 only. Waves would start 3
    # after 1 finished; eager scheduling starts it as soon as 2 is done.
    jobs = [Job("1"), Job("2"), Job("3", ("2",))]
    rec = Recorder({"1": 0.4, "2": 0.05, "3": 0.05})
    report = Scheduler(jobs, rec, max_concurrent=3).run()
    assert all(o.status == "done" for o in report.outcomes.values())
    assert rec.times["3"][0] < rec.times["1"][1] - 0.2


def test_dependencies_finish_before_dependants_start():
    jobs = [Job("1"), Job("2", ("1",)), Job("3", ("1",)), Job("4", ("2", "3"))]
    rec = Recorder({j.id: 0.02 for j in jobs})
    Scheduler(jobs, rec, max_concurrent=4).run()
    for job in jobs:
        for dep in job.depends:
            assert rec.times[dep][1] <= rec.times[job.id][0]


@pytest.mark.parametrize("cap", [1, 2, 3])
def test_never_more_than_max_concurrent(cap):
    jobs = [Job(str(i)) for i in range(8)]
    rec = Recorder({j.id: 0.03 for j in jobs})
    report = Scheduler(jobs, rec, max_concurrent=cap).run()
    assert rec.peak == cap == report.peak_concurrency


def test_two_jobs_owning_the_same_file_never_overlap():
    jobs = [
        Job("1", files=("src/a.py",)),
        Job("2", files=("src/",)),
        Job("3", files=("docs/x.md",)),
    ]
    rec = Recorder({"1": 0.1, "2": 0.1, "3": 0.1})
    Scheduler(jobs, rec, max_concurrent=3).run()
    pairs = {frozenset(p) for p in rec.overlaps}
    assert frozenset(("1", "2")) not in pairs
    assert frozenset(("1", "3")) in pairs or frozenset(("2", "3")) in pairs


def test_a_ready_job_is_launched_at_once_up_to_the_cap():
    # The stagger is kept where spokes start (test_stagger.py), not here: a burst of
    # ready jobs fills every slot together.
    jobs = [Job(str(i)) for i in range(5)]
    rec = Recorder({j.id: 0.3 for j in jobs})
    report = Scheduler(jobs, rec, max_concurrent=3).run()
    assert rec.peak == 3 and len(report.outcomes) == 5


def test_failed_job_leaves_dependants_waiting():
    jobs = [Job("1"), Job("2", ("1",)), Job("3")]
    rec = Recorder({}, {"1": Outcome("failed", "boom")})
    report = Scheduler(jobs, rec, max_concurrent=2).run()
    assert report.outcomes["1"].status == "failed"
    assert "2" not in report.outcomes and report.waiting == {"2": ["1"]}
    assert report.outcomes["3"].status == "done"


def test_refusal_stops_launching_and_keeps_the_rest_pending():
    jobs = [Job(str(i)) for i in range(5)]
    launched = []

    def may_launch(jid):
        return "budget reached" if len(launched) >= 2 else launched.append(jid)

    report = Scheduler(jobs, Recorder({}), max_concurrent=1, may_launch=may_launch).run()
    assert report.stopped == "budget reached"
    assert len(report.outcomes) == 2 and len(report.waiting) == 3


def test_stop_run_outcome_stops_launching():
    jobs = [Job("1"), Job("2"), Job("3")]
    rec = Recorder({}, {"1": Outcome("failed", stop_run="abort requested")})
    report = Scheduler(jobs, rec, max_concurrent=1).run()
    assert report.stopped == "abort requested" and set(report.outcomes) == {"1"}


def test_unexpected_exception_is_raised_after_running_jobs_finish():
    jobs = [Job("1"), Job("2")]
    finished = []

    def run_one(jid):
        if jid == "1":
            raise RuntimeError("bug")
        time.sleep(0.1)
        finished.append(jid)
        return Outcome("done")

    with pytest.raises(RuntimeError):
        Scheduler(jobs, run_one, max_concurrent=2).run()
    assert finished == ["2"]


def test_already_done_dependencies_count():
    report = Scheduler([Job("2", ("1",))], Recorder({}), max_concurrent=1, done={"1"}).run()
    assert report.outcomes["2"].status == "done"


def test_first_ctrl_c_stops_launching_second_leaves_at_once(monkeypatch):
    import queue as queue_module

    calls = {"n": 0}
    real_get = queue_module.Queue.get

    def interrupted_get(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] in (1, 2):
            raise KeyboardInterrupt
        return real_get(self, *args, **kwargs)

    monkeypatch.setattr(queue_module.Queue, "get", interrupted_get)
    seen = []
    scheduler = Scheduler(
        [Job("1"), Job("2")], Recorder({"1": 5.0}), max_concurrent=1, on_interrupt=seen.append
    )
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        scheduler.run()
    assert time.monotonic() - started < 2  # did not wait for the 5 s job
    assert seen == [1] and scheduler.stopping == "interrupted (Ctrl-C)"


def test_a_chain_thousands_of_jobs_deep_schedules_in_order():
    # Ranks were computed recursively: a chain past ~1000 jobs crashed the run.
    jobs = [Job(str(i), (str(i - 1),) if i > 1 else ()) for i in range(1, 3001)]
    order = []
    report = Scheduler(
        jobs, lambda jid: order.append(jid) or Outcome("done"), max_concurrent=4
    ).run()
    assert order == [str(i) for i in range(1, 3001)]
    assert all(o.status == "done" for o in report.outcomes.values())


def test_jobs_not_launched_are_counted_before_the_run_starts():
    """The workspaces ask, while the run starts, whether a task will still want a
    worktree: every job counts until it is launched."""
    from maestro.engine.scheduler import Job, Scheduler

    jobs = [Job("1", (), ()), Job("2", ("1",), ())]
    scheduler = Scheduler(jobs, lambda jid: None, max_concurrent=2)
    assert scheduler.waiting() == 2


def test_a_ctrl_c_requested_by_the_handler_is_taken_between_launches():
    """The engine's SIGINT handler only sets ``interrupt_requested``: the scheduler stops
    launching at its next turn, says so once, lets the running job finish and returns
    (no KeyboardInterrupt: that is the second Ctrl-C's)."""
    seen: list[int] = []
    taken = threading.Event()
    scheduler: Scheduler

    def run_one(jid: str) -> Outcome:
        if jid == "1":
            scheduler.interrupt_requested = True  # as the handler does, mid-run
            taken.wait(10)  # running until the scheduler has taken it (a loaded machine)
        return Outcome("done")

    def interrupted(running: int) -> None:
        seen.append(running)
        taken.set()

    scheduler = Scheduler(
        [Job("1"), Job("2", ("1",)), Job("3", ("1",))],
        run_one,
        max_concurrent=1,
        on_interrupt=interrupted,
    )
    report = scheduler.run()
    assert report.outcomes["1"].status == "done" and set(report.waiting) == {"2", "3"}
    assert seen == [1] and report.stopped == "interrupted (Ctrl-C)"


def test_a_ctrl_c_in_the_middle_of_a_launch_is_taken_as_the_first():
    """SIGINT arriving while the scheduler launches (here: while it asks may_launch) used to
    raise there, outside _collect's handling, and end the run as a second Ctrl-C would."""
    import signal

    from maestro.engine.ending import stop_on_sigint

    seen: list[int] = []

    def may_launch(jid: str) -> None:
        if jid == "2":
            signal.raise_signal(signal.SIGINT)

    scheduler = Scheduler(
        [Job("1"), Job("2"), Job("3")],
        Recorder({"1": 0.2, "2": 0.2}),
        max_concurrent=3,
        may_launch=may_launch,
        on_interrupt=seen.append,
        order=lambda jid: jid,
    )
    # The handler before is put back after: Python's own, or SIG_IGN under a shell's `&`.
    before = signal.getsignal(signal.SIGINT)
    with stop_on_sigint(scheduler):
        report = scheduler.run()
    assert report.stopped == "interrupted (Ctrl-C)" and "3" in report.waiting
    assert len(seen) == 1 and signal.getsignal(signal.SIGINT) is before


def test_a_held_job_never_launches_and_its_dependants_wait():
    # One slot: 1 (the longest tail) runs, 2 waits for the slot and 3 for 2. Held on the
    # idle tick, 2 ends with the outcome it was given, 3 never becomes ready, 1's
    # dependants run; a launched job cannot be held.
    jobs = [Job("1"), Job("2"), Job("3", ("2",)), Job("4", ("1",)), Job("5", ("4",))]
    rec = Recorder({"1": 0.6})
    held: list[bool] = []

    def idle() -> None:
        if not held:
            held.append(scheduler.hold("2", Outcome("blocked", "stopped")))
            held.append(scheduler.hold("1", Outcome("blocked", "stopped")))

    scheduler = Scheduler(jobs, rec, max_concurrent=1, on_idle=idle)
    report = scheduler.run()
    assert held == [True, False]
    assert set(rec.times) == {"1", "4", "5"}
    assert report.outcomes["2"] == Outcome("blocked", "stopped")
    assert report.waiting == {"3": ["2"]}

"""The wait a hub follows a run with: it returns only when the hub must act, and keeps a
host's shell tool from stopping it while it is silent."""

from __future__ import annotations

import threading
import time

import pytest

from maestro.engine.rundir import RunDir, RunLock
from maestro.engine.runwait import wait_for
from maestro.paths import ProjectPaths

RUN_ID = "20261129T000000Z-0a0b"


@pytest.fixture
def live_run(tmp_path):
    """A run whose engine is alive (this process holds its lock) and writes nothing."""
    paths = ProjectPaths(tmp_path)
    run = RunDir(paths, RUN_ID).create(state="running")
    run.events().emit("run_started", run_id=RUN_ID, pending=3, max_concurrent=3)
    with RunLock(paths).held(RUN_ID):
        yield run


def at(seconds: float, run: RunDir, kind: str, **fields: object) -> threading.Timer:
    """Emit one event into ``run`` ``seconds`` from now, as its engine would."""
    timer = threading.Timer(seconds, lambda: run.events().emit(kind, **fields))
    timer.start()
    return timer


def test_progress_never_wakes_a_wait_and_a_decision_does_at_once(live_run):
    started = time.monotonic()
    timers = [
        at(0.1, live_run, "task_done", task="1", tool="sim", tokens=10),
        at(0.2, live_run, "task_done", task="2", tool="sim", tokens=10),
        at(0.8, live_run, "task_failed", task="3", reason="validation failed"),
        at(1.5, live_run, "decision", task="3", status="failed", options=[]),
    ]
    result = wait_for(live_run, 20)
    waited = time.monotonic() - started
    for timer in timers:
        timer.join()
    assert result.state == "running" and 1.5 <= waited < 10, (result.state, waited)
    kinds = [e["kind"] for e in result.events]
    assert kinds == ["run_started", "task_done", "task_done", "task_failed", "decision"]


def test_a_wait_with_nothing_to_act_on_lasts_its_timeout(live_run):
    started = time.monotonic()
    timer = at(0.1, live_run, "task_done", task="1", tool="sim", tokens=10)
    result = wait_for(live_run, 1.2)
    timer.join()
    assert result.state == "timeout" and time.monotonic() - started >= 1.2
    assert [e["kind"] for e in result.events] == ["run_started", "task_done"]


def test_a_silent_wait_says_something_each_keepalive_period(live_run):
    said: list[float] = []
    started = time.monotonic()
    result = wait_for(live_run, 1.6, keepalive=(0.5, lambda: said.append(time.monotonic())))
    assert result.state == "timeout"
    gaps = [b - a for a, b in zip([started, *said], said, strict=False)]
    assert len(said) == 3 and all(0.45 <= gap < 1.0 for gap in gaps), gaps


def test_the_runs_end_needs_no_keepalive(live_run):
    said: list[str] = []
    timer = at(0.2, live_run, "run_ended", run_id=RUN_ID, status="finished")
    result = wait_for(live_run, 10, keepalive=(5.0, lambda: said.append("x")))
    timer.join()
    assert result.state == "ended" and said == []

"""`maestro task stop N --reason=TEXT` from a shell, against a real `maestro run` of fake
spokes: a task waiting for the one slot never starts and is blocked with the reason (the
plan, the run's events, the log), a running one has its spoke ended with it; with no
live run, or a task that has ended, one line says there is nothing to stop."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from maestro.config import load_settings
from maestro.engine.requests import ask
from maestro.engine.rundir import RunLock
from maestro.engine.stoptask import STOP
from maestro.errors import MaestroError
from tests.engine.runkit import events, plan, step, task, write_plan


def _until(check, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _refused(result, phrase: str) -> None:
    assert result.code == 1, result.out + result.err
    line = result.err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert phrase in line, line


def _run(project) -> subprocess.Popen:
    """`maestro run` in the background, as a person starts it in another shell."""
    return subprocess.Popen(
        [sys.executable, "-m", "maestro", "run"],
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def one_slot_two_tasks(cli, project, runenv, monkeypatch) -> None:
    """Tasks 1 and 2, independent, and one slot: Task 1's spoke hangs, Task 2 waits."""
    write_plan(
        cli,
        project,
        [
            task(1, tool="claude", agent="coder"),
            task(2, tool="claude", agent="coder", files=["src/other.py"]),
        ],
    )
    runenv.script("claude", [{"hang": True}, step("src/other.py")])
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")


def test_a_task_waiting_for_a_slot_never_starts_and_records_why(cli, project, runenv, monkeypatch):
    one_slot_two_tasks(cli, project, runenv, monkeypatch)
    run = _run(project)
    try:
        _until(lambda: len(runenv.runs("claude")) == 1)
        assert plan(project).task("2").status == "pending"  # waiting for the slot

        queued = cli("task", "stop", "2", "--reason=the spec moved")
        assert queued.code == 0, queued.err
        assert "Task 2 will not start in run" in queued.out
        assert "the spec moved" in queued.out

        running = cli("task", "stop", "1", "--reason=no longer needed")
        assert running.code == 0, running.err
        assert running.out.startswith("stopped Task 1 (")
        assert run.wait(timeout=60) != 0  # incomplete: two tasks blocked
    finally:
        if run.poll() is None:
            run.kill()
    assert len(runenv.runs("claude")) == 1  # Task 2's spoke never started
    second = plan(project).task("2")
    assert second.status == "blocked"
    assert "stopped by user before it started: the spec moved" in (second.result or "")
    assert "no longer needed" in (plan(project).task("1").result or "")
    recorded = events(project)
    assert not [e for e in recorded if e["kind"] == "task_started" and e["task"] == "2"]
    blocked = {e["task"]: e["reason"] for e in recorded if e["kind"] == "task_blocked"}
    assert "the spec moved" in blocked["2"] and "no longer needed" in blocked["1"]
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "| Stop | Task 2 | - | - | ❌ stopped by user before it started: the spec moved |" in log


def test_nothing_to_stop_says_so_in_one_line(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="sim")])
    _refused(cli("task", "stop", "1", "--reason=x"), "no run is live")
    _refused(cli("task", "stop", "9", "--reason=x"), "no Task 9")
    assert cli("run").code == 0
    _refused(cli("task", "stop", "1", "--reason=x"), "Task 1 is done: nothing to stop")


def test_a_stop_past_its_bounds_is_refused_and_the_task_still_waits(
    cli, project, runenv, monkeypatch
):
    """The reason is written into the plan, the session and the log: it is bounded as a
    plan's text is, from the shell and at the run's desk alike, and a refusal there
    leaves the waiting task to start as before."""
    one_slot_two_tasks(cli, project, runenv, monkeypatch)
    _refused(cli("task", "stop", "2", "--reason=" + "x" * 100_000), "over the limit of 1,000")
    run = _run(project)
    try:
        _until(lambda: len(runenv.runs("claude")) == 1)
        paths = load_settings(project).paths
        run_id = str((RunLock(paths).holder() or {})["run_id"])
        for fields, refusal in [
            ({"task": "2", "reason": "x" * 100_000}, "the reason is 100,000 characters"),
            ({"task": "2", "reason": "spec\x00moved"}, "holds a control character"),
            ({"task": "9" * 100_000, "reason": "moved"}, "is not a task id"),
        ]:
            with pytest.raises(MaestroError, match=refusal) as refused:
                ask(paths, "user", run_id, STOP, fields, timeout_s=10)
            assert len(str(refused.value)) < 300
        assert plan(project).task("2").status == "pending"
        assert cli("task", "stop", "2", "--reason=" + "x" * 1_000).code == 0
        assert cli("task", "stop", "1", "--reason=done").code == 0
        assert run.wait(timeout=60) != 0
    finally:
        if run.poll() is None:
            run.kill()
    assert plan(project).task("2").status == "blocked"

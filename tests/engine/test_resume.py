"""Resume after the engine is killed: a real SIGKILL of an engine subprocess."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from maestro.bus.sessions import SessionStore
from maestro.engine.rundir import RunLock
from maestro.paths import ProjectPaths
from maestro.pids import pid_alive
from tests.engine.runkit import events, kinds, plan, step, task, write_plan

REPO = Path(__file__).resolve().parents[2]


def start_engine(project: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "maestro", "run", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for_event(project: Path, predicate, timeout: float = 30.0) -> dict:
    runs = project / ".ai" / "maestro" / "runs"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        latest = runs / "latest"
        if latest.exists():
            path = runs / latest.read_text().strip() / "events.jsonl"
            if path.exists():
                for line in path.read_text().splitlines():
                    event = json.loads(line)
                    if predicate(event):
                        return event
        time.sleep(0.05)
    raise AssertionError("the engine never reported the expected event")


def test_sigkill_then_run_recovers_and_never_reruns_done_tasks(cli, project, runenv, unconfined):
    """Unconfined, a spoke outlives its engine (a confined one ends with it)."""
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])],
    )
    runenv.script("codex", [step(), {"hang": True}, step("src/b.py")])
    engine = start_engine(project, "--log", "summary")
    wait_for_event(project, lambda e: e["kind"] == "task_started" and e["task"] == "2")
    deadline = time.monotonic() + 10
    while len(runenv.runs("codex")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    spoke_pid = runenv.runs("codex")[1]["pid"]
    os.kill(engine.pid, signal.SIGKILL)
    engine.wait(timeout=10)
    killed_run = (project / ".ai" / "maestro" / "runs" / "latest").read_text().strip()

    worktrees = project / ".ai" / "maestro" / "worktrees"
    left = [p.name for p in worktrees.iterdir() if p.is_dir()]  # Task 2's
    assert left and all(
        n.startswith(f"{killed_run}-task-") and n.endswith(f"-p{engine.pid}") for n in left
    )
    before = plan(project)
    assert before.task("1").status == "done" and before.task("2").status == "running"
    assert pid_alive(spoke_pid)  # the spoke outlived its engine (own process group)
    assert RunLock(ProjectPaths(project)).holder() is None  # the kernel released the lock

    res = cli("run", "--log", "summary")
    assert res.code == 0, res.out + res.err
    after = plan(project)
    assert after.task("2").status == "done" and after.task("2").attempts == 2
    assert after.task("1").attempts == 1
    assert len(runenv.runs("codex")) == 3  # task 1 once, task 2 twice
    recovered = next(e for e in events(project) if e["kind"] == "recovered")
    assert recovered["task"] == "2" and recovered["previous_run"] == killed_run
    assert recovered["stopped_spoke"] == spoke_pid
    time.sleep(0.2)
    assert not pid_alive(spoke_pid)
    # It was stopped through its session, which says so.
    sessions, _ = SessionStore(ProjectPaths(project)).all()
    left = [s for s in sessions if s.data["run_id"] == killed_run and "2" in s.task_ids]
    assert [(s.status, s.data["process"]["pid"]) for s in left] == [("stopped", spoke_pid)]
    assert f"run {killed_run} stopped" in left[0].data["reason"]
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "| Recover |" in log and "was cut off" in log
    # The killed run's worktree is gone, from the disk and from git's list.
    assert not [p for p in worktrees.iterdir() if p.is_dir()]
    listed = subprocess.run(
        ["git", "worktree", "list", "--porcelain"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert listed.count("worktree ") == 1
    assert (project / "src" / "b.py").exists() and (project / "src" / "app.py").exists()

    # `maestro wait` on the killed run says it died, once.
    waited = cli("wait", "--run", killed_run, "--timeout", "5")
    assert waited.code == 0 and "died" in waited.out


def test_second_run_in_the_same_project_is_refused(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{**step(), "sleep": 3}])
    engine = start_engine(project)
    try:
        wait_for_event(project, lambda e: e["kind"] == "task_started")
        res = cli("run")
        assert res.code == 1 and res.err.count("\n") == 1
        assert "another Maestro run is in progress in this project" in res.err and "Fix:" in res.err
    finally:
        engine.wait(timeout=30)
    assert plan(project).task("1").status == "done"


def test_run_is_refused_inside_a_spoke(cli, project, runenv, monkeypatch):
    write_plan(cli, project, [task(1)])
    monkeypatch.setenv("MAESTRO_SPOKE", "1")
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1 and "inside a spoke" in res.err
    assert runenv.runs("codex") == [] and plan(project).task("1").status == "pending"


def test_task_left_running_in_the_file_is_recovered(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    path = project / ".ai" / "MAESTRO.md"
    text = path.read_text().replace(
        "- **Status:** pending", "- **Status:** running\n- **Attempts:** 1", 1
    )
    path.write_text(text)
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    t = plan(project).task("1")
    assert t.status == "done" and t.attempts == 2
    assert kinds(project)[:2] == ["recovered", "run_started"]

import json
import os
import subprocess
import sys

import pytest

from maestro.engine.rundir import RunLock
from maestro.paths import ProjectPaths
from maestro.state.store import PlanStore

PLAN = """\
goal: Add user authentication
hub: claude
tasks:
  - {id: 1, title: Add the login endpoint, specialist: code, files: [src/auth.py],
     criteria: ["pytest passes"], validation: pytest}
  - {id: 2, title: Add the session store, specialist: code, files: [src/session.py],
     criteria: ["pytest passes"], validation: pytest}
  - {id: 3, title: Test login, specialist: test, depends: [1, 2], files: [tests/test_auth.py],
     criteria: ["pytest passes"], validation: pytest}
  - {id: 4, title: Review login, specialist: review, depends: [3], criteria: ["findings listed (severity)"]}
"""


@pytest.fixture
def planned(cli, project):
    res = cli("plan", "--from", "-", "--yes", stdin=PLAN)
    assert res.code == 0, res.err
    return PlanStore(ProjectPaths(project))


def set_status(store, **changes):
    with store.edit() as plan:
        for key, (status, result) in changes.items():
            task = plan.task(key.lstrip("t"))
            task.status, task.result = status, result


def commands(body):
    return [a["command"] for a in body["data"]["next"]]


def test_no_plan_is_exit_1_with_the_fix(cli, project):
    res = cli("status")
    assert res.code == 1
    assert res.err.count("\n") == 1
    assert (
        "no plan yet" in res.err
        and "maestro plan --from plan.yaml" in res.err
        and "/maestro:plan" in res.err
    )
    body = json.loads(cli("status", "--json").out)
    assert body["ok"] is False and body["error"]["type"] == "NotFound"


def test_fresh_plan_suggests_challenge_then_run(cli, planned, fake_clis):
    res = cli("status")
    assert res.code == 0
    assert "Goal: Add user authentication" in res.out
    assert "Tasks: 4 (4 pending)" in res.out
    assert "1   pending  Add the login endpoint" in res.out
    body = json.loads(cli("status", "--json").out)
    assert body["data"]["counts"]["pending"] == 4 and body["data"]["ready"] == ["1", "2"]
    assert commands(body) == ["maestro challenge", "maestro run"]
    assert body["data"]["blockers"] == []


def test_next_offers_no_second_opinion_without_a_cli_to_give_it(cli, planned):
    """No vendor's CLI installed: neither a challenge nor a review can run here."""
    assert commands(json.loads(cli("status", "--json").out)) == ["maestro run"]
    with planned.edit() as plan:
        for task in plan.tasks:
            task.status, task.result = "done", "ok"
        plan.tasks[0].review = "changes-requested"
    assert commands(json.loads(cli("status", "--json").out)) == [
        "maestro report",
        "maestro archive",
    ]


def test_failed_task_is_a_blocker_with_waiting_tasks_and_a_retry(cli, planned):
    set_status(
        planned, t1=("done", "login added"), t2=("failed", "Could not determine session storage")
    )
    res = cli("status")
    assert "Blockers:" in res.out
    assert (
        "Task 2 failed: Could not determine session storage Waiting on it: 3, 4."
        in res.out.replace(". Waiting", " Waiting")
    )
    body = json.loads(cli("status", "--json").out)
    assert body["data"]["blockers"] == [
        {
            "task": "2",
            "title": "Add the session store",
            "status": "failed",
            "result": "Could not determine session storage",
            "waiting": ["3", "4"],
        }
    ]
    assert commands(body)[0] == "maestro run 2"
    assert "maestro run" not in commands(body)[1:]  # nothing else is ready


def test_blocked_task_suggests_replanning_from_a_file_or_a_hubs_pipe(cli, planned, monkeypatch):
    set_status(planned, t1=("blocked", "needs a decision on JWT vs cookies"))
    body = json.loads(cli("status", "--json").out)
    assert "maestro plan --from <file>" in commands(body)  # a person's plan is a file
    assert "maestro run" in commands(body)  # task 2 can still go
    monkeypatch.setenv("CLAUDECODE", "1")  # Claude Code's shell tool runs it
    assert "maestro plan --from -" in commands(json.loads(cli("status", "--json").out))


def test_running_with_an_engine_holding_the_lock_suggests_wait(cli, planned):
    with planned.edit() as plan:
        plan.tasks[0].status, plan.tasks[0].pid = "running", 3
    with RunLock(planned.paths).held("R1"):
        body = json.loads(cli("status", "--json").out)
    assert commands(body)[0] == "maestro wait"
    assert "maestro run" not in commands(body)


def test_running_without_the_lock_suggests_resume_even_if_its_pid_lives(cli, planned):
    """The recorded pid is alive (this very process, or pid 3 of another PID namespace
    that names a kernel thread here), but no engine holds the lock: the run is dead."""
    with planned.edit() as plan:
        plan.tasks[0].status, plan.tasks[0].pid = "running", os.getpid()
    body = json.loads(cli("status", "--json").out)
    assert commands(body)[0] == "maestro run"
    assert "no run process is alive" in body["data"]["next"][0]["why"]


def test_review_asking_for_changes(cli, planned, fake_clis):
    with planned.edit() as plan:
        plan.tasks[0].status, plan.tasks[0].review = "done", "changes-requested"
    assert "maestro review 1" in commands(json.loads(cli("status", "--json").out))


def test_all_done_suggests_report_and_archive(cli, planned):
    with planned.edit() as plan:
        for task in plan.tasks:
            task.status, task.result = "done", "ok"
        plan.tasks[0].usage.input, plan.tasks[0].usage.output, plan.tasks[0].cost = 1000, 234, 0.02
    res = cli("status")
    assert "Tasks: 4 (4 done); 1,234 tokens, $0.02" in res.out
    assert "Tokens" in res.out and "1,234" in res.out
    body = json.loads(cli("status", "--json").out)
    assert commands(body) == ["maestro report", "maestro archive"]
    assert body["data"]["tokens"] == 1234


def test_json_envelope_shape(cli, planned):
    body = json.loads(cli("status", "--json").out)
    assert body["maestro_format"] == 1 and body["command"] == "status"
    task = body["data"]["tasks"][2]
    assert task["id"] == "3" and task["depends"] == ["1", "2"] and task["status"] == "pending"
    assert body["data"]["source"]["hub"] == "claude"


def test_status_does_not_import_heavy_modules(cli, planned, project):
    code = (
        "import sys; from maestro.cli import main; rc = main(['status']); "
        "heavy = [m for m in ('jsonschema', 'yaml', 'tiktoken', 'watchdog', 'frontmatter') if m in sys.modules]; "
        "print('HEAVY', heavy); sys.exit(rc)"
    )
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    assert out.returncode == 0, out.stderr
    assert "HEAVY []" in out.stdout


def test_the_last_ready_task_is_named_in_the_singular(cli, planned):
    set_status(planned, t1=("done", "ok"), t2=("done", "ok"), t3=("done", "ok"))
    body = json.loads(cli("status", "--json").out)
    (run,) = [a for a in body["data"]["next"] if a["command"] == "maestro run"]
    assert run["why"] == "dispatch the ready task 4 (the last one)"

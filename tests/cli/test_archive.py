import json
import os

from maestro.engine.rundir import RunLock
from maestro.logfile import ExecutionLog, LogRow
from maestro.paths import ProjectPaths
from maestro.state.store import PlanStore

PLAN = """\
goal: Add user authentication
tasks:
  - {id: 1, title: Add the login endpoint, specialist: code, files: [src/auth.py],
     criteria: ["pytest passes"], validation: pytest}
"""


def make_plan(cli):
    assert cli("plan", "--from", "-", "--yes", stdin=PLAN).code == 0


def make_log(project):
    log = ExecutionLog(ProjectPaths(project), "summary")
    log.start_session("Add user authentication")
    log.append(
        LogRow("12:00:00", "Hub", "Dispatch", "Task 1", 10, 1.0, "✅", "", tool="gemini", task="1")
    )


def test_moves_plan_and_log(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-11-21T12:00:00Z")
    make_plan(cli)
    make_log(project)
    plan_text = (project / ".ai" / "MAESTRO.md").read_bytes()
    log_text = (project / ".ai" / "MAESTRO-LOG.md").read_bytes()
    res = cli("archive")
    assert res.code == 0, res.err
    assert (
        "Archived .ai/MAESTRO.md and .ai/MAESTRO-LOG.md to .ai/archive/20261121T120000Z/" in res.out
    )
    folder = project / ".ai" / "archive" / "20261121T120000Z"
    assert (folder / "MAESTRO.md").read_bytes() == plan_text
    assert (folder / "MAESTRO-LOG.md").read_bytes() == log_text
    assert (
        not (project / ".ai" / "MAESTRO.md").exists()
        and not (project / ".ai" / "MAESTRO-LOG.md").exists()
    )
    status = cli("status")
    assert status.code == 1 and "no plan yet" in status.err


def test_only_the_plan(cli, project):
    make_plan(cli)
    body = json.loads(cli("archive", "--json").out)
    assert body["ok"] and body["data"]["moved"] == [".ai/MAESTRO.md"]
    assert (project / body["data"]["folder"] / "MAESTRO.md").is_file()


def test_only_the_log(cli, project):
    make_log(project)
    res = cli("archive")
    assert res.code == 0 and "Archived .ai/MAESTRO-LOG.md" in res.out


def test_same_second_never_overwrites(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-11-21T12:00:00Z")
    make_plan(cli)
    assert cli("archive").code == 0
    first = (project / ".ai/archive/20261121T120000Z/MAESTRO.md").read_bytes()
    make_plan(cli)
    (project / ".ai/MAESTRO.md").write_bytes(
        (project / ".ai/MAESTRO.md").read_bytes() + b"\nsecond\n"
    )
    res = cli("archive")
    assert res.code == 0 and "20261121T120000Z-2/" in res.out
    assert (project / ".ai/archive/20261121T120000Z/MAESTRO.md").read_bytes() == first
    assert (
        (project / ".ai/archive/20261121T120000Z-2/MAESTRO.md").read_bytes().endswith(b"second\n")
    )


def test_nothing_to_archive(cli, project):
    res = cli("archive")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "nothing to archive" in res.err and "Fix:" in res.err
    assert not (project / ".ai" / "archive").exists()


def test_dry_run_moves_nothing(cli, project):
    make_plan(cli)
    res = cli("archive", "--dry-run")
    assert res.code == 0 and "would move .ai/MAESTRO.md" in res.out
    assert (project / ".ai" / "MAESTRO.md").exists() and not (project / ".ai" / "archive").exists()


def test_refuses_while_a_run_is_going(cli, project):
    make_plan(cli)
    with PlanStore(ProjectPaths(project)).edit() as plan:
        plan.tasks[0].status, plan.tasks[0].pid = "running", os.getpid()
    assert cli("archive", "--dry-run").code == 0  # a live pid alone is no engine
    with RunLock(ProjectPaths(project)).held("R1"):
        res = cli("archive")
    assert res.code == 1 and "run R1" in res.err and "maestro wait" in res.err
    assert (project / ".ai" / "MAESTRO.md").exists()


def test_refuses_while_a_run_holds_the_lock_between_dispatches(cli, project):
    from maestro.engine.rundir import RunLock

    make_plan(cli)
    before = (project / ".ai" / "MAESTRO.md").read_bytes()
    lock = RunLock(ProjectPaths(project))
    lock.acquire("R-live")
    try:
        res = cli("archive")
    finally:
        lock.release()
    assert res.code == 1 and res.err.count("\n") == 1, res.err
    assert (
        "run R-live" in res.err
        and "`maestro wait`" in res.err
        and "`maestro run --abort`" in res.err
    )
    assert (project / ".ai" / "MAESTRO.md").read_bytes() == before and not (
        project / ".ai" / "archive"
    ).exists()
    assert cli("archive").code == 0  # once the run has let go


def test_broken_plan_can_still_be_archived(cli, project):
    (project / ".ai").mkdir()
    (project / ".ai" / "MAESTRO.md").write_text(
        "### Task 1: nothing parses here\n- **Status:** weird\n"
    )
    res = cli("archive")
    assert res.code == 0, res.err
    assert not (project / ".ai" / "MAESTRO.md").exists()

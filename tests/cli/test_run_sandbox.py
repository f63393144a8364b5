"""No silent fallback: where bwrap cannot start, `maestro run` refuses in one line that
names the fix, unless the person opts out; an unconfined run says so in every dispatch,
`maestro status` tells how the last run ran, and `maestro doctor` checks it."""

from __future__ import annotations

import json

import pytest

from maestro import sandbox
from tests.engine.runkit import events, plan, step, task, write_plan


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox, "BWRAP", "bwrap-not-installed")


def test_a_run_refuses_where_bwrap_cannot_start(cli, project, runenv, no_bwrap):
    write_plan(cli, project, [task(1)])
    for argv in (["run"], ["run", "--detach"]):
        res = cli(*argv)
        assert res.code == 1 and res.err.count("\n") == 1, res.out + res.err
        assert "bubblewrap (bwrap) is not installed" in res.err and "--no-sandbox" in res.err
    assert runenv.runs("codex") == [] and plan(project).task("1").status == "pending"
    doctor = json.loads(cli("doctor", "--json").out)["data"]["checks"]
    (check,) = [c for c in doctor if c["name"] == "sandbox"]
    assert check["level"] == "fail" and "refuses" in check["detail"]


@pytest.mark.parametrize("opt_out", ["flag", "setting"])
def test_opted_out_every_dispatch_says_it_ran_unconfined(
    cli, project, runenv, no_bwrap, monkeypatch, opt_out
):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    if opt_out == "setting":
        monkeypatch.setenv("MAESTRO_SANDBOX", "0")
    res = cli("run", "--log", "summary", *(["--no-sandbox"] if opt_out == "flag" else []))
    assert res.code == 0, res.out + res.err
    assert "unconfined, with your full rights" in res.out and "[unconfined]" in res.out
    assert not runenv.runs("codex")[0]["sandboxed"]
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "ran unconfined: sandbox off" in log
    started = next(e for e in events(project) if e["kind"] == "task_started")
    assert started["unconfined"] is True
    status = json.loads(cli("status", "--json").out)["data"]["run"]
    assert "unconfined" in status["sandbox"]
    assert "unconfined" in cli("status").out


def test_a_confined_run_says_so(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 0 and "spokes and checks confined (bubblewrap)" in res.out
    assert "[unconfined]" not in res.out
    assert json.loads(cli("status", "--json").out)["data"]["run"]["sandbox"] == (
        "spokes and checks confined (bubblewrap)"
    )
    doctor = json.loads(cli("doctor", "--json").out)["data"]["checks"]
    (check,) = [c for c in doctor if c["name"] == "sandbox"]
    assert check["level"] == "ok"
    assert "/tmp and /dev/shm at most 2048 MB each, " in check["detail"]
    assert "processes" in check["detail"]  # how they are bounded here, or that they are not


def test_a_dry_run_shows_the_argv_a_confined_run_gives(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    (row,) = json.loads(cli("run", "--dry-run", "--json").out)["data"]["tasks"]
    assert "--dangerously-bypass-approvals-and-sandbox" in row["argv"]
    (row,) = json.loads(cli("run", "--dry-run", "--no-sandbox", "--json").out)["data"]["tasks"]
    assert row["argv"][row["argv"].index("--sandbox") + 1] == "workspace-write"

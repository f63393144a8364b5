"""A run's confined processes and the network (maestro/netproxy.py), with the real bwrap and
the fake CLIs: what the proxy refused a spoke is named in its task's result and log row, a
validation command reaches only the sandbox_hosts setting's, and a proxy that cannot
listen fails the attempt in one line."""

from __future__ import annotations

import errno
import shlex
import socket
import sys
from collections.abc import Iterator

import pytest

from maestro import netns, socketdir
from maestro.logfile import ExecutionLog
from maestro.paths import ProjectPaths
from tests.engine.runkit import plan, step, task, write_plan
from tests.netkit import serving

REFUSED = "network: refused example.com:80 (not on the list; add it to MAESTRO_SANDBOX_HOSTS)"


def fetch(url: str) -> str:
    """A shell command that GETs ``url`` (through the proxy the environment names)."""
    code = f"import urllib.request as u; print(u.urlopen({url!r}, timeout=10).read().decode())"
    return f"{sys.executable} -c {shlex.quote(code)}"


@pytest.fixture
def registry() -> Iterator[int]:
    with serving() as port:
        yield port


def test_a_refused_host_is_named_in_the_tasks_result_and_log(cli, project, runenv):
    write_plan(cli, project, [task(1), task(2, files=["src/other.py"], depends=[1])])
    runenv.script(
        "codex",
        [
            step(shell=[{"sh": fetch("http://example.com/")}]),
            *[step(shell=[{"sh": fetch("http://example.com/")}], http=401)] * 3,
        ],
    )
    res = cli("run")
    assert res.code == 2, res.out + res.err
    landed, failed = plan(project).task("1"), plan(project).task("2")
    assert landed.status == "done", landed.result
    assert failed.status in ("failed", "blocked")
    assert REFUSED in failed.result, failed.result
    rows = ExecutionLog(ProjectPaths(project), "summary").read().sessions[-1].rows
    dispatched = [r for r in rows if r.tool == "codex"]
    assert dispatched and all(REFUSED in r.notes for r in dispatched), [r.notes for r in rows]
    assert all(r.notes.count("network: refused") == 1 for r in dispatched)


def test_a_validation_command_reaches_only_the_listed_hosts(
    cli, project, runenv, registry, monkeypatch
):
    check = fetch(f"http://127.0.0.1:{registry}/simple/")
    write_plan(cli, project, [task(1, validation=check)])
    runenv.script("codex", [step()] * 3)
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert f"network: refused 127.0.0.1:{registry}" in t.result, t.result

    monkeypatch.setenv("MAESTRO_SANDBOX_HOSTS", f"127.0.0.1:{registry}")
    runenv.script("codex", [step()])
    res = cli("run", "1")
    assert res.code == 0, res.out + res.err
    assert plan(project).task("1").status == "done"


def test_an_office_door_that_cannot_listen_fails_the_attempt_in_one_line(
    cli, project, runenv, monkeypatch, tmp_path
):
    """A confined dispatch's way to the office that cannot be made fails the attempt
    with one line saying so, before any spoke runs."""
    write_plan(cli, project, [task(1)])
    runenv.default("codex", step())
    monkeypatch.setattr(socketdir, "ROOT", tmp_path / "gone")
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 1, t.result
    assert "the office's door could not listen for a confined process" in t.result
    assert "Fix: Maestro makes its sockets in" in t.result
    assert "\n" not in t.result.strip()
    assert runenv.runs("codex") == []  # no spoke started without its way to the office
    assert not (project / "src").exists()


def refused(net: int) -> socket.socket:
    raise PermissionError(errno.EPERM, "Operation not permitted (setns user)")


def test_a_way_out_that_cannot_be_opened_fails_the_attempt_in_one_line(
    cli, project, runenv, monkeypatch
):
    """Its way out refused in the sandbox's namespace after the run's probe opened one:
    the attempt fails in one line, its spoke never runs."""
    write_plan(cli, project, [task(1)])
    runenv.default("codex", step())
    opened = netns._listen_in
    calls = []

    def once(net: int) -> socket.socket:
        calls.append(net)
        return opened(net) if len(calls) == 1 else refused(net)

    monkeypatch.setattr(netns, "_listen_in", once)
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 1, t.result
    assert "could not open the confined process's way out in its network namespace" in t.result
    assert "Operation not permitted (setns user)" in t.result and "maestro doctor" in t.result
    assert "\n" not in t.result.strip()
    assert runenv.runs("codex") == []
    assert not (project / "src").exists()


def test_where_no_way_out_opens_the_run_is_refused_and_doctor_says_why(
    cli, project, runenv, monkeypatch
):
    write_plan(cli, project, [task(1)])
    runenv.default("codex", step())
    monkeypatch.setattr(netns, "_listen_in", refused)
    res = cli("run")
    assert res.code == 1, res.out + res.err
    assert "cannot open a way out in bwrap's network namespace here" in res.err
    assert "--no-sandbox" in res.err and len(res.err.strip().splitlines()) == 1, res.err
    assert runenv.runs("codex") == []
    doctor = cli("doctor")
    assert "cannot open a way out in bwrap's network namespace" in doctor.out + doctor.err

"""Every id Maestro turns into a path is an id, never a path: a run id, a session id, a
mail id, a task id that names a folder outside the project is refused in one line."""

from __future__ import annotations

import pytest

PLAN = """\
goal: test
tasks:
  - {id: 1, title: First, tool: sim, specialist: code, files: [src/a.py], criteria: [a],
     validation: "test -f src/a.py"}
"""
BAD = ["../../../../elsewhere/run", "../x", "/tmp/x", ".hidden", "a/b", ""]


@pytest.fixture
def elsewhere(project):
    folder = project.parent / "elsewhere" / "run"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("run_id", BAD)
def test_wait_run_takes_an_id_not_a_path_finding_6(project, cli, elsewhere, run_id):
    res = cli("wait", "--run", run_id, "--timeout", "1")
    assert res.code == 1 and res.err.count("\n") == 1 and "not a run id" in res.err, res.err
    assert list(elsewhere.iterdir()) == []


def test_run_id_of_the_engine_is_an_id_finding_6(project, cli, elsewhere):
    (project / "plan.yaml").write_text(PLAN)
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    res = cli("run", "--run-id", "../../elsewhere/run")
    assert res.code == 1 and "not a run id" in res.err, res.out + res.err
    assert list(elsewhere.iterdir()) == []


def test_a_latest_pointer_that_names_a_path_is_refused_finding_6(project, cli, elsewhere):
    runs = project / ".ai" / "maestro" / "runs"
    runs.mkdir(parents=True)
    (runs / "latest").write_text("../../../../elsewhere/run\n")
    res = cli("wait", "--timeout", "1")
    assert res.code == 1 and list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(
    "argv,words",
    [
        (("session", "show", "../x"), "not a session id"),
        (("mail", "send", "--to", "../x", "--message", "hi"), "not a session id"),
        (("mail", "show", "../m1"), "not a mail id"),
        (("prompt", "../1"), "no Task ../1"),
    ],
)
def test_session_mail_and_task_ids_are_ids_finding_6(project, cli, argv, words):
    (project / "plan.yaml").write_text(PLAN)
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    res = cli(*argv)
    assert res.code == 1 and words in res.err, res.err


def test_a_session_id_from_the_environment_is_an_id_finding_6(project, cli, monkeypatch):
    monkeypatch.setenv("MAESTRO_SESSION_ID", "../../x")
    res = cli("mail", "inbox")
    assert res.code == 1 and "not a session id" in res.err, res.err

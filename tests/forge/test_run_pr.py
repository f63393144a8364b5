"""`maestro run --pr`, `maestro pr watch` and `maestro pr sync` end to end: the fake CLIs as
spokes (confined as usual), the real gh and git against the loopback FakeHub, whose
bare repository is the project's ``origin``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.engine.runkit import prompt_of, step, task, write_plan
from tests.forge.fakehub import Job, Step
from tests.test_git import git

pytestmark = pytest.mark.gh

BRANCH = "maestro/add-a-greeting-module"
PYTEST_LOG = (
    "collected 2 items\n"
    "src/b.py:3: in b\n"
    "E   AssertionError: the value of b is 1, expected 2\n"
    "FAILED tests/test_b.py::test_b - AssertionError\n"
    "Error: Process completed with exit code 1."
)


def failing() -> Job:
    return Job(
        "tests",
        conclusion="failure",
        steps=[
            Step("Set up job", "success", "Preparing the runner"),
            Step("Run pytest", "failure", PYTEST_LOG),
        ],
    )


def passing() -> Job:
    return Job("tests", steps=[Step("Run pytest", "success", "2 passed")])


@pytest.fixture
def origin(hub, project, fake_clis, monkeypatch):
    """The project: one commit on main, pushed to the fake's repository; the checks of
    each later push taken in turn from ``hub.rounds`` (the last one repeats)."""
    (project / "README.md").write_text("project\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    git(project, "remote", "add", "origin", hub.url)
    subprocess.run(
        ["git", "-C", str(project), "push", "-q", "origin", "main"], check=True, env=os.environ
    )
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    monkeypatch.setenv("MAESTRO_RETRY_BACKOFF", "0")
    monkeypatch.setenv("MAESTRO_PR_POLL", "1")
    hub.rounds = []
    started = hub.pushed

    def pushed() -> None:
        if hub.rounds:
            hub.ci = hub.rounds.pop(0) if len(hub.rounds) > 1 else hub.rounds[0]
        started()

    hub.pushed = pushed
    return fake_clis


def two_tasks(cli, project: Path) -> None:
    write_plan(
        cli,
        project,
        [
            task(1, files=["src/a.py"], validation="test -f src/a.py"),
            task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1]),
        ],
    )


def record(project: Path) -> dict:
    return json.loads((project / ".ai" / "maestro" / "pr.json").read_text())


def test_a_run_opens_its_request_and_a_failing_check_comes_back_as_a_revision(
    cli, project, origin, hub
):
    two_tasks(cli, project)
    hub.rounds = [[failing()], [passing()]]
    origin.script(
        "codex", [step("src/a.py"), step("src/b.py"), step("src/b.py", content="b = 2\n")]
    )
    res = cli("run", "--pr")
    assert res.code == 0, res.out + res.err
    [pull] = hub.pulls.values()
    assert (pull.head, pull.base, pull.title) == (BRANCH, "main", "Add a greeting module")
    assert "| 2. Write module number 2 | done | codex |" in pull.body
    assert "1. tests failed; sent to Task 2." in pull.body
    # The branch on the remote: a commit per task, then the revision; main untouched.
    log = subprocess.run(
        [
            "git",
            "-C",
            str(hub.bare),
            "log",
            "--format=%s|%(trailers:key=Maestro-Task,valueonly,separator=)",
            f"main..{BRANCH}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert log == [
        "Write module number 2|2",
        "Write module number 2|2",
        "Write module number 1|1",
    ]
    assert hub.head_sha("main") == git(project, "rev-parse", "main").strip()
    assert git(project, "log", "--format=%s", "main") == "init\n"
    assert not (project / "src").exists()
    # The revision's prompt: the failing step's lines, marked untrusted.
    revision = prompt_of(origin.runs("codex")[2])
    assert "Failing step: tests / Run pytest" in revision
    assert "E   AssertionError: the value of b is 1, expected 2" in revision
    assert "Preparing the runner" not in revision and "untrusted" in revision
    assert "pull request #1 opened" in res.out and "every check passed" in res.out
    print(
        f"--- the body GitHub received ---\n{pull.body}\n--- the revision's prompt ---\n{revision}"
    )
    shown = cli("status")
    assert "Pull request: #1" in shown.out and "checks: 1 of 1 passed" in shown.out
    report = cli("report").out
    assert "## Pull request" in report and "CI round 1" in report and "| tests | pass |" in report


def test_two_failing_rounds_wait_for_the_person_and_a_rerun_updates_the_request(
    cli, project, origin, hub
):
    two_tasks(cli, project)
    hub.rounds = [[failing()]]
    origin.script(
        "codex",
        [step("src/a.py"), step("src/b.py")]
        + [step("src/b.py", content=f"b = {n}\n") for n in (2, 3)],
    )
    res = cli("run", "--pr")
    assert res.code == 3, res.out + res.err
    assert len(origin.runs("codex")) == 4
    assert "tests still failing on pull request #1 after 2 round(s)" in res.out
    assert "tests still failing" in record(project)["decision"]["asked"]
    hub.rounds = [[passing()]]
    again = cli("pr", "watch")
    assert again.code == 3, again.out + again.err  # still waits for the person
    assert "tests still failing" in again.out  # the rounds are spent: still the person's
    res = cli("run", "--pr")
    assert res.code == 3  # its checks still wait for the person
    assert len(hub.pulls) == 1 and "pull request #1 updated" in res.out


def test_a_review_comment_reaches_the_task_that_owns_its_file(cli, project, origin, hub):
    two_tasks(cli, project)
    hub.rounds = [[passing()]]
    origin.script(
        "codex", [step("src/a.py"), step("src/b.py"), step("src/b.py", content="b = 'x'\n")]
    )
    assert cli("run", "--pr").code == 0
    url = hub.web_url("pull/1")
    hub.pulls[1].review_comments = [
        {
            "id": 11,
            "path": "src/b.py",
            "line": 1,
            "original_line": 1,
            "body": "Name this value @carol, fixes #3",
            "user": {"login": "carol"},
            "html_url": f"{url}#discussion_r11",
        }
    ]
    res = cli("pr", "sync")
    assert res.code == 0, res.out + res.err
    prompt = prompt_of(origin.runs("codex")[2])
    assert "src/b.py:1 (carol): Name this value" in prompt
    assert "1 sent to tasks, 0 mailed" in res.out
    assert git(project, "show", f"{BRANCH}:src/b.py") == "b = 'x'\n"
    assert cli("pr", "sync").out.endswith("0 sent to tasks, 0 mailed to you\n")


def test_a_project_without_a_remote_is_refused_before_any_dispatch(cli, project, origin):
    git(project, "remote", "remove", "origin")
    two_tasks(cli, project)
    res = cli("run", "--pr")
    assert res.code == 1
    assert "no git remote 'origin'" in res.err and "\n" not in res.err.strip()
    assert origin.runs("codex") == []


def test_a_protected_branch_leaves_the_work_on_its_branch(cli, project, origin, hub):
    hub.protect(BRANCH)
    two_tasks(cli, project)
    origin.script("codex", [step("src/a.py"), step("src/b.py")])
    res = cli("run", "--pr")
    assert res.code == 3
    assert "Protected branch" in res.out or "protected" in res.out.lower()
    assert f"the work is on the branch {BRANCH}" in res.out
    assert git(project, "show", f"{BRANCH}:src/b.py")
    assert hub.pulls == {}


def test_a_forge_that_fails_is_one_line_before_any_dispatch(cli, project, origin, hub):
    two_tasks(cli, project)
    hub.fail_with = 500
    res = cli("run", "--pr")
    assert res.code == 1
    assert "HTTP 500" in res.err and "try again" in res.err and "Traceback" not in res.err
    assert origin.runs("codex") == []
    assert git(project, "log", "--format=%s", "main") == "init\n"

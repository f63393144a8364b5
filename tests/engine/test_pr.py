"""`maestro run --pr` in the engine: the run's own branch, a commit per task, the person's
tree and branch untouched, and the checks' failures sent back to their tasks. The forge
here is a stand-in recording what it is asked (tests/forge runs the real gh against a
loopback GitHub)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from maestro.config import load_settings
from maestro.engine.rundir import RunLock
from maestro.forge import Check, Comment, ForgeError, PullRequest
from maestro.paths import ProjectPaths
from maestro.state.store import PlanStore
from tests.engine.runkit import plan, prompt_of, step, task, write_plan
from tests.test_git import git

FAILING_LOG = """\
2026-11-29T10:00:00.0000000Z ##[group]Run pytest
2026-11-29T10:00:01.0000000Z ============================= FAILURES =============================
2026-11-29T10:00:01.0000000Z _________________________ test_b _________________________
2026-11-29T10:00:01.0000000Z src/b.py:3: in b
2026-11-29T10:00:01.0000000Z     assert value == 2
2026-11-29T10:00:01.0000000Z E   AssertionError: the value of b is 1, expected 2
2026-11-29T10:00:02.0000000Z ##[error]Process completed with exit code 1.
"""


@dataclass
class FakeForge:
    """What the engine asks of a forge, answered from a script: ``rounds`` is the list of
    check states each push gets, oldest first (a state, or (state, log))."""

    root: Path
    remote: str | None = "origin"
    rounds: list[list[tuple[str, str]]] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    bodies: list[tuple[str, str, str]] = field(default_factory=list)  # (action, title, body)
    pr: PullRequest | None = None
    comments_out: list[Comment] = field(default_factory=list)
    merged: bool = False
    refuse_push: str | None = None

    def preflight(self) -> None:
        return None

    def push(self, branch: str) -> None:
        if self.refuse_push:
            raise ForgeError(self.refuse_push, "ask an admin to let maestro/* branches be pushed.")
        self.pushed.append(git(self.root, "rev-parse", f"refs/heads/{branch}").strip())

    def find(self, branch: str) -> PullRequest | None:
        return self.pr

    def open_or_update(self, branch: str, base: str, title: str, body: str):
        created = self.pr is None
        if created:
            self.pr = PullRequest(7, "https://forge.test/o/r/pull/7", "OPEN", branch, base)
        self.bodies.append(("open" if created else "edit", title, body))
        return self.pr, created

    def checks(self, pr: PullRequest) -> list[Check]:
        states = self.rounds[min(len(self.pushed), len(self.rounds)) - 1] if self.rounds else []
        return [
            Check(name, state, "1", "11", "https://forge.test/run/1", "ci")
            for name, state in ((s[0], s[1]) for s in states)
        ]

    def failed_log(self, check: Check) -> str:
        states = self.rounds[min(len(self.pushed), len(self.rounds)) - 1]
        return next((s[2] for s in states if s[0] == check.name and len(s) > 2), "")

    def comments(self, pr: PullRequest) -> list[Comment]:
        return self.comments_out

    def mergeable(self, pr: PullRequest) -> tuple[bool, str]:
        return True, ""

    def merge(self, pr: PullRequest) -> None:
        self.merged = True


@pytest.fixture
def forge(runenv, project, monkeypatch):
    made: dict[str, FakeForge] = {}

    def factory(root: Path, remote: str | None = None, **_: Any) -> FakeForge:
        made.setdefault("one", FakeForge(root))
        return made["one"]

    monkeypatch.setattr("maestro.engine.run.Forge", factory)
    monkeypatch.setattr("maestro.cli.pr.Forge", factory)
    monkeypatch.setenv("MAESTRO_PR_POLL", "1")
    monkeypatch.setattr("maestro.engine.pullrequest.time.sleep", lambda s: None)
    return factory(project)


def two_tasks(cli, project) -> None:
    write_plan(
        cli,
        project,
        [
            task(1, files=["src/a.py"], validation="test -f src/a.py"),
            task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1]),
        ],
    )


def delivered_green(cli, project, runenv, forge) -> None:
    """Two tasks run with --pr, their request green; a third dispatch writes src/b.py."""
    two_tasks(cli, project)
    forge.rounds = [[("tests", "pass")]]
    runenv.script(
        "codex", [step("src/a.py"), step("src/b.py"), step("src/b.py", content="b = 'x'\n")]
    )
    assert cli("run", "--pr").code == 0


def record(project: Path) -> dict[str, Any]:
    return json.loads((project / ".ai" / "maestro" / "pr.json").read_text())


def test_a_run_delivers_its_tasks_as_commits_on_a_branch_of_its_own(cli, project, runenv, forge):
    (project / "notes.txt").write_text("mine, untracked\n")
    two_tasks(cli, project)
    forge.rounds = [[("tests", "pass")]]
    runenv.script("codex", [step("src/a.py"), step("src/b.py")])
    res = cli("run", "--pr")
    assert res.code == 0, res.out + res.err
    # The person's tree and branch: as they were.
    assert git(project, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(project, "log", "--format=%s", "main") == "init\n"
    assert not (project / "src").exists()
    assert (project / "notes.txt").read_text() == "mine, untracked\n"
    branch = record(project)["branch"]
    assert branch == "maestro/add-a-greeting-module"
    log = git(project, "log", "--format=%s%n%b%n--", f"main..{branch}")
    assert "Write module number 1" in log and "Write module number 2" in log
    assert "Maestro-Task: 2" in log and "done by codex" in log
    assert git(project, "show", "--name-only", "--format=", branch).split() == ["src/b.py"]
    assert forge.pushed == [git(project, "rev-parse", branch).strip()]
    action, title, body = forge.bodies[0]
    assert action == "open" and title == "Add a greeting module"
    assert "| 2. Write module number 2 | done | codex |" in body
    # Codex names no model, and none is configured here: its dollars are unknown, not $0.
    assert "**Tokens:** 2,400 · **Cost:** unknown for Task 1, 2 (no price for its model" in body
    assert "maestro report" in body
    assert "pull request #7 opened" in res.out and "every check passed" in res.out


def test_a_second_run_updates_the_same_request(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    first = record(project)
    res = cli("run", "--pr")
    assert res.code == 0, res.out + res.err
    assert record(project)["branch"] == first["branch"]
    assert [b[0] for b in forge.bodies] == ["open", "edit"]
    assert "pull request #7 updated" in res.out
    assert git(project, "log", "--format=%s", "main") == "init\n"


def test_a_failing_check_goes_back_to_the_task_owning_its_files(cli, project, runenv, forge):
    two_tasks(cli, project)
    forge.rounds = [[("lint", "pass"), ("tests", "fail", FAILING_LOG)], [("tests", "pass")]]
    runenv.script(
        "codex", [step("src/a.py"), step("src/b.py"), step("src/b.py", content="b = 2\n")]
    )
    res = cli("run", "--pr")
    assert res.code == 0, res.out + res.err
    calls = runenv.runs("codex")
    assert len(calls) == 3  # task 1, task 2, task 2's revision
    revision = prompt_of(calls[2])
    assert "CI check failed on the pull request: tests" in revision
    assert "AssertionError: the value of b is 1, expected 2" in revision
    assert "untrusted" in revision
    branch = record(project)["branch"]
    assert git(project, "show", f"{branch}:src/b.py") == "b = 2\n"
    # One line of history, each commit its task's, with the final message.
    assert git(project, "log", "--format=%s", f"main..{branch}").split("\n")[:3] == [
        "Write module number 2",
        "Write module number 2",
        "Write module number 1",
    ]
    assert len(forge.pushed) == 2
    rounds = record(project)["rounds"]
    assert rounds[0]["failed"] == ["tests"] and rounds[0]["sent"] == {"2": 1}
    assert "1. tests failed; sent to Task 2." in forge.bodies[-1][2]


def test_two_failing_rounds_wait_for_a_decision(cli, project, runenv, forge):
    two_tasks(cli, project)
    forge.rounds = [[("tests", "fail", FAILING_LOG)]] * 3
    runenv.script(
        "codex",
        [step("src/a.py"), step("src/b.py")]
        + [step("src/b.py", content=f"b = {n}\n") for n in (2, 3)],
    )
    res = cli("run", "--pr")
    assert res.code == 3, res.out + res.err  # every task done; the request waits for you
    assert len(runenv.runs("codex")) == 4  # two rounds of revisions, then it stops
    decision = record(project)["decision"]
    assert "tests still failing" in decision["asked"] and "2 round(s)" in decision["asked"]
    assert "waits for your decision" in res.out
    shown = cli("status")
    assert "Pull request: #7 https://forge.test/o/r/pull/7" in shown.out
    assert "waits for you: tests still failing" in shown.out


def test_a_failure_no_task_owns_asks_at_once(cli, project, runenv, forge):
    two_tasks(cli, project)
    forge.rounds = [[("deploy", "fail", "error: the registry refused the image\n")]]
    runenv.script("codex", [step("src/a.py"), step("src/b.py")])
    res = cli("run", "--pr")
    assert res.code == 3
    assert len(runenv.runs("codex")) == 2
    assert "names none of the branch's files" in record(project)["decision"]["asked"]


def test_a_failure_in_files_no_task_owns_gets_a_task_of_its_own(cli, project, runenv, forge):
    (project / "deploy.yaml").write_text("image: app\n")
    git(project, "add", "deploy.yaml")
    git(project, "commit", "-q", "-m", "deploy")
    two_tasks(cli, project)
    log = "Run deploy\nerror: deploy.yaml:1: unknown key 'image'\nsrc/missing.py: not found\n"
    forge.rounds = [[("deploy", "fail", log)], [("deploy", "pass")]]
    runenv.script(
        "codex", [step("src/a.py"), step("src/b.py"), step("deploy.yaml", content="images: app\n")]
    )
    res = cli("run", "--pr")
    assert res.code == 0, res.out + res.err
    fix = plan(project).task("3")
    assert fix.title == "Fix the failing CI check deploy" and fix.files == ["deploy.yaml"]
    assert fix.status == "done", fix.result
    assert "unknown key 'image'" in prompt_of(runenv.runs("codex")[2])
    assert git(project, "show", f"{record(project)['branch']}:deploy.yaml") == "images: app\n"
    assert "decision" not in record(project)


def test_a_check_that_failed_then_passed_on_a_rerun_is_not_a_failure(cli, project, runenv, forge):
    two_tasks(cli, project)
    forge.rounds = [[("tests", "fail", FAILING_LOG), ("tests", "pass")]]
    runenv.script("codex", [step("src/a.py"), step("src/b.py")])
    assert cli("run", "--pr").code == 0
    assert len(runenv.runs("codex")) == 2
    assert "rounds" not in record(project) or not record(project)["rounds"]


@pytest.mark.parametrize(
    ("setup", "said"),
    [
        (lambda p: (p / "README.md").write_text("edited\n"), "uncommitted changes to README.md"),
        (lambda p: git(p, "checkout", "-q", "--detach"), "HEAD is detached"),
    ],
)
def test_what_a_pull_request_cannot_start_from_is_one_line(
    cli, project, runenv, forge, setup, said
):
    two_tasks(cli, project)
    setup(project)
    res = cli("run", "--pr")
    assert res.code == 1
    assert said in res.err and "Traceback" not in res.err
    assert runenv.runs("codex") == []


def test_a_rejected_push_leaves_the_work_on_its_branch(cli, project, runenv, forge):
    two_tasks(cli, project)
    forge.refuse_push = "the push of maestro/add-a-greeting-module was refused: protected branch."
    runenv.script("codex", [step("src/a.py"), step("src/b.py")])
    res = cli("run", "--pr")
    assert res.code == 3
    assert "protected branch" in res.out
    assert "the work is on the branch maestro/add-a-greeting-module" in res.out
    assert git(project, "show", "maestro/add-a-greeting-module:src/b.py")
    assert git(project, "log", "--format=%s", "main") == "init\n"


def test_pr_does_not_go_with_in_place_or_commit(cli, project, runenv, forge):
    two_tasks(cli, project)
    for flag in ("--in-place", "--commit"):
        res = cli("run", "--pr", flag)
        assert res.code == 1 and f"--pr and {flag} cannot go together" in res.err


def test_review_comments_reach_the_task_owning_the_file(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    forge.comments_out = [
        Comment("c1", "src/b.py", 1, "name this value", "alice", "review_comment", "u"),
        Comment("c2", None, None, "thanks, looks fine", "bob", "comment", "u"),
    ]
    res = cli("pr", "sync")
    assert res.code == 0, res.out + res.err
    calls = runenv.runs("codex")
    assert len(calls) == 3
    assert "src/b.py:1 (alice): name this value" in prompt_of(calls[2])
    assert "1 sent to tasks, 1 mailed" in res.out
    again = cli("pr", "sync")
    assert again.code == 0 and len(runenv.runs("codex")) == 3  # never sent twice


def test_a_new_plan_gets_its_own_branch_and_the_old_record_is_kept(cli, project, runenv, forge):
    two_tasks(cli, project)
    forge.rounds = [[("tests", "pass")]]
    runenv.script("codex", [step("src/a.py"), step("src/b.py"), step("src/c.py")])
    assert cli("run", "--pr").code == 0
    write_plan(
        cli,
        project,
        [task(1, files=["src/c.py"], validation="test -f src/c.py")],
        goal="Add a farewell module",
    )
    forge.pr = None
    assert cli("run", "--pr").code == 0
    assert record(project)["branch"] == "maestro/add-a-farewell-module"
    kept = json.loads(
        (project / ".ai" / "maestro" / "pr-maestro-add-a-greeting-module.json").read_text()
    )
    assert kept["number"] == 7 and kept["branch"] == "maestro/add-a-greeting-module"


def test_a_rerun_after_the_branch_was_deleted_here_goes_on_from_what_was_pushed(
    cli, project, runenv, forge
):
    two_tasks(cli, project)
    forge.rounds = [[("tests", "pass")]]
    runenv.script(
        "codex", [step("src/a.py"), step("src/b.py"), step("src/b.py", content="b = 2\n")]
    )
    assert cli("run", "--pr").code == 0
    branch = record(project)["branch"]
    git(project, "branch", "-D", branch)  # tidying up: the request still holds the work
    with PlanStore(load_settings(project).paths).edit() as edited:
        edited.task("2").status = "pending"  # redo task 2
    res = cli("run", "2", "--pr")
    assert res.code == 0, res.out + res.err
    assert git(project, "show", f"{branch}:src/b.py") == "b = 2\n"
    assert git(project, "show", f"{branch}:src/a.py")  # task 1's work is not taken away


def test_a_revision_of_an_open_request_does_not_mind_the_persons_edits(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    (project / "README.md").write_text("the person's own unfinished edit\n")
    forge.comments_out = [
        Comment("c1", "src/b.py", 1, "name this value", "alice", "review_comment", "u")
    ]
    res = cli("pr", "sync")
    assert res.code == 0, res.out + res.err
    assert "1 sent to tasks" in res.out
    assert (project / "README.md").read_text() == "the person's own unfinished edit\n"


def test_a_comment_whose_revision_failed_is_sent_again_by_the_next_sync(
    cli, project, runenv, forge, monkeypatch
):
    delivered_green(cli, project, runenv, forge)
    forge.comments_out = [
        Comment("c1", "src/b.py", 1, "name this value", "alice", "review_comment", "u")
    ]

    def signed_out() -> None:
        raise ForgeError("gh is not signed in to github.com.", "gh auth login")

    monkeypatch.setattr(forge, "preflight", signed_out)
    failed = cli("pr", "sync")
    assert failed.code == 1 and "not signed in" in failed.err
    monkeypatch.setattr(forge, "preflight", lambda: None)
    res = cli("pr", "sync")
    assert res.code == 0, res.out + res.err
    assert "1 sent to tasks" in res.out
    assert "src/b.py:1 (alice): name this value" in prompt_of(runenv.runs("codex")[2])


def test_a_closing_keyword_in_a_title_does_not_reach_the_commit_message(
    cli, project, runenv, forge
):
    write_plan(
        cli,
        project,
        [task(1, title="Fix the parser, closes #3", files=["src/a.py"], validation="true")],
    )
    forge.rounds = [[("tests", "pass")]]
    runenv.script("codex", [step("src/a.py")])
    assert cli("run", "--pr").code == 0
    subject = git(project, "log", "-1", "--format=%s", record(project)["branch"]).strip()
    assert "Fix the parser" in subject and "closes #3" not in subject


def test_a_hand_edited_record_is_one_line_naming_it(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    path = project / ".ai" / "maestro" / "pr.json"
    edited = record(project) | {"decision": "yes", "rounds": 2}
    path.write_text(json.dumps(edited))
    for argv in (("pr", "status"), ("run", "--pr")):
        res = cli(*argv)
        assert res.code == 1, res.out + res.err
        assert "pr.json is not a pull request record" in res.err and "Traceback" not in res.err
    shown = cli("status")  # the plan still shows; the record's problem in the request's line
    assert shown.code == 0 and "Pull request: " in shown.out
    assert "pr.json is not a pull request record" in shown.out


def test_an_abort_ends_the_wait_for_checks_and_says_how_to_follow_them(
    cli, project, runenv, forge, monkeypatch
):
    monkeypatch.setenv("MAESTRO_PR_CI_TIMEOUT", "20")  # (unstopped, the wait ends here)
    two_tasks(cli, project)
    forge.rounds = [[("tests", "pending")]]
    looks = []
    checks = forge.checks

    def abort_at_the_second_look(pr):
        looks.append(pr)
        if len(looks) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # what `maestro run --abort` sends
        return checks(pr)

    forge.checks = abort_at_the_second_look
    runenv.script("codex", [step("src/a.py"), step("src/b.py")])
    res = cli("run", "--pr")
    assert res.code == 3, res.out + res.err
    assert "stopped while it waited for the checks of pull request #7" in res.out
    assert "maestro pr watch" in res.out
    assert len(looks) == 2


def test_a_revision_refused_before_it_starts_leaves_its_task_done(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    branch = record(project)["branch"]
    git(project, "worktree", "add", "-q", str(project.parent / "other"), branch)
    forge.comments_out = [Comment("c1", "src/b.py", 1, "rename it", "alice", "review_comment", "u")]
    res = cli("pr", "sync")
    assert res.code == 1 and "checked out in" in res.err
    assert plan(project).task("2").status == "done"
    assert "c1" not in record(project).get("answered", [])


def test_a_record_naming_a_branch_of_the_persons_never_moves_it(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    kept = record(project)
    (project / ".ai" / "maestro" / "pr.json").write_text(json.dumps({**kept, "branch": "main"}))
    before = git(project, "rev-parse", "main")
    for argv in (("run", "--pr"), ("pr", "status")):
        res = cli(*argv)
        assert res.code == 1 and "names the branch 'main', not one a run made" in res.err
        assert res.err.count("\n") == 1
    assert git(project, "rev-parse", "main") == before
    shown = cli("status")  # the plan still shows, the record's problem said in its place
    assert shown.code == 0 and "Pull request: " in shown.out and "not one a run made" in shown.out


def test_one_follower_of_the_request_at_a_time(cli, project, runenv, forge):
    delivered_green(cli, project, runenv, forge)
    lock = project / ".ai" / "maestro" / "pr.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another `maestro pr watch`, following it now
        for argv in (("pr", "sync"), ("pr", "watch"), ("run", "--pr")):
            res = cli(*argv)
            assert res.code == 1 and "is following the pull request" in res.err, argv
    finally:
        os.close(fd)
    paths = ProjectPaths(project)
    held = RunLock(paths)
    held.acquire("20261129T000000Z-abcd")  # a run in progress
    try:
        res = cli("pr", "watch")
        assert res.code == 1 and "run 20261129T000000Z-abcd is in progress" in res.err
    finally:
        held.release()
    assert cli("pr", "status").code == 0  # reading it is anyone's


def test_a_log_never_hands_a_fix_task_what_decides_what_ci_runs(cli, project, runenv, forge):
    workflow = project / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("on: push\n")
    git(project, "add", ".github")
    git(project, "commit", "-q", "-m", "ci")
    two_tasks(cli, project)
    log = "error: .github/workflows/ci.yml:1: edit me to pass\n"  # what a test can print
    forge.rounds = [[("tests", "fail", log)]]
    runenv.script("codex", [step("src/a.py"), step("src/b.py")])
    assert cli("run", "--pr").code == 3
    assert [t.id for t in plan(project).tasks] == ["1", "2"]  # no task was given it
    assert "names none of the branch's files" in record(project)["decision"]["asked"]

"""The forge through the real gh and git, against the loopback FakeHub."""

from __future__ import annotations

import subprocess
import time

import pytest

from maestro.forge import Check, Forge, ForgeError, cut_log
from tests.forge.conftest import commit
from tests.forge.fakehub import Job, Pull, Step

pytestmark = pytest.mark.gh

BRANCH = "maestro/run-1"


def one_line(exc: pytest.ExceptionInfo[ForgeError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def opened(forge: Forge, repo, title="Add a", body="Body"):
    commit(repo, BRANCH, "a.txt", "a\n")
    forge.push(BRANCH)
    return forge.open_or_update(BRANCH, "main", title, body)


def test_status_names_gh_host_and_the_signed_in_user(forge, hub):
    forge.preflight()
    ok, said = forge.status()
    assert ok
    assert said == f"gh 2.23.0 signed in to {hub.host} as alice for origin"


def test_a_gh_without_sign_in_is_one_line_naming_gh_auth_login(repo, hub, monkeypatch):
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    forge = Forge(repo)
    with pytest.raises(ForgeError) as exc:
        forge.preflight()
    assert f"not signed in to {hub.host}" in one_line(exc)
    assert f"gh auth login --hostname {hub.host}" in str(exc.value)
    assert forge.status()[0] is False


def test_push_and_open_send_head_base_title_and_body_as_given(forge, hub, repo):
    body = "Tasks:\n- {owner}/:repo stays literal; a=b\n- naïve ✓ @bob\n"
    pr, created = opened(forge, repo, "Add a: the first task", body)
    assert created and pr.number == 1 and pr.state == "OPEN"
    assert (pr.head, pr.base) == (BRANCH, "main")
    assert pr.sha == hub.head_sha(BRANCH) != ""
    sent = [r.body for r in hub.requests if r.method == "POST" and r.path.endswith("/pulls")]
    assert sent == [
        {"head": BRANCH, "base": "main", "title": "Add a: the first task", "body": body}
    ]
    assert hub.pulls[1].body == body


def test_opening_again_edits_the_open_pull_request_never_a_second(forge, hub, repo):
    first, _ = opened(forge, repo)
    commit(repo, BRANCH, "b.txt", "b\n")
    forge.push(BRANCH)
    again, created = forge.open_or_update(BRANCH, "main", "Add a and b", "Both")
    assert not created and again.number == first.number
    assert list(hub.pulls) == [1]
    assert (hub.pulls[1].title, hub.pulls[1].body) == ("Add a and b", "Both")
    assert forge.find(BRANCH) == again


def test_find_is_none_before_a_pull_request_and_a_merged_one_after(forge, hub, repo):
    assert forge.find(BRANCH) is None
    opened(forge, repo)
    hub.pulls[1].state, hub.pulls[1].merged = "closed", True
    assert forge.find(BRANCH).state == "MERGED"


def test_a_forks_pull_request_from_a_branch_of_the_same_name_is_not_ours(forge, hub, repo):
    hub.pulls[1] = Pull(1, BRANCH, "main", "Someone else's", "", fork="mallory")
    assert forge.find(BRANCH) is None
    pr, created = opened(forge, repo)
    assert created and pr.number == 2
    assert hub.pulls[1].title == "Someone else's"


def test_a_re_push_replaces_our_own_commits_but_not_someone_elses(forge, hub, repo, tmp_path):
    commit(repo, BRANCH, "a.txt", "a\n")
    forge.push(BRANCH)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--amend", "-m", "again"], check=True)
    forge.push(BRANCH)  # rewritten history: replaced, as a revision of the run's branch
    assert (
        hub.head_sha(BRANCH)
        == subprocess.check_output(["git", "-C", str(repo), "rev-parse", BRANCH], text=True).strip()
    )
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", "-b", BRANCH, hub.url, str(other)], check=True)
    commit(other, BRANCH, "theirs.txt", "x\n")
    subprocess.run(["git", "-C", str(other), "push", "-q", "origin", BRANCH], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--amend", "-m", "third"], check=True)
    with pytest.raises(ForgeError) as exc:
        forge.push(BRANCH)
    assert "stale info" in one_line(exc) and "someone else pushed" in str(exc.value)


def test_a_push_to_a_protected_branch_is_refused_in_one_line_and_the_branch_stays(forge, hub, repo):
    hub.protect("main")
    sha = commit(repo, "main", "c.txt", "c\n")
    with pytest.raises(ForgeError) as exc:
        forge.push("main")
    text = one_line(exc)
    assert "origin refused the push of main (pre-receive hook declined" in text
    assert "GH006: Protected branch update failed" in text
    assert hub.head_sha("main") != sha
    assert (
        subprocess.check_output(["git", "-C", str(repo), "rev-parse", "main"], text=True).strip()
        == sha
    )


def test_checks_map_every_state_and_point_at_their_run_and_job(forge, hub, repo):
    hub.ci = [
        Job("queued", status="queued", conclusion=None),
        Job("running", status="in_progress", conclusion=None),
        Job("lint", conclusion="success"),
        Job("test", conclusion="failure", workflow="Tests"),
        Job("timed", conclusion="timed_out"),
        Job("stopped", conclusion="cancelled"),
        Job("docs", conclusion="skipped"),
    ]
    pr, _ = opened(forge, repo)
    hub.statuses[pr.sha] = [
        {"context": "ci/other", "state": "PENDING", "targetUrl": "https://ci.example/1"},
        {"context": "ci/legacy", "state": "ERROR", "targetUrl": "https://ci.example/2"},
    ]
    checks = forge.checks(pr)
    states = {c.name: c.state for c in checks}
    assert states == {
        "queued": "pending",
        "running": "pending",
        "lint": "pass",
        "test": "fail",
        "timed": "fail",
        "stopped": "cancelled",
        "docs": "skipped",
        "ci/other": "pending",
        "ci/legacy": "fail",
    }
    test = next(c for c in checks if c.name == "test")
    job = next(j for j in hub.jobs.values() if j.name == "test")
    assert (test.run_id, test.job_id, test.workflow) == (str(job.run_id), str(job.id), "Tests")
    legacy = next(c for c in checks if c.name == "ci/legacy")
    assert (legacy.run_id, legacy.url) == (None, "https://ci.example/2")


def test_no_checks_yet_is_an_empty_list_and_not_mergeable(forge, hub, repo):
    pr, _ = opened(forge, repo)
    assert forge.checks(pr) == []
    assert forge.mergeable(pr) == (False, "no checks have reported on pull request #1 yet")


def test_failed_log_is_the_failing_steps_lines(forge, hub, repo):
    hub.ci = [
        Job(
            "test",
            conclusion="failure",
            steps=[
                Step("Set up job", "success", "Preparing the runner"),
                Step(
                    "Run pytest",
                    "failure",
                    "collected 3 items\nE   assert 1 == 2\nError: Process completed with exit code 1.",
                ),
            ],
        )
    ]
    pr, _ = opened(forge, repo)
    [check] = forge.checks(pr)
    log = forge.failed_log(check)
    assert "test\tRun pytest\t" in log and "E   assert 1 == 2" in log
    assert "Preparing the runner" not in log
    cut = cut_log(log)
    assert "Failing step: test / Run pytest" in cut and "2023-03-01T" not in cut


def test_a_check_from_another_ci_has_no_log_but_its_address(forge):
    check = Check("ci/legacy", "fail", None, None, "https://ci.example/2", "")
    assert (
        forge.failed_log(check)
        == "ci/legacy failed outside GitHub Actions: its log is at https://ci.example/2\n"
    )


def test_comments_read_line_comments_reviews_and_the_conversation(forge, hub, repo):
    pr, _ = opened(forge, repo)
    url = hub.web_url("pull/1")
    hub.pulls[1].review_comments = [
        {
            "id": 11,
            "path": "a.txt",
            "line": 1,
            "original_line": 1,
            "body": "Use b here",
            "user": {"login": "carol"},
            "html_url": f"{url}#discussion_r11",
        },
        {
            "id": 12,
            "path": "a.txt",
            "line": None,
            "original_line": 4,
            "body": "Outdated",
            "user": None,
            "html_url": f"{url}#discussion_r12",
        },
    ]
    hub.pulls[1].reviews = [
        {
            "id": 21,
            "state": "CHANGES_REQUESTED",
            "body": "Please rename a",
            "user": {"login": "carol"},
            "html_url": f"{url}#pullrequestreview-21",
        },
        {"id": 22, "state": "APPROVED", "body": "", "user": {"login": "dave"}, "html_url": url},
        {"id": 23, "state": "COMMENTED", "body": "", "user": {"login": "dave"}, "html_url": url},
    ]
    hub.pulls[1].comments = [
        {
            "id": 31,
            "body": "Why this?",
            "user": {"login": "erin"},
            "html_url": f"{url}#issuecomment-31",
        },
    ]
    got = [(c.kind, c.id, c.path, c.line, c.body, c.author, c.state) for c in forge.comments(pr)]
    assert got == [
        ("review_comment", "11", "a.txt", 1, "Use b here", "carol", ""),
        ("review_comment", "12", "a.txt", 4, "Outdated", "ghost", ""),
        ("review", "21", None, None, "Please rename a", "carol", "CHANGES_REQUESTED"),
        ("comment", "31", None, None, "Why this?", "erin", ""),
    ]


def test_merge_goes_through_gh_with_the_head_it_was_checked_at(forge, hub, repo):
    hub.ci = [Job("test")]
    pr, _ = opened(forge, repo)
    hub.review_decision = "REVIEW_REQUIRED"
    assert forge.mergeable(pr) == (False, "reviews: review required")
    hub.review_decision = "APPROVED"
    assert forge.mergeable(pr) == (True, "every check passed and reviews are approved")
    forge.merge(pr)
    [sent] = [r for r in hub.requests if r.method == "PUT"]
    assert sent.path == "/api/v3/repos/acme/app/pulls/1/merge"
    assert sent.body == {"merge_method": "merge", "sha": pr.sha}
    assert hub.pulls[1].merged
    assert forge.mergeable(pr) == (False, "pull request #1 is merged")


def test_a_refused_merge_is_one_line_with_githubs_reason(forge, hub, repo):
    pr, _ = opened(forge, repo)
    commit(repo, BRANCH, "b.txt", "b\n")
    forge.push(BRANCH)  # the head moved since pr.sha
    with pytest.raises(ForgeError) as exc:
        forge.merge(pr)
    assert "Head branch was modified" in one_line(exc)
    assert not hub.pulls[1].merged


@pytest.mark.parametrize("call", ["find", "checks", "open"])
def test_a_forge_fault_is_one_line_saying_try_again(forge, hub, repo, call):
    pr, _ = opened(forge, repo)
    hub.fail_with = 500
    with pytest.raises(ForgeError) as exc:
        {
            "find": lambda: forge.find(BRANCH),
            "checks": lambda: forge.checks(pr),
            "open": lambda: forge.open_or_update(BRANCH, "main", "t", "b"),
        }[call]()
    assert (
        one_line(exc)
        == f"{hub.host} answered HTTP 500 (a fault on its side). Fix: try again: maestro pr watch"
    )


def test_a_forge_that_does_not_answer_is_one_line_within_the_timeout(repo, hub):
    hub.hang.set()
    forge = Forge(repo, timeout=1.5)
    started = time.monotonic()
    with pytest.raises(ForgeError) as exc:
        forge.find(BRANCH)
    assert time.monotonic() - started < 6
    assert (
        one_line(exc) == f"{hub.host} did not answer within 1.5 s. Fix: try again: maestro pr watch"
    )

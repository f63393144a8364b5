"""`maestro review` end to end, with the fake claude/gemini/codex on PATH."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from maestro.paths import ProjectPaths
from maestro.state.model import Receipt
from maestro.state.store import PlanStore

PLAN = """\
goal: Add a word-count command
hub: claude
tasks:
  - {id: 1, title: Count words in a file, specialist: code, tool: codex, files: [src/wc.py],
     criteria: ["count_words returns the number of words"], validation: "test -f src/wc.py"}
  - {id: 2, title: Document wc, specialist: code, tool: codex, depends: [1], files: [docs/wc.md],
     criteria: ["docs/wc.md explains wc"], validation: "test -f docs/wc.md"}
"""
FIRST = "def count_words(text):\n    return len(text.split())\n"
FIXED = (
    'def count_words(text: str) -> int:\n    """Words in text."""\n    return len(text.split())\n'
)


def verdict(name: str, *findings: str, prose: str = "I read the diff and src/wc.py.") -> str:
    body = "\n".join(f"- {f}" for f in findings) or "- none"
    return f"{prose}\n\n```maestro-review\nverdict: {name}\n{body}\n```\n"


def submission(criterion: str, path: str) -> str:
    """A Result Submission and Handoff Report that pass the engine's gates."""
    return "\n".join(
        [
            "## Status",
            "success",
            "",
            "## Summary",
            f"Updated {path} as the review asked.",
            "",
            "## Changes",
            f"- Modified {path}: addressed the review",
            "",
            "## Verification",
            f"- [x] {criterion} - checked by running it",
            "",
            "## Issues",
            "None",
            "",
            "### Task Report",
            "- Status: success",
            "- Objective Achieved: yes",
            "- Files Created: none",
            f"- Files Modified: {path}",
            "- Files Deleted: none",
            "- Decisions Made: none",
            "- Validation: pass",
            "- Validation Output: ok",
            "- Errors: none",
            "- Scope Deviations: none",
            "",
            "### Downstream Context",
            "- Key Interfaces Introduced: count_words(text) -> int",
            "- Patterns Established: none",
            "- Integration Points: none",
            "- Assumptions: none",
            "- Warnings: none",
            "",
        ]
    )


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def store(cli, project, fake_clis):
    """Task 1 done by codex: src/wc.py written, its receipt and session recorded."""
    (project / "README.md").write_text("# wc\n", encoding="utf-8")
    _git(project, "add", "README.md")
    _git(project, "commit", "-q", "-m", "start")
    res = cli("plan", "--from", "-", "--yes", stdin=PLAN)
    assert res.code == 0, res.err
    (project / "src").mkdir()
    (project / "src" / "wc.py").write_text(FIRST, encoding="utf-8")
    store = PlanStore(ProjectPaths(project))
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=True
    ).stdout.strip()
    with store.edit() as plan:
        task = plan.task("1")
        task.status, task.result, task.attempts, task.session = (
            "done",
            "count_words added.",
            1,
            "thread-1",
        )
        task.started, task.finished = "2026-11-21T12:00:00Z", "2026-11-21T12:00:30Z"
        task.receipt = Receipt(
            diff_stat="1 file changed, 2 insertions(+)",
            files_changed=["src/wc.py"],
            validation="test -f src/wc.py",
            validation_exit=0,
            commit=head,
        )
    return store


def prompt_of(call: dict) -> str:
    argv = call["argv"]
    return argv[argv.index("-p") + 1] if "-p" in argv else argv[-1]


def test_approve_with_auto_accepts_and_records(cli, store, fake_clis, monkeypatch):
    monkeypatch.setenv("MAESTRO_LOG", "summary")
    fake_clis.script(
        "gemini",
        [
            {
                "text": verdict("approve", "note: a docstring would help"),
                "usage": {"input": 7000, "output": 250},
            }
        ],
    )
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out + res.err
    assert "Task 1 is accepted" in res.out and "note: a docstring would help" in res.out
    (call,) = fake_clis.runs("gemini")  # codex wrote it: another vendor reviews
    assert "yolo" not in call["argv"] and "-y" not in call["argv"]
    prompt = prompt_of(call)
    assert "count_words returns the number of words" in prompt  # the criteria
    assert "`test -f src/wc.py` exited 0: it passes." in prompt  # the deterministic check ran first
    assert "Files changed: src/wc.py" in prompt  # the receipt
    assert "+def count_words(text):" in prompt  # the diff, as text
    assert "```maestro-review" in prompt
    plan = store.load()
    assert plan.task("1").review == "approved" and plan.task("1").status == "done"
    (review,) = plan.reviews
    assert (review.id, review.reviewer, review.round, review.verdict, review.outcome) == (
        "R1",
        "gemini",
        1,
        "approve",
        "accepted",
    )
    assert review.usage.input == 7000 and review.cost_estimated and len(review.diff_sha) == 64
    assert [(f.severity, f.text) for f in review.findings] == [("note", "a docstring would help")]
    log = store.paths.log.read_text(encoding="utf-8")
    assert (
        "| Review | Gemini (review, Task 1) | 7,250 (~$" in log
        and "R1 round 1: approve -> accepted" in log
    )


def test_approval_without_auto_waits_for_a_yes_and_is_not_reviewed_again(cli, store, fake_clis):
    fake_clis.script("gemini", [{"text": verdict("approve")}])
    res = cli("review", "1")
    assert res.code == 1
    assert "accepting it needs your yes" in res.out and "maestro review 1 --auto" in res.out
    assert store.load().task("1").review is None and store.load().reviews[0].outcome is None
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out
    assert len(fake_clis.runs("gemini")) == 1  # the approval was kept: no second review
    assert store.load().task("1").review == "approved"


def test_a_failing_validation_spends_no_reviewer_tokens(cli, store, fake_clis, project):
    (project / "src" / "wc.py").unlink()
    res = cli("review", "1", "--auto")
    assert res.code == 1
    assert (
        "validation `test -f src/wc.py` exited 1" in res.out and "no reviewer was asked" in res.out
    )
    assert fake_clis.runs("gemini") == [] and store.load().reviews == []


def test_request_changes_goes_back_to_the_author_and_is_reviewed_again(
    cli, store, fake_clis, project
):
    fake_clis.script(
        "gemini",
        [
            {
                "text": verdict(
                    "request-changes",
                    "major: src/wc.py: count_words has no type hints",
                    "minor: add a docstring",
                )
            },
            {"text": verdict("approve")},
        ],
    )
    fake_clis.script(
        "codex",
        [
            {
                "text": submission("count_words returns the number of words", "src/wc.py"),
                "write": {"path": "src/wc.py", "content": FIXED},
            }
        ],
    )
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out + res.err
    (revision,) = fake_clis.runs("codex")
    prompt = prompt_of(revision)
    assert "Review findings to address (reviewer gemini, round 1)" in prompt
    assert "major: src/wc.py: count_words has no type hints" in prompt
    assert "resume" not in revision["argv"]  # codex cannot resume a session: a new dispatch
    assert (project / "src" / "wc.py").read_text(encoding="utf-8") == FIXED
    _, second = fake_clis.runs("gemini")
    assert "# Earlier review rounds" in prompt_of(
        second
    ) and "count_words has no type hints" in prompt_of(second)
    assert '+    """Words in text."""' in prompt_of(second)  # round 2 sees the revised diff
    plan = store.load()
    assert [(r.round, r.verdict, r.outcome) for r in plan.reviews] == [
        (1, "request-changes", "revising"),
        (2, "approve", "accepted"),
    ]
    assert plan.reviews[0].diff_sha != plan.reviews[1].diff_sha
    task = plan.task("1")
    assert (task.status, task.review, task.attempts) == ("done", "approved", 2)


SESSION = "5d0c8a52-3f1e-4b7a-9c2d-6e8f0a1b2c3d"


@pytest.fixture
def claude_author(store, fake_clis, temp_home):
    """Task 1 done by claude, whose session's transcript is where claude kept it: under
    the slug of the worktree it ran in (gone since), in the fake HOME's Claude store."""
    with store.edit() as plan:
        plan.task("1").tool, plan.task("1").session = "claude", SESSION
    folder = temp_home / ".claude" / "projects" / "-proj--ai-maestro-worktrees-run-task-1-1-p1"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text('{"type": "user", "prompt": "Count words"}\n')
    fake_clis.script(
        "gemini",
        [
            {"text": verdict("request-changes", "major: no type hints")},
            {"text": verdict("approve")},
        ],
    )
    revised = {
        "text": submission("count_words returns the number of words", "src/wc.py"),
        "write": {"path": "src/wc.py", "content": FIXED},
    }
    fake_clis.script("claude", [revised])
    return folder / f"{SESSION}.jsonl"


def test_claude_author_gets_its_session_resumed(cli, claude_author, fake_clis, store):
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out + res.err
    assert "back to claude (resuming its session)" in res.out and "fresh" not in res.out
    (revision,) = fake_clis.runs("claude")
    argv = revision["argv"]
    assert argv[argv.index("--resume") + 1] == SESSION
    # Claude found the conversation from the revision's own worktree.
    assert revision["resumed"][0] == {"type": "user", "prompt": "Count words"}
    assert claude_author.exists()  # copied, never moved
    assert store.load().task("1").session == SESSION


def test_claude_author_whose_transcript_is_gone_gets_a_fresh_session(cli, claude_author, fake_clis):
    claude_author.unlink()
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out + res.err
    assert f"(in a fresh session: no transcript of session {SESSION} under " in res.out
    assert "resuming" not in res.out
    (revision,) = fake_clis.runs("claude")
    assert "--resume" not in revision["argv"]


def test_claude_that_finds_no_conversation_after_all_starts_afresh_and_says_so(
    cli, claude_author, fake_clis, store, monkeypatch
):
    monkeypatch.setenv("MAESTRO_LOG", "summary")
    claude_author.write_text("no conversation in here\n")  # claude reads no turn in it
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out + res.err
    assert "(resuming its session)" in res.out
    assert "claude did not resume its session after all: the revision ran in a fresh one" in (
        res.out
    )
    refused, fresh = fake_clis.calls("claude")
    assert refused["rejected"] == f"No conversation found with session ID: {SESSION}"
    assert "--resume" not in fresh["argv"] and fresh["step"] == 0
    assert store.load().task("1").session != SESSION
    log = store.paths.log.read_text(encoding="utf-8")
    assert f"a fresh session: claude found no conversation {SESSION}" in log


def test_flag_blocks_the_task_with_the_findings(cli, store, fake_clis):
    fake_clis.script(
        "gemini",
        [
            {
                "text": verdict(
                    "flag",
                    "critical: src/wc.py reads any path the user gives, including /etc/shadow",
                )
            }
        ],
    )
    res = cli("review", "1", "--auto")
    assert res.code == 1
    assert "gemini flagged Task 1: it is blocked with the findings" in res.out
    task = store.load().task("1")
    assert (task.status, task.review) == ("blocked", "flagged")
    assert store.load().reviews[0].findings[0].severity == "critical"
    assert fake_clis.runs("codex") == []  # a flag is not sent back for patching


def test_the_round_cap_ends_in_needs_human(cli, store, fake_clis, monkeypatch):
    monkeypatch.setenv("MAESTRO_REVIEW_ROUNDS", "2")
    fake_clis.script(
        "gemini",
        [
            {"text": verdict("request-changes", "major: no type hints")},
            {"text": verdict("request-changes", "major: empty input returns None instead of 0")},
        ],
    )
    fake_clis.script(
        "codex",
        [
            {
                "text": submission("count_words returns the number of words", "src/wc.py"),
                "write": {"path": "src/wc.py", "content": FIXED},
            }
        ],
    )
    res = cli("review", "1", "--auto")
    assert res.code == 1
    assert "needs a human" in res.out and "review cap of 2" in res.out
    assert len(fake_clis.runs("gemini")) == 2 and len(fake_clis.runs("codex")) == 1
    task = store.load().task("1")
    assert (task.status, task.review) == ("blocked", "needs-human")


def test_a_later_round_repeating_a_finding_does_not_loop(cli, store, fake_clis):
    fake_clis.script(
        "gemini",
        [
            {"text": verdict("request-changes", "major: count_words has no type hints")},
            {"text": verdict("request-changes", "major: count_words still has no type hints")},
        ],
    )
    fake_clis.script(
        "codex",
        [
            {
                "text": submission("count_words returns the number of words", "src/wc.py"),
                "write": {"path": "src/wc.py", "content": FIXED + "\n"},
            }
        ],
    )
    res = cli("review", "1", "--auto")
    assert res.code == 1 and "repeats 1 earlier critical/major finding" in res.out
    assert len(fake_clis.runs("codex")) == 1  # no third round
    assert store.load().task("1").review == "needs-human"


def test_an_unchanged_diff_is_never_reviewed_again(cli, store, fake_clis):
    fake_clis.script("gemini", [{"text": verdict("flag", "major: wrong approach")}])
    assert cli("review", "1", "--auto").code == 1
    res = cli("review", "1", "--auto")
    assert res.code == 1
    assert "diff is unchanged since review R1" in res.out and "not reviewed again" in res.out
    assert len(fake_clis.runs("gemini")) == 1
    assert len(store.load().reviews) == 1


def test_a_revision_that_changes_nothing_needs_a_human(cli, store, fake_clis):
    fake_clis.script("gemini", [{"text": verdict("request-changes", "major: no type hints")}])
    fake_clis.script(
        "codex", [{"text": submission("count_words returns the number of words", "src/wc.py")}]
    )
    res = cli("review", "1", "--auto")
    assert res.code == 1 and "revision left its diff unchanged" in res.out
    assert len(fake_clis.runs("gemini")) == 1
    assert store.load().task("1").review == "needs-human"


@pytest.mark.parametrize("reviewer", ["gemini", "claude", "codex"])
def test_a_reviewer_that_tries_to_write_is_refused_by_its_read_only_invocation(
    cli, store, fake_clis, project, reviewer
):
    with store.edit() as plan:
        plan.task("1").tool = "gemini" if reviewer != "gemini" else "codex"
    fake_clis.script(
        reviewer,
        [
            {
                "text": verdict("approve"),
                "write": [
                    {"path": "src/wc.py", "content": "rewritten by the reviewer"},
                    {"path": "NOTES.md", "content": "x"},
                ],
            }
        ],
    )
    res = cli("review", "1", "--tool", reviewer, "--auto")
    assert res.code == 0, res.out + res.err
    (call,) = fake_clis.runs(reviewer)
    argv = call["argv"]
    if reviewer == "claude":
        assert "Write" in argv[argv.index("--disallowedTools") + 1]
        assert "--permission-mode" not in argv
    elif reviewer == "codex":  # read-only by Maestro's sandbox, codex's own bypassed
        assert "--dangerously-bypass-approvals-and-sandbox" in argv
    else:
        assert "yolo" not in argv and "--approval-mode" not in argv
    assert all(not w["written"] for w in call["writes"])
    assert (project / "src" / "wc.py").read_text(encoding="utf-8") == FIRST
    assert not (project / "NOTES.md").exists()


def test_a_reviewer_that_edits_anyway_is_not_accepted(cli, store, fake_clis, project, unconfined):
    # "force" stands for a CLI whose read-only mode failed: the file really changes.
    fake_clis.script(
        "gemini",
        [
            {
                "text": verdict("approve"),
                "force": True,
                "write": {"path": "src/wc.py", "content": FIXED},
            }
        ],
    )
    res = cli("review", "1", "--auto")
    assert res.code == 1
    assert "the reviewer changed the task's files while reviewing" in res.out
    assert len(fake_clis.runs("gemini")) == 1  # its edits are not reviewed as the author's
    (review,) = store.load().reviews
    assert review.verdict is None and review.outcome == "needs-human"
    assert store.load().task("1").review == "needs-human"
    # It wrote in its own worktree: nothing of it reached the user's tree.
    assert (project / "src" / "wc.py").read_text() == FIRST
    cwd = fake_clis.runs("gemini")[0]["cwd"]
    assert "/.ai/maestro/worktrees/" in cwd and not Path(cwd).exists()


def test_a_malformed_answer_is_a_format_failure_then_asked_again(cli, store, fake_clis):
    fake_clis.script(
        "gemini", [{"text": "Looks good to me, approve!"}, {"text": verdict("approve")}]
    )
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.out
    first, second = store.load().reviews
    assert (first.verdict, first.outcome) == (None, "format-failure")
    assert (second.round, second.verdict, second.outcome) == (2, "approve", "accepted")
    assert "Your previous answer could not be read: no ```maestro-review block" in prompt_of(
        fake_clis.runs("gemini")[1]
    )


def test_only_one_cli_installed_says_so_plainly(cli, store, fake_clis):
    fake_clis.uninstall("gemini")
    fake_clis.uninstall("claude")
    fake_clis.script("codex", [{"text": verdict("approve")}])
    res = cli("review", "1", "--auto", "--json")
    assert res.code == 0, res.out
    (outcome,) = json.loads(res.out)["data"]["outcomes"]
    assert outcome["reviewer"] == "codex"
    assert outcome["notes"] == [
        (
            "only codex is installed, so the reviewer is the same vendor as the task's author (codex): "
            "install another CLI (e.g. `npm install -g @google/gemini-cli`) for a cross-vendor opinion."
        )
    ]


def test_without_task_id_reviews_every_done_unreviewed_task(cli, store, fake_clis):
    fake_clis.script("gemini", [{"text": verdict("approve")}])
    res = cli("review", "--auto")
    assert res.code == 0
    assert [r.task for r in store.load().reviews] == ["1"]
    res = cli("review", "--auto")
    assert res.code == 0 and "Nothing to review" in res.out


def test_a_pending_task_cannot_be_reviewed(cli, store, fake_clis):
    res = cli("review", "2")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "Task 2 is pending" in res.err and "maestro run 2" in res.err
    assert cli("review", "9").code == 1


RUN_PLAN = "".join(PLAN.splitlines(keepends=True)[:5])  # the goal and Task 1 only


def test_run_with_review_revises_through_the_engine(cli, project, fake_clis):
    assert cli("plan", "--from", "-", "--yes", stdin=RUN_PLAN).code == 0
    done = submission("count_words returns the number of words", "src/wc.py")
    fake_clis.script(
        "codex",
        [
            {"text": done, "write": {"path": "src/wc.py", "content": FIRST}},
            {"text": done, "write": {"path": "src/wc.py", "content": FIXED}},
        ],
    )
    fake_clis.script(
        "gemini",
        [
            {"text": verdict("request-changes", "major: count_words has no type hints")},
            {"text": verdict("approve")},
        ],
    )
    res = cli("run", "--review")
    assert res.code == 0, res.out + res.err
    assert len(fake_clis.runs("codex")) == 2 and len(fake_clis.runs("gemini")) == 2
    assert "count_words has no type hints" in prompt_of(fake_clis.runs("codex")[1])
    plan = PlanStore(ProjectPaths(project)).load()
    assert [(r.round, r.outcome) for r in plan.reviews] == [(1, "revising"), (2, "accepted")]
    assert (plan.task("1").status, plan.task("1").review) == ("done", "approved")
    assert (project / "src" / "wc.py").read_text(encoding="utf-8") == FIXED
    # Each review round is the run's own dispatch: its session's parent is the run's.
    listed = json.loads(cli("session", "list", "--json").out)["data"]["sessions"]
    rounds = [s for s in listed if s["id"].startswith("review-t1-")]
    runs = {s["id"] for s in listed if s["id"].startswith("run-")}
    assert len(rounds) == 2 and len(runs) == 1
    assert {s["parent_session_id"] for s in rounds} == runs


def test_run_with_review_and_no_reviewer_blocks_instead_of_failing(cli, project, fake_clis):
    for name in ("claude", "gemini", "codex"):
        fake_clis.uninstall(name)
    assert (
        cli("plan", "--from", "-", "--yes", stdin=RUN_PLAN.replace("tool: codex", "tool: sim")).code
        == 0
    )
    res = cli("run", "--review")
    assert res.code == 2, res.out + res.err
    task = PlanStore(ProjectPaths(project)).load().task("1")
    assert (task.status, task.review) == ("blocked", "needs-human")
    assert "not reviewed: no spoke CLI is installed to act as the reviewer" in task.result


def test_each_review_round_is_a_session_of_the_task(cli, store, fake_clis):
    fake_clis.script("gemini", [{"text": verdict("approve", "none")}])
    assert cli("review", "1", "--auto").code == 0
    listed = json.loads(cli("session", "list", "--json").out)["data"]["sessions"]
    (session,) = [s for s in listed if s["id"].startswith("review-t1-")]
    (call,) = fake_clis.runs("gemini")
    assert (session["mode"], session["status"], session["task_ids"], session["cli"]) == (
        "worker",
        "completed",
        ["1"],
        "gemini",
    )
    assert call["env"]["MAESTRO_SESSION_ID"] == session["id"]
    # The sandbox's pid (the fake's own means nothing outside its pid namespace).
    assert call["sandboxed"] and session["process"]["pid"] != call["pid"]
    assert session["tier"] == "read-only"
    assert session["directive"]["subject"] == "Review Task 1: Count words in a file"


def test_a_reviewers_spend_counts_against_the_runs_cap_and_a_revision_waits_for_it(
    cli, project, fake_clis
):
    assert cli("plan", "--from", "-", "--yes", stdin=RUN_PLAN).code == 0
    done = submission("count_words returns the number of words", "src/wc.py")
    fake_clis.script(
        "codex",
        [
            {
                "text": done,
                "write": {"path": "src/wc.py", "content": FIRST},
                "usage": {"input": 900, "output": 100},
            }
        ],
    )
    fake_clis.script(
        "gemini",
        [
            {
                "text": verdict("request-changes", "major: count_words has no type hints"),
                "usage": {"input": 900, "output": 100},
            }
        ],
    )
    res = cli("run", "--review", "--budget-tokens", "1500")
    assert res.code == 2, res.out + res.err
    # The author's 1,000 tokens and the reviewer's 1,000: the cap reached before the
    # revision, which does not start.
    assert "run token budget reached: 2,000 of 1,500 tokens used" in res.out
    assert len(fake_clis.runs("codex")) == 1 and len(fake_clis.runs("gemini")) == 1
    assert PlanStore(ProjectPaths(project)).load().task("1").status == "pending"


def test_a_reviewed_attempt_is_tidied_before_its_review_starts(
    cli, project, fake_clis, monkeypatch
):
    """Its dependents wait for the review anyway: the attempt's session has ended and its
    worktree is gone when the reviewer starts, not minutes later."""
    from maestro.bus.sessions import SessionStore
    from maestro.engine.dispatch import Dispatch

    seen: list[tuple[str, str]] = []
    run = Dispatch.run

    def watched(self, spoke, request, **kwargs):
        if self.kind.startswith("review"):
            seen.extend((s.id, s.status) for s in SessionStore(self.paths).of_task("1"))
            worktrees = project / ".ai" / "maestro" / "worktrees"
            seen.extend(("worktree", p.name) for p in worktrees.glob("*-task-1-*"))
        return run(self, spoke, request, **kwargs)

    monkeypatch.setattr(Dispatch, "run", watched)
    assert cli("plan", "--from", "-", "--yes", stdin=RUN_PLAN).code == 0
    done = submission("count_words returns the number of words", "src/wc.py")
    fake_clis.script("codex", [{"text": done, "write": {"path": "src/wc.py", "content": FIXED}}])
    fake_clis.script("gemini", [{"text": verdict("approve")}])
    res = cli("run", "--review")
    assert res.code == 0, res.out + res.err
    attempts = [(sid, status) for sid, status in seen if sid.startswith("t1-")]
    assert attempts and all(status == "completed" for _, status in attempts), seen
    assert not [name for kind, name in seen if kind == "worktree"], seen

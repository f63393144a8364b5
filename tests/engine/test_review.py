"""`maestro review` pieces: the verdict block, the round policy, the task's diff (the flow
itself is tested end to end in tests/cli/test_review.py)."""

from __future__ import annotations

import subprocess

import pytest

from maestro.review.diff import clip, diff_sha, task_diff
from maestro.review.rounds import current_cycle, decide, same_finding
from maestro.review.verdict import FORMAT_SPEC, parse_review
from maestro.state.model import Finding, Receipt, Review, Task

# ---- review verdict block -------------------------------------------------------------


def block(body: str, before: str = "Looks mostly right.\n\n", after: str = "") -> str:
    return f"{before}```maestro-review\n{body}```\n{after}"


def test_review_block_request_changes_with_findings():
    parsed = parse_review(
        block(
            "verdict: Request Changes\n- major: src/a.py:3 never closes the file\n"
            "  and leaks a descriptor\n- note: naming\n"
        ),
        task_id="2",
    )
    assert parsed.ok and parsed.verdict == "request-changes"
    assert [(f.severity, f.text, f.task) for f in parsed.findings] == [
        ("major", "src/a.py:3 never closes the file and leaks a descriptor", "2"),
        ("note", "naming", "2"),
    ]


def test_review_block_approve_none():
    parsed = parse_review(block("verdict: approve\nfindings:\n- none\n"))
    assert parsed.ok and parsed.verdict == "approve" and parsed.findings == []


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("I approve this change.", "no ```maestro-review block"),
        (block("verdict: approve\n", after="\nThanks!\n"), "text follows"),
        (block("approve\n"), "must be 'verdict: ...'"),
        (block("verdict: lgtm\n"), "not one of"),
        (block("verdict: flag\n"), "needs at least one finding"),
        (block("verdict: approve\n- critical: data loss\n"), "contradicts itself"),
        (block("verdict: request-changes\n- blocker: x\n"), "severity 'blocker'"),
        (block("verdict: request-changes\n- major: x\nplease fix\n"), "is not a finding"),
        (block("verdict: flag\n- none\n- major: x\n"), "'- none' and also"),
        ("", "empty"),
    ],
)
def test_review_block_format_failures(answer, problem):
    parsed = parse_review(answer)
    assert not parsed.ok and parsed.verdict is None
    assert any(problem in p for p in parsed.problems), parsed.problems


def test_review_only_the_final_block_counts():
    answer = (
        block("verdict: approve\n")
        + "\n"
        + block("verdict: flag\n- critical: secrets in the log\n", before="")
    )
    parsed = parse_review(answer)
    assert parsed.verdict == "flag"


def test_format_spec_example_is_itself_described_fence():
    assert "```maestro-review" in FORMAT_SPEC and "verdict:" in FORMAT_SPEC


# ---- round policy ---------------------------------------------------------------------

MAJOR = Finding("src/a.py never closes the file", severity="major")
MINOR = Finding("rename x", severity="minor")


def test_round_one_request_changes_revises_and_flag_blocks():
    assert (
        decide("request-changes", [MAJOR], round_no=1, max_rounds=3, earlier=[]).outcome
        == "revising"
    )
    assert decide("flag", [MAJOR], round_no=1, max_rounds=3, earlier=[]).outcome == "blocked"
    assert decide("approve", [MINOR], round_no=1, max_rounds=3, earlier=[]).outcome == "accepted"


def test_later_round_blocks_only_on_new_blocking_findings():
    rephrased = Finding("src/a.py never closes its file", severity="critical")
    repeat = decide("request-changes", [rephrased], round_no=2, max_rounds=3, earlier=[MAJOR])
    assert repeat.outcome == "needs-human" and "repeats 1 earlier" in repeat.reason
    nitpick = decide("request-changes", [MINOR], round_no=2, max_rounds=3, earlier=[MAJOR])
    assert nitpick.outcome == "accepted"
    fresh = Finding("the token is logged in clear text", severity="major")
    new = decide("request-changes", [fresh], round_no=2, max_rounds=3, earlier=[MAJOR])
    assert new.outcome == "revising"
    flagged = decide("flag", [fresh], round_no=2, max_rounds=3, earlier=[MAJOR])
    assert flagged.outcome == "blocked"


def test_cap_ends_in_needs_human():
    fresh = Finding("a third, unrelated problem in b.py", severity="major")
    assert (
        decide("request-changes", [fresh], round_no=3, max_rounds=3, earlier=[MAJOR]).outcome
        == "needs-human"
    )
    assert decide(None, [], round_no=3, max_rounds=3, earlier=[]).outcome == "needs-human"
    assert decide(None, [], round_no=1, max_rounds=3, earlier=[]).outcome == "format-failure"


def test_same_finding_is_about_text_not_severity():
    assert same_finding(
        Finding("Missing test for b()", severity="minor"),
        Finding("missing test for b().", severity="major"),
    )
    assert not same_finding(Finding("missing test for b()"), Finding("SQL injection in query()"))


def test_current_cycle_starts_after_last_terminal_outcome():
    def rev(n, task, outcome):
        return Review(
            id=f"R{n}",
            task=task,
            reviewer="codex",
            round=n,
            time="t",
            verdict="approve",
            outcome=outcome,
        )

    reviews = [
        rev(1, "1", "revising"),
        rev(2, "1", "accepted"),
        rev(3, "2", "revising"),
        rev(4, "1", "revising"),
    ]
    assert [r.id for r in current_cycle(reviews, "1")] == ["R4"]
    assert [r.id for r in current_cycle(reviews, "2")] == ["R3"]
    assert current_cycle(reviews, "3") == []


# ---- the task's diff ----------------------------------------------------------------------


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_diff_covers_changed_and_new_task_files_only(project):
    (project / "a.py").write_text("one\n", encoding="utf-8")
    (project / "other.py").write_text("x\n", encoding="utf-8")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "start")
    (project / "a.py").write_text("one\ntwo\n", encoding="utf-8")
    (project / "other.py").write_text("changed by someone else\n", encoding="utf-8")
    (project / "b.py").write_text("new file\n", encoding="utf-8")
    task = Task("1", "t", files=["a.py"], receipt=Receipt(files_changed=["b.py"]))
    text = task_diff(project, task)
    assert "+two" in text and "+new file" in text and "b/b.py" in text
    assert "other.py" not in text
    assert diff_sha(text) == diff_sha(task_diff(project, task))  # stable fingerprint
    (project / "a.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    assert diff_sha(task_diff(project, task)) != diff_sha(text)


def test_diff_is_taken_from_the_commit_the_task_ran_on(project):
    (project / "a.py").write_text("one\n", encoding="utf-8")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "start")
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=True
    ).stdout.strip()
    (project / "a.py").write_text("one\ntwo\n", encoding="utf-8")
    _git(project, "commit", "-q", "-am", "a person committed the task's work")
    task = Task("1", "t", files=["a.py"], receipt=Receipt(commit=base))
    assert "+two" in task_diff(project, task)


def test_diff_without_commits_or_without_git(project, tmp_path):
    (project / "a.py").write_text("fresh\n", encoding="utf-8")
    task = Task("1", "t", files=["a.py"])
    assert "+fresh" in task_diff(project, task)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("no git here\n", encoding="utf-8")
    assert "+no git here" in task_diff(plain, task)
    assert task_diff(plain, Task("2", "t")) == ""


def test_huge_diffs_are_clipped_with_a_note():
    text = clip("x" * 100, limit=10)
    assert text.startswith("x" * 10) and "diff cut at 10 of 100 characters" in text

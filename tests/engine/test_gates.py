from types import SimpleNamespace

import pytest

from maestro.engine import gates
from maestro.engine.worktree import Scope


def parsed(status="success", verification=(), problems=(), issues="None"):
    return SimpleNamespace(
        problems=list(problems),
        submission=SimpleNamespace(status=status, verification=list(verification), issues=issues),
    )


def test_format_gate():
    assert gates.format_gate(parsed()).level == "pass"
    result = gates.format_gate(parsed(problems=["no Result Submission block"]))
    assert result.failed and "Result Submission" in result.detail


CRITERIA = ["slugify lowercases and joins words with hyphens", "tests pass with pytest"]


def test_criteria_all_verified_in_other_words():
    ver = [
        (True, "slugify lowercases input and joins the words with hyphens - checked by hand"),
        (True, "Tests pass: ran pytest, 4 passed"),
    ]
    assert gates.criteria_gate(CRITERIA, parsed(verification=ver), "normal").level == "pass"


@pytest.mark.parametrize(
    "strictness,level", [("strict", "fail"), ("normal", "warn"), ("lenient", "warn")]
)
def test_unverified_criterion_per_strictness(strictness, level):
    ver = [
        (True, "slugify lowercases and joins words with hyphens"),
        (False, "tests pass with pytest - no pytest here"),
    ]
    result = gates.criteria_gate(CRITERIA, parsed(verification=ver), strictness)
    assert result.level == level and "not verified: tests pass with pytest" in result.detail


def test_missing_criterion_is_named():
    result = gates.criteria_gate(
        CRITERIA,
        parsed(verification=[(True, "slugify lowercases and joins words with hyphens")]),
        "strict",
    )
    assert result.failed and "not reported: tests pass with pytest" in result.detail


def test_spoke_reporting_failure_fails_the_gate_at_every_level():
    result = gates.criteria_gate(
        CRITERIA, parsed(status="blocked", issues="need the API key"), "lenient"
    )
    assert result.failed and "need the API key" in result.detail


@pytest.mark.parametrize(
    "strictness,level", [("strict", "fail"), ("normal", "fail"), ("lenient", "warn")]
)
def test_scope_gate_per_strictness(strictness, level):
    result = gates.scope_gate(Scope(["README.md"]), strictness)
    assert result.level == level and result.paths == ["README.md"]


def test_scope_gate_ambiguous_warns_and_unchecked_skips():
    assert gates.scope_gate(Scope([], ["x"]), "strict").level == "warn"
    assert gates.scope_gate(Scope([], checked=False), "strict").level == "skipped"
    assert gates.scope_gate(Scope([]), "strict").level == "pass"


def test_integration_gate():
    assert gates.integration_gate(None, None).level == "skipped"
    assert gates.integration_gate("pytest -q", 0).level == "pass"
    bad = gates.integration_gate("pytest -q", 1, output="1 failed")
    assert bad.failed and "exited 1" in bad.detail and "1 failed" in bad.detail
    assert gates.integration_gate("sleep 9", None, timed_out=True).failed

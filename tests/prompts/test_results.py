from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from maestro.prompts.results import parse_result

SUBMISSION = """## Status
success

## Summary
Added the limiter; requests over the limit now get 429.

## Changes
- /work/project/src/limits/limiter.py: created, token bucket per key
- /work/project/src/api/middleware.py: modified, calls the limiter

## Verification
- [x] Requests over the limit get HTTP 429: tests/limits/test_http.py passes
- [ ] Limits are read from settings: settings key not yet wired

## Issues
None
"""

REPORT = """### Task Report
- Status: success
- Objective Achieved: the limiter exists and the middleware uses it
- Files Created: /work/project/src/limits/limiter.py (the limiter)
- Files Modified:
  - /work/project/src/api/middleware.py: calls `allow()`
- Files Deleted: none
- Decisions Made: bucket size 10
- Validation: pass
- Validation Output:
  ```
  4 passed in 0.1s
  ```
- Errors: none
- Scope Deviations: none

### Downstream Context
- Key Interfaces Introduced: `RateLimiter.allow(key: str) -> bool` in src/limits/limiter.py
- Patterns Established: none
- Integration Points: middleware.py line 12
- Assumptions: x < y & keys are ASCII!
- Warnings: none
"""

ANSWER = SUBMISSION + "\n" + REPORT


def test_well_formed_answer_parses_every_field():
    result = parse_result(ANSWER)
    assert result.problems == [] and result.ok
    sub = result.submission
    assert sub.status == "success"
    assert sub.summary.startswith("Added the limiter")
    assert sub.changes == [
        "/work/project/src/limits/limiter.py: created, token bucket per key",
        "/work/project/src/api/middleware.py: modified, calls the limiter",
    ]
    assert sub.verification == [
        (True, "Requests over the limit get HTTP 429: tests/limits/test_http.py passes"),
        (False, "Limits are read from settings: settings key not yet wired"),
    ]
    assert sub.issues == ""
    report = result.handoff.task_report
    assert report["Status"] == "success" and report["Validation"] == "pass"
    assert report["Files Modified"] == "- /work/project/src/api/middleware.py: calls `allow()`"
    assert report["Validation Output"] == "```\n4 passed in 0.1s\n```"
    assert "- Assumptions: x < y & keys are ASCII!" in result.handoff.downstream_context
    assert result.handoff.downstream_context.startswith(
        "- Key Interfaces Introduced: `RateLimiter.allow(key: str) -> bool`"
    )


def test_prose_and_fences_around_the_blocks_are_tolerated():
    wrapped = (
        "I looked at the code first.\n\nHere is my report:\n\n```markdown\n"
        + SUBMISSION
        + "```\n\nAnd the handoff:\n\n````md\n"
        + REPORT
        + "````\n\nLet me know if anything else is needed!\n"
    )
    result = parse_result(wrapped)
    assert result.problems == []
    assert "- Warnings: none" in result.handoff.downstream_context
    assert "Let me know" not in result.handoff.downstream_context


def test_trailing_sign_off_is_not_part_of_downstream_context():
    result = parse_result(ANSWER + "\nThanks, that was fun.\n")
    assert "Thanks" not in result.handoff.downstream_context


def test_an_echoed_template_is_replaced_by_the_real_answer():
    echo = (
        "## Status\nsuccess | partial | failed | blocked\n\n## Summary\n[one or two sentences]\n\n"
    )
    result = parse_result(echo + ANSWER)
    assert result.problems == []
    assert result.submission.summary.startswith("Added the limiter")


def test_bold_keys_and_failed_status_spelling_are_accepted():
    answer = ANSWER.replace("## Status\nsuccess", "## Status\n**failed**").replace(
        "- Status: success", "- **Status:** failed"
    )
    result = parse_result(answer)
    assert result.problems == []
    assert (result.submission.status, result.handoff.status) == ("failed", "failure")


def test_empty_answer():
    assert parse_result("  \n").problems == ["the answer is empty"]


def test_missing_blocks_are_named():
    assert parse_result("All done, it works.").problems == [
        "no Result Submission found (sections ## Status, ## Summary, ## Changes, ## Verification, ## Issues)",
        "no Handoff Report found (sections ### Task Report and ### Downstream Context)",
    ]
    result = parse_result(SUBMISSION.replace("## Changes\n", "## Files\n"))
    assert result.problems == [
        "the Result Submission has no ## Changes section",
        "no Handoff Report found (sections ### Task Report and ### Downstream Context)",
    ]
    only_report = parse_result(SUBMISSION + "\n### Task Report\n- Status: success\n")
    assert "the Handoff Report has no ### Downstream Context" in only_report.problems
    assert any(
        p.startswith("the Task Report lacks: Objective Achieved, Files Created")
        for p in only_report.problems
    )


def test_malformed_values_are_named():
    answer = (
        ANSWER.replace("## Status\nsuccess", "## Status\ndone and dusted")
        .replace("- [x] Requests", "- Requests")
        .replace("- Validation: pass", "- Validation: pass | fail | skipped")
        .replace(
            "## Summary\nAdded the limiter; requests over the limit now get 429.",
            "## Summary\n[one or two sentences]",
        )
    )
    problems = parse_result(answer).problems
    assert (
        "## Status is 'done and dusted'; expected one of success, partial, failed, blocked"
        in problems
    )
    assert "## Summary is empty or still the template placeholder" in problems
    assert any(p.startswith("## Verification item is not a checkbox") for p in problems)
    assert any(p.startswith("Task Report Validation is 'pass | fail | skipped'") for p in problems)


def test_statuses_must_agree():
    answer = ANSWER.replace("- Status: success", "- Status: failure")
    assert parse_result(answer).problems == [
        "## Status says success but the Task Report says failure"
    ]


def test_none_sections_are_empty_not_missing():
    answer = ANSWER.replace(
        "## Changes\n- /work/project/src/limits/limiter.py: created, token bucket per key\n"
        "- /work/project/src/api/middleware.py: modified, calls the limiter\n",
        "## Changes\n- none\n",
    )
    result = parse_result(
        answer.replace("## Issues\nNone", "## Issues\nThe cache is cold on start.")
    )
    assert result.problems == []
    assert result.submission.changes == []
    assert result.submission.issues == "The cache is cold on start."


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            list("#-*[]x `\n:|abc>_") + ["## Status\n", "### Task Report\n", "```\n", "- [x] "]
        )
    ).map("".join)
)
def test_parser_never_crashes_and_always_explains(text):
    result = parse_result(text)
    assert isinstance(result.problems, list)
    if result.submission is None:
        assert result.problems


def test_identifiers_with_underscores_survive_parsing():
    text = """## Status
success
## Summary
Added `__init__` and __init__ to pkg/__init__.py; a_b_c * x * y
## Changes
- created pkg/__init__.py
## Verification
- [x] imports work
## Issues
None

### Task Report
- **Status:** success
- Objective Achieved: __init__ exports the API

### Downstream Context
- Key Interfaces Introduced: pkg/__init__.py exports __all__ and `_private`
"""
    result = parse_result(text)
    assert (
        result.submission.summary
        == "Added `__init__` and __init__ to pkg/__init__.py; a_b_c * x * y"
    )
    assert result.submission.changes == ["created pkg/__init__.py"]
    assert result.handoff.task_report["Objective Achieved"] == "__init__ exports the API"
    assert "pkg/__init__.py exports __all__ and `_private`" in result.handoff.downstream_context

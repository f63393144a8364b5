"""`maestro challenge`: parsing answers, choosing challengers, dispatching, recording."""

from __future__ import annotations

import pytest

from maestro.engine.challenge.answer import category_of, parse_challenge, split_task

KNOWN = {"1", "2", "3", "3.1"}

FENCED_ANSWER = """\
I read the plan and the files.

```maestro-challenge
## Assumption issues
- Task 2: the plan assumes JWT but `src/auth.py` uses session cookies
  - the cookie name is `sid`
## Missing dependencies
- None
## Scope concerns
- Task 3 is too large, it should be split
## Alternative approaches
- The existing helper in `utils.py` could be extended instead
```
"""


def test_challenge_fenced_answer_in_four_categories():
    parsed = parse_challenge(FENCED_ANSWER, KNOWN)
    assert parsed.parsed
    assert list(parsed.findings) == ["assumptions", "scope", "alternatives"]
    first = parsed.findings["assumptions"][0]
    assert first.task == "2"
    assert first.text == "the plan assumes JWT but `src/auth.py` uses session cookies (the cookie name is `sid`)"
    assert parsed.findings["scope"][0].task == "3"
    assert parsed.findings["scope"][0].text == "Task 3 is too large, it should be split"
    assert parsed.findings["alternatives"][0].task is None
    assert parsed.count() == 3


def test_challenge_loose_headings_bold_and_colon_forms():
    text = "**1. Assumptions**\n\n- [Task 1] uses Python 3.12 features\n\nScope concerns:\n\n* (T3) too broad\n"
    parsed = parse_challenge(text, KNOWN)
    assert parsed.parsed
    assert [(f.task, f.text) for f in parsed.findings["assumptions"]] == [("1", "uses Python 3.12 features")]
    assert [(f.task, f.text) for f in parsed.findings["scope"]] == [("3", "too broad")]


def test_challenge_without_any_category_is_unparsed():
    parsed = parse_challenge("The plan looks fine to me. Task 2 might be slow.", KNOWN)
    assert not parsed.parsed
    assert parsed.findings == {}


def test_challenge_with_headings_but_no_findings_is_parsed_and_empty():
    text = "## Assumption issues\nNone.\n## Missing dependencies\n- none\n## Scope concerns\nNo issues found\n"
    parsed = parse_challenge(text, KNOWN)
    assert parsed.parsed and parsed.findings == {}


@pytest.mark.parametrize(
    ("heading", "key"),
    [
        ("Assumption issues", "assumptions"),
        ("2) Missing Dependencies", "missing_dependencies"),
        ("Scope", "scope"),
        ("Alternative approaches", "alternatives"),
        ("Summary", None),
        ("This sentence mentions scope but it is long prose", None),
    ],
)
def test_category_headings(heading, key):
    assert category_of(heading) == key


@pytest.mark.parametrize(
    ("text", "task", "rest"),
    [
        ("Task 2: x", "2", "x"),
        ("[Task 2] y", "2", "y"),
        ("(T2) z", "2", "z"),
        ("T2 - w", "2", "w"),
        ("Task 3.1: q", "3.1", "q"),
        ("Task 3 is too large", "3", "Task 3 is too large"),
        ("tasks 1 and 2 overlap", "1", "tasks 1 and 2 overlap"),
        ("Task 9: not in the plan", None, "Task 9: not in the plan"),
    ],
)
def test_task_references(text, task, rest):
    assert split_task(text, KNOWN) == (task, rest)

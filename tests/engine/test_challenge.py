"""`maestro challenge` pieces: parsing answers, choosing the challenger, the recon context
(the command is tested end to end in tests/cli/test_challenge.py)."""

from __future__ import annotations

import pytest

from maestro.challenge.answer import category_of, parse_challenge, split_task
from maestro.challenge.recon import compact_tree, recon
from maestro.challenge.vendors import choose
from maestro.errors import SpokeError
from maestro.state.model import Plan, Task

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
    assert (
        first.text
        == "the plan assumes JWT but `src/auth.py` uses session cookies (the cookie name is `sid`)"
    )
    assert parsed.findings["scope"][0].task == "3"
    assert parsed.findings["scope"][0].text == "Task 3 is too large, it should be split"
    assert parsed.findings["alternatives"][0].task is None
    assert parsed.count() == 3


def test_challenge_loose_headings_bold_and_colon_forms():
    text = "**1. Assumptions**\n\n- [Task 1] uses Python 3.12 features\n\nScope concerns:\n\n* (T3) too broad\n"
    parsed = parse_challenge(text, KNOWN)
    assert parsed.parsed
    assert [(f.task, f.text) for f in parsed.findings["assumptions"]] == [
        ("1", "uses Python 3.12 features")
    ]
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


# ---- choosing the challenger ------------------------------------------------------------


@pytest.mark.parametrize(
    ("hub", "installed", "expected"),
    [
        ("claude", {"claude", "gemini", "codex"}, ["gemini"]),
        ("gemini", {"claude", "gemini", "codex"}, ["codex"]),
        ("codex", {"claude", "gemini", "codex"}, ["gemini"]),
        ("claude", {"claude", "codex"}, ["codex"]),  # the next one when the first is missing
        ("codex", {"codex", "claude", "sim"}, ["claude"]),
        (None, {"codex", "claude"}, ["codex"]),
    ],
)
def test_default_challenger_is_another_vendor(hub, installed, expected):
    choice = choose(hub, installed, role="challenger")
    assert choice.tools == expected and choice.notes == []


def test_every_other_vendor_with_all():
    assert choose("claude", {"claude", "gemini", "codex"}, role="challenger", every=True).tools == [
        "gemini",
        "codex",
    ]
    assert choose("gemini", {"gemini"}, role="challenger", every=True).tools == ["gemini"]


def test_same_vendor_only_when_nothing_else_is_installed_and_says_so():
    choice = choose("claude", {"claude", "sim"}, role="reviewer")
    assert choice.tools == ["claude"]
    assert (
        "only claude is installed" in choice.notes[0]
        and "npm install -g @google/gemini-cli" in choice.notes[0]
    )


def test_named_tool_must_be_installed_and_none_at_all_is_an_error():
    with pytest.raises(SpokeError, match="codex CLI is not installed") as caught:
        choose("claude", {"claude", "gemini"}, role="challenger", tool="codex")
    assert (
        "npm install -g @openai/codex" in caught.value.fix
        and "claude, gemini installed" in caught.value.fix
    )
    assert (
        choose("claude", {"claude"}, role="challenger", tool="claude")
        .notes[0]
        .startswith("claude is the same vendor")
    )
    with pytest.raises(SpokeError, match="no spoke CLI is installed"):
        choose("claude", {"sim"}, role="challenger")


def test_the_sim_spoke_cannot_challenge_or_review():
    for role in ("challenger", "reviewer"):
        with pytest.raises(SpokeError, match="only simulates task dispatches") as caught:
            choose("claude", {"claude", "sim"}, role=role, tool="sim")
        assert "--tool (claude, gemini, codex)" in caught.value.fix


# ---- recon ------------------------------------------------------------------------------


def test_compact_tree_folds_large_folders():
    paths = ["README.md", *(f"src/m{i:02d}.py" for i in range(20)), "tests/test_a.py"]
    tree = compact_tree(paths).splitlines()
    assert tree[0] == "./ README.md"
    assert tree[1].startswith("src/ (20 files: m00.py, m01.py,") and tree[1].endswith(", ...)")
    assert tree[2] == "tests/ test_a.py"


def test_recon_shows_key_files_and_stays_within_its_token_cap(project, monkeypatch):
    from maestro.challenge import recon as recon_module
    from maestro.tokens import count_tokens

    (project / "README.md").write_text("# Project\n" + "word " * 50 + "\n", encoding="utf-8")
    (project / "big.txt").write_text("token " * 20000, encoding="utf-8")
    (project / "ignored.log").write_text("x", encoding="utf-8")
    (project / ".gitignore").write_text("*.log\n", encoding="utf-8")
    plan = Plan(goal="g", tasks=[Task("1", "t", files=["big.txt", "src/new.py"])])
    monkeypatch.setattr(recon_module, "FILE_MAX_LINES", 100_000)
    text = recon(project, plan)
    assert "`README.md`:\n```\n# Project" in text
    assert "ignored.log" not in text  # git's view: ignored files are not listed
    assert "Files the plan names that do not exist yet: src/new.py" in text
    assert "Not shown (read them yourself if they matter): big.txt" in text
    assert count_tokens(text) <= recon_module.TOKEN_CAP

"""parse/render of .ai/MAESTRO.md: round trips, hand edits kept, invalid content refused."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from maestro.errors import PlanError
from maestro.state.model import (
    Challenge,
    Finding,
    LogEntry,
    Plan,
    Receipt,
    Review,
    Source,
    Task,
    Usage,
)
from maestro.state.planfile import parse, parse_bytes, render

from .strategies import plans, tasks

DOC = Path(__file__).resolve().parents[2] / "docs" / "plan-file.md"


def full_plan() -> Plan:
    return Plan(
        goal="Add login.\n\nKeep the API stable.",
        tasks=[
            Task(
                "1",
                "Design",
                status="done",
                specialist="research",
                agent="architect",
                tool="gemini",
                files=["docs/auth.md", "we`ird, name.md"],
                criteria=["names the store", "two\n  lines"],
                validation="test -f docs/auth.md",
                risk="low",
                result="Wrote it.\n\n- with a list",
                attempts=2,
                usage=Usage(27316, 1200, 8000),
                cost=1e-05,
                cost_estimated=True,
                started="2026-11-21T12:00:05Z",
                finished="2026-11-21T12:01:10Z",
                session="s-1",
                pid=4242,
                run_id="r1",
                receipt=Receipt("1 file changed", ["docs/auth.md"], "make", 0, "abc", "f00"),
                review="approved",
                downstream_context="See `docs/auth.md`.\n  Indented.",
            ),
            Task("2", "Build", depends=["1"]),
            Task("2.1", "Receipt with nothing in it", receipt=Receipt()),
        ],
        challenges=[
            Challenge(
                "c1",
                "codex",
                "2026-11-21T11:58:00Z",
                parsed=False,
                findings={
                    "scope": [],
                    "assumptions": [Finding("Task 9: text", "1"), Finding("[x] y")],
                },
                usage=Usage(1, 2),
                cost=0.5,
                raw="```\n## not a section\n\n",
            )
        ],
        reviews=[
            Review(
                "R1",
                "1",
                "claude",
                1,
                "2026-11-21T12:01:30Z",
                None,
                [Finding("\\escaped", None, "major")],
                outcome="format-failure",
            )
        ],
        log=[
            LogEntry("12:00", "1", "a|b\\", "dispatch", "done", 1234, "$0.1"),
            LogEntry("", "", "", "", ""),
        ],
        source=Source("claude", "2026-11-21 11:55 UTC"),
    )


def one_line_diff(before: str, after: str) -> list[str]:
    changed = [
        line
        for line in difflib.ndiff(before.splitlines(True), after.splitlines(True))
        if line[:1] in "+-"
    ]
    return changed


# --- round trips ------------------------------------------------------------------------


def test_round_trip_of_every_field_and_canonical_text_is_stable():
    plan = full_plan()
    text = render(plan)
    assert parse(text) == plan
    assert render(parse(text)) == text
    assert text.startswith("<!-- maestro:format 1 -->\n# Maestro Orchestration\n\n## Goal\n")


def test_the_example_in_the_format_page_is_canonical():
    example = re.search(r"```markdown\n(.*?)```\n", DOC.read_text(), re.DOTALL).group(1)
    plan = parse(example)
    assert render(plan) == example
    plan.layout = None  # canonical rendering, from content alone
    assert render(plan) == example
    assert [t.status for t in plan.tasks] == ["done", "running", "pending"]


def test_canonical_rendering_leaves_out_unset_run_fields():
    text = render(Plan(goal="g", tasks=[Task("1", "t")]))
    assert "- **Status:** pending\n" in text
    for label in ("Attempts", "Tokens", "Cost", "Started", "PID", "Receipt", "Depends"):
        assert f"**{label}:**" not in text


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(plans())
# A block quote that breaks into a paragraph and is cut short by a list item: mistune
# inserts its token before the paragraph's, which once left it without a position.
@example(Plan(goal="0\n>0\n-", tasks=[]))
def test_round_trip_for_generated_plans(plan):
    try:
        text = render(plan)
    except PlanError as exc:
        # Only goals that would break their section are refused (a `## x` line, a fence).
        assert "Goal" in str(exc)
        return
    assert parse(text) == plan
    assert render(parse(text)) == text


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(plans(max_tasks=4), st.data())
def test_changed_fields_written_through_the_layout_read_back(plan, data):
    try:
        text = render(plan)
    except PlanError:
        return
    parsed = parse(text)
    ids = [t.id for t in parsed.tasks]
    for index, task in enumerate(parsed.tasks):
        other = data.draw(tasks(task.id, ids[:index]))
        for name in data.draw(
            st.lists(
                st.sampled_from(
                    [
                        "status",
                        "agent",
                        "depends",
                        "criteria",
                        "result",
                        "usage",
                        "cost",
                        "cost_estimated",
                        "pid",
                        "receipt",
                        "downstream_context",
                        "validation",
                        "files",
                        "title",
                    ]
                ),
                unique=True,
            )
        ):
            setattr(task, name, getattr(other, name))
        if task.cost is None:
            task.cost_estimated = False
    text2 = render(parsed)
    assert parse(text2) == parsed


# --- hand edits ---------------------------------------------------------------------------

HAND = """<!-- maestro:format 1 -->
# Maestro Orchestration

A paragraph a person added at the top.

## Goal
Ship the login.

## Tasks

Ordering notes before the first task.

### Task 1: First
- **Status:** pending
- **Specialist:** code

A note under task 1.

### Task 2: Second
- **Depends:** 1
- **Status:** pending
- Agent: coder
- Owner: bob, who asked for it

## Decisions

We chose SQLite.

## Execution Log

| Time | Task | Tool | Action | Outcome |
|------|------|------|--------|---------|
| 12:00 | 1 | gemini | dispatch | ok |

## Source

claude | 2026-11-21 12:00 UTC
"""


@pytest.mark.parametrize(
    "variant", ["lf", "crlf", "no-final-newline", "crlf-no-final-newline", "bom"]
)
def test_hand_edited_file_renders_byte_identical(variant):
    text = HAND
    if "crlf" in variant:
        text = text.replace("\n", "\r\n")
    if "no-final-newline" in variant:
        text = text.rstrip("\r\n")
    if variant == "bom":
        text = "\ufeff" + text
    plan = parse(text)
    assert render(plan) == text
    assert plan.tasks[1].agent == "coder"  # the field written without bold
    assert plan.tasks[1].depends == ["1"]  # fields in another order


@pytest.mark.parametrize(
    "kept",
    [
        "A paragraph a person added at the top.\n",  # extra paragraph
        "Ordering notes before the first task.\n",
        "A note under task 1.\n",  # a note under a task
        "## Decisions\n\nWe chose SQLite.\n",  # an extra section
        "- Owner: bob, who asked for it\n",  # an unknown list item among the fields
    ],
)
def test_one_field_change_is_a_one_line_diff_and_keeps_the_persons_text(kept):
    plan = parse(HAND)
    plan.tasks[0].status = "running"
    out = render(plan)
    assert kept in out
    assert one_line_diff(HAND, out) == ["- - **Status:** pending\n", "+ - **Status:** running\n"]


def test_change_keeps_crlf_and_the_missing_final_newline():
    text = HAND.replace("\n", "\r\n").rstrip("\r\n")
    plan = parse(text)
    plan.tasks[1].status = "done"
    out = render(plan)
    assert "\n" not in out.replace("\r\n", "")
    assert not out.endswith("\n")
    assert len(one_line_diff(text.replace("\r\n", "\n"), out.replace("\r\n", "\n"))) == 2


def test_field_without_bold_keeps_its_style_when_changed():
    plan = parse(HAND)
    plan.tasks[1].agent = "tester"
    out = render(plan)
    assert "- Agent: tester\n" in out
    assert one_line_diff(HAND, out) == ["- - Agent: coder\n", "+ - Agent: tester\n"]
    text = HAND.replace(
        "- **Status:** pending\n- **Specialist:** code", "- Status: done\n- **Specialist:** code"
    )
    plan = parse(text)
    assert plan.tasks[0].status == "done"
    assert render(plan) == text
    plan.tasks[0].status = "failed"
    assert one_line_diff(text, render(plan)) == ["- - Status: done\n", "+ - Status: failed\n"]


def test_new_fields_go_next_to_their_neighbours_and_cleared_fields_go_away():
    plan = parse(HAND)
    plan.tasks[0].agent = "coder"  # after Specialist
    plan.tasks[0].pid = 99  # at the end of the list
    plan.tasks[0].specialist = None  # removed
    out = render(plan)
    section = out[out.index("### Task 1") : out.index("### Task 2")]
    assert section == (
        "### Task 1: First\n- **Status:** pending\n- **Agent:** coder\n- **PID:** 99\n\n"
        "A note under task 1.\n\n"
    )
    assert parse(out) == plan


def test_a_plan_rendered_again_after_changes_in_place_writes_them():
    """A store keeps the plan it wrote and renders it again after the next edit: what was
    changed in it since, lists changed in place too, is written, and undoing it gives
    the first text back."""
    plan = parse(HAND)
    first = render(plan)
    task = plan.tasks[0]
    task.files.append("src/new.py")
    assert parse(render(plan)).tasks[0].files == task.files
    task.status, task.result = "done", "Did it."
    assert parse(render(plan)).tasks[0].status == "done"
    task.files.pop()
    task.status, task.result = "pending", None
    assert render(plan) == first


def test_new_records_and_log_rows_are_appended_in_their_sections():
    plan = parse(HAND)
    plan.tasks.append(Task("3", "Third", depends=["2"]))
    plan.log.append(LogEntry("12:05", "3", "codex", "dispatch", "ok"))
    plan.reviews.append(Review("R1", "1", "claude", 1, "2026-11-21T12:01:30Z", "approve"))
    out = render(plan)
    assert (
        "- Owner: bob, who asked for it\n\n### Task 3: Third\n- **Status:** pending\n- **Depends:** 2\n\n"
        "## Reviews\n\n### Review R1: Task 1\n"
    ) in out
    assert "| 12:00 | 1 | gemini | dispatch | ok |\n| 12:05 | 3 | codex | dispatch | ok |\n" in out
    assert out.index("## Reviews") < out.index("## Decisions")
    assert parse(out) == plan


@pytest.mark.parametrize(
    "old, new, task, expected",
    [
        # a task holding only a note: the fields go above it, a blank line between
        (
            "- **Status:** pending\n- **Specialist:** code\n\n",
            "",
            0,
            "### Task 1: First\n- **Status:** done\n\nA note under task 1.\n",
        ),
        # a bare heading right above a section: the new list does not run into it
        (
            (
                "### Task 2: Second\n- **Depends:** 1\n- **Status:** pending\n- Agent: coder\n- Owner: bob, who asked "
                "for it\n"
            ),
            "### Task 2: Second\n",
            1,
            "### Task 2: Second\n- **Status:** done\n\n## Decisions\n",
        ),
    ],
)
def test_fields_added_to_a_task_without_any_stay_fields(old, new, task, expected):
    plan = parse(HAND.replace(old, new))
    plan.tasks[task].status = "done"
    out = render(plan)
    assert expected in out
    assert parse(out) == plan


def test_a_task_heading_outside_the_tasks_section_is_an_error():
    text = HAND.replace("## Decisions\n", "## Decisions\n\n### Task 3: Lost\n")
    assert error_for(text) == (
        '.ai/MAESTRO.md:27: "### Task 3: Lost" is outside the `## Tasks` section (line 25 starts another '
        "section). Fix: move the task under `## Tasks`."
    )
    assert error_for(HAND.replace("## Tasks\n", "## Work\n")).startswith(
        '.ai/MAESTRO.md:13: "### Task 1: First" is outside the `## Tasks` section (line 9 starts'
    )


def test_headings_inside_code_blocks_and_comments_are_text():
    text = HAND.replace(
        "A note under task 1.\n",
        "```\n## Goal\n### Task 9: not a task\n```\n\n<!--\n## Tasks\n-->\n",
    )
    plan = parse(text)
    assert [t.id for t in plan.tasks] == ["1", "2"]
    assert render(plan) == text


def test_format_0_file_from_the_design_notes_is_upgraded():
    notes = (
        "# Maestro Orchestration\n\n## Goal\nAdd auth\n\n## Tasks\n\n### Task 1: Implement\n"
        "- **Status:** running\n- **Specialist:** code\n- **Depends:** none\n- **Assigned:** Gemini CLI\n"
        "\n## Execution Log\n| Time | Task | Tool | Action | Outcome |\n|------|------|------|--------|---------|\n"
        "\n## Source\nClaude Code | 2026-01-16 14:30 UTC\n"
    )
    plan = parse(notes)
    assert plan.format_version == 1
    assert plan.tasks[0].tool == "gemini"
    out = render(plan)
    assert out.startswith("<!-- maestro:format 1 -->\n# Maestro Orchestration\n")
    assert "- **Tool:** gemini\n" in out and "Assigned" not in out
    assert parse(out) == plan


# --- invalid content ------------------------------------------------------------------------


def error_for(text: str) -> str:
    with pytest.raises(PlanError) as info:
        parse(text)
    return str(info.value)


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (
            "- **Status:** pending\n- **Specialist:** code",
            "- **Status:** doing\n- **Specialist:** code",
            (
                '.ai/MAESTRO.md:14: Task 1 has unknown status "doing". Fix: use one of pending, running, done, failed, '
                "blocked."
            ),
        ),
        (
            "### Task 2: Second",
            "### Task 1: Second",
            ".ai/MAESTRO.md:19: Task 1 appears twice (the first at line 13). Fix: give each task its own id.",
        ),
        (
            "- **Depends:** 1",
            "- **Depends:** 1, 7",
            (
                ".ai/MAESTRO.md:20: Task 2 depends on Task 7, which is not in the plan. Fix: use one of the task ids (1), "
                "or remove 7 from its Depends."
            ),
        ),
        (
            "- **Depends:** 1",
            "- **Depends:** 2",
            ".ai/MAESTRO.md:20: Task 2 depends on itself. Fix: remove 2 from Task 2's depends.",
        ),
        (
            "- **Specialist:** code",
            "- **Specialist:** code\n- **Depends:** 2",
            (
                ".ai/MAESTRO.md:16: the tasks depend on each other in a cycle: 1 -> 2 -> 1 (each depends on the next). "
                "Fix: remove one of these dependencies so the work can start (1 -> 2 -> 1)."
            ),
        ),
        (
            "- **Specialist:** code",
            "- **Specialist:** code\n- **Tokens:** lots",
            (
                '.ai/MAESTRO.md:16: Task 1 has an unreadable Tokens value "lots". Fix: write Tokens as `12,000 in / 800 '
                "out`, optionally followed by `/ 3,000 cached`."
            ),
        ),
        (
            "- **Specialist:** code",
            "- **Specialist:** code\n- **Status:** done",
            ".ai/MAESTRO.md:16: Task 1 has two Status fields (the first at line 14). Fix: keep one Status line.",
        ),
        (
            "- **Specialist:** code",
            "- **Stauts:** done",
            (
                '.ai/MAESTRO.md:15: Task 1 has an unknown field "stauts". Fix: did you mean Status? '
                "Write `- **Status:** ...`."
            ),
        ),
        (
            "### Task 2: Second",
            "### Task two: Second",
            (
                ".ai/MAESTRO.md:19: Task two has an invalid task id ('two'). Fix: use task ids made of numbers and dots, "
                "e.g. 3 or 3.1."
            ),
        ),
        (
            "### Task 2: Second",
            "### Task 2 Second",
            (
                '.ai/MAESTRO.md:19: "### Task 2 Second" is not a valid task heading. Fix: write it as '
                "`### Task <id>: <title>`, with an id like 3 or 3.1."
            ),
        ),
        (
            "### Task 2: Second",
            "## Task 2: Second",
            (
                '.ai/MAESTRO.md:19: "Task 2: Second" is a level-2 heading. Fix: write task headings with three hashes: '
                "`### Task 2: Second`."
            ),
        ),
        (
            "<!-- maestro:format 1 -->",
            "<!-- maestro:format 2 -->",
            (
                ".ai/MAESTRO.md:1: the file is plan format 2, newer than this Maestro reads (up to 1). Fix: upgrade "
                "Maestro (run installers/install.sh again from an up-to-date clone)."
            ),
        ),
        (
            HAND[HAND.index("## Tasks") :],
            "",
            (
                ".ai/MAESTRO.md: the file has no `## Tasks` section. Fix: add a `## Tasks` section with "
                "`### Task <id>: <title>` headings."
            ),
        ),
        (
            "## Goal\nShip the login.\n",
            "",
            ".ai/MAESTRO.md: the file has no `## Goal` section. Fix: add a `## Goal` section with the goal under it.",
        ),
        (
            "Ship the login.\n",
            "",
            ".ai/MAESTRO.md:6: the Goal section is empty. Fix: write the goal under `## Goal`.",
        ),
        (
            "claude | 2026-11-21 12:00 UTC",
            "claude at noon",
            (
                '.ai/MAESTRO.md:37: the file has an unreadable Source line "claude at noon". Fix: write it as `<hub tool> '
                "| YYYY-MM-DD HH:MM UTC`, e.g. `claude | 2026-11-21 12:00 UTC`."
            ),
        ),
        (
            "| 12:00 | 1 | gemini | dispatch | ok |",
            "| 12:00 | 1 | gemini | ok |",
            (
                ".ai/MAESTRO.md:33: an Execution Log row has 4 cells, the header 5. Fix: give every row one cell per "
                "column; write `\\|` for a | inside a cell."
            ),
        ),
        (
            "## Decisions",
            "## Tasks",
            (
                ".ai/MAESTRO.md:25: the file has a second `## Tasks` section (the first is at line 9). Fix: merge the two "
                "into one section."
            ),
        ),
    ],
)
def test_invalid_content_names_file_line_and_fix(old, new, expected):
    assert old in HAND
    assert error_for(HAND.replace(old, new, 1)) == expected


@pytest.mark.parametrize(
    "old, new, expected",
    [
        # Notes in a fence at the end of the file, left open: the Source section swallows them.
        (
            "claude | 2026-11-21 12:00 UTC\n",
            "claude | 2026-11-21 12:00 UTC\n\n```text\nmy notes\n",
            (
                '.ai/MAESTRO.md:39: the code fence "```text" opened at line 39 is never closed, so the rest of the file '
                'reads as code (the Source section has more than one line). Fix: close it with a line "```" where it '
                "should end, and move the block out of that section (into a `## Notes` section of its own, say)."
            ),
        ),
        # A fence opened above the tasks and never closed: they read as code.
        (
            "## Tasks\n",
            "~~~~\nsketch\n\n## Tasks\n",
            (
                '.ai/MAESTRO.md:9: the code fence "~~~~" opened at line 9 is never closed, so the rest of the file reads '
                'as code (the file has no `## Tasks` section). Fix: close it with a line "~~~~" where it should end, '
                "or delete it."
            ),
        ),
        (
            "## Tasks\n",
            "<!-- draft\n\n## Tasks\n",
            (
                '.ai/MAESTRO.md:9: the HTML comment "<!-- draft" opened at line 9 is never closed, so the rest of the '
                'file reads as a comment (the file has no `## Tasks` section). Fix: close it with a line "-->" where '
                "it should end, or delete it."
            ),
        ),
    ],
)
def test_an_unclosed_fence_or_comment_is_named_with_its_line(old, new, expected):
    assert error_for(HAND.replace(old, new, 1)) == expected


def test_an_unclosed_fence_is_not_blamed_for_an_error_before_it():
    text = HAND.replace("- **Status:** pending", "- **Status:** doing", 1) + "\n```\nnotes\n"
    assert error_for(text).startswith('.ai/MAESTRO.md:14: Task 1 has unknown status "doing".')


def test_non_utf8_bytes_name_the_line():
    data = HAND.replace("A note under task 1.", "A note \xff").encode("latin-1")
    with pytest.raises(PlanError) as info:
        parse_bytes(data)
    assert (
        str(info.value)
        == ".ai/MAESTRO.md:17: the file is not valid UTF-8 (byte 0xff). Fix: save it as UTF-8 text."
    )


def test_lone_carriage_return_is_refused():
    assert error_for(HAND.replace("A note under task 1.\n", "A note\runder task 1.\n")).startswith(
        ".ai/MAESTRO.md:17: the file has a carriage return without a line feed."
    )


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda p: setattr(p.tasks[0], "status", "doing"), 'Task 1 has unknown status "doing".'),
        (lambda p: setattr(p.tasks[0], "title", "two\nlines"), "Task 1 has an invalid title"),
        (
            lambda p: setattr(p.tasks[1], "depends", ["9"]),
            "Task 2 depends on Task 9, which is not in the plan.",
        ),
        (lambda p: setattr(p.tasks[1], "depends", ["2"]), "Task 2 depends on itself."),
        (
            lambda p: setattr(p.tasks[0], "depends", ["2"]),
            "the tasks depend on each other in a cycle: 1 -> 2 -> 1",
        ),
        (lambda p: p.tasks.append(Task("1", "again")), "Task 1 appears twice in the plan."),
        (
            lambda p: setattr(p, "goal", "Ship.\n## Tasks\nsneaky"),
            "a Goal with a line that would start a new section",
        ),
        (lambda p: setattr(p.tasks[0], "cost", -1.0), "Task 1 has an invalid Cost"),
        (
            lambda p: setattr(p.tasks[0], "result", "ansi \x1b[31m red"),
            "Task 1 has a Result with control characters",
        ),
    ],
)
def test_render_refuses_content_the_format_cannot_hold(change, message):
    plan = parse(HAND)
    change(plan)
    with pytest.raises(PlanError) as info:
        render(plan)
    assert message in str(info.value)
    assert "Fix:" in str(info.value)


def test_a_quote_breaking_into_a_paragraph_keeps_every_byte():
    from maestro.state.markdown.blocks import split_blocks

    text = "0\n>0\n-\n"
    blocks = split_blocks(text)
    assert [(b.kind, b.start) for b in blocks] == [("paragraph", 0), ("block_quote", 2)]
    assert "".join(text[b.start : b.end] for b in blocks) == text

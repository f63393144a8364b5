from __future__ import annotations

import pytest

from maestro.prompts.delegation import MISSING_CONTEXT, build_delegation
from maestro.prompts.results import parse_result
from maestro.prompts.templates import output_format
from maestro.state.model import Task
from maestro.tokens import count_tokens

from .helpers import ROOT, sample_plan

# One agent of each tier, each on a CLI that cannot enforce it (the prompt must).
TIER_CASES = [
    ("architect", "read-only", "gemini"),
    ("debugger", "read+shell", "claude"),
    ("technical-writer", "read+write", "codex"),
    ("coder", "full", "gemini"),
]


def build(catalog, plan, task_id, agent, tool="gemini", *, enforced=False, extra=None):
    task = plan.task(task_id)
    return build_delegation(
        plan,
        task,
        catalog.resolve(agent, tool),
        project_root=ROOT,
        tool=tool,
        enforced_by_cli=enforced,
        extra_context=extra,
    )


@pytest.mark.parametrize("agent, tier, tool", TIER_CASES)
def test_full_delegation_prompt_per_tier(catalog, md_snapshot, pinned_commands, agent, tier, tool):
    delegation = build(catalog, sample_plan(), "3", agent, tool)
    assert catalog.get(agent).tier == tier
    assert delegation.system + "\n=====\n" + delegation.prompt == md_snapshot


def test_sections_follow_the_notes_order(catalog):
    prompt = build(catalog, sample_plan(), "3", "coder").prompt
    order = [
        "## Agent base protocol",
        "## Filesystem safety",
        "## Tool restrictions (mandatory)",
        "## File-writing rules (mandatory)",
        "## Context from completed tasks",
        "## Task\n",
        "## Context\n",
        "## Success Criteria",
        "## Constraints",
        "## Output Format",
        "## Deliverables",
        "## Validation",
        "## Prohibitions",
        "Your output will be consumed by:",
    ]
    positions = [prompt.index(marker) for marker in order]
    assert positions == sorted(positions)


def test_cli_enforced_tier_drops_the_restriction_blocks(catalog):
    prompt = build(catalog, sample_plan(), "3", "coder", enforced=True).prompt
    assert "## Tool restrictions" not in prompt
    assert "## File-writing rules" not in prompt
    assert prompt.startswith("## Agent base protocol")


def test_context_chain_holds_only_completed_dependencies(catalog):
    plan = sample_plan()
    plan.tasks.append(
        Task("6", "Unrelated", status="done", downstream_context="- Warnings: SECRET-UNRELATED")
    )
    prompt = build(catalog, plan, "3", "coder").prompt
    assert "`RateLimiter.allow(key: str) -> bool`" in prompt
    assert "SECRET-UNRELATED" not in prompt
    # Task 2 is done but recorded no downstream context: the gap is visible.
    assert f"- Task 2 (coder): {MISSING_CONTEXT}" in prompt


def test_unfinished_dependency_is_said_not_hidden(catalog):
    prompt = build(catalog, sample_plan(), "4", "tester").prompt
    assert (
        "- Task 3 (coder): not completed (status: pending); its output is not available." in prompt
    )


def test_deliverables_are_absolute_and_validation_named(catalog):
    prompt = build(catalog, sample_plan(), "3", "coder").prompt
    deliverables = prompt.split("## Deliverables")[1].split("## Validation")[0]
    assert f"- {ROOT}/src/limits/limiter.py" in deliverables
    assert f"- {ROOT}/src/api/middleware.py" in deliverables
    assert "    pytest -q tests/limits" in prompt


def test_prohibitions_cover_questions_commits_scope_and_interaction(catalog):
    prohibitions = build(catalog, sample_plan(), "3", "coder").prompt.split("## Prohibitions")[1]
    for needle in (
        "follow-up questions",
        "git commits",
        "other than the deliverables",
        "interactive commands",
    ):
        assert needle in prohibitions


def test_downstream_consumers_are_the_dependents_agents(catalog):
    plan = sample_plan()
    assert (
        "consumed by: tester (Task 4), technical-writer (Task 5), who need"
        in build(catalog, plan, "3", "coder").prompt
    )
    assert "consumed by: the hub" in build(catalog, plan, "5", "technical-writer").prompt


def test_read_only_agent_gets_no_write_scope_and_cannot_run_validation(catalog):
    prompt = build(catalog, sample_plan(), "3", "architect").prompt
    assert "You change no files: your findings are the deliverable." in prompt
    assert "Files in scope (read only):" in prompt
    assert "you cannot run it" in prompt
    assert "- create, modify or delete any file\n" in prompt


def test_tool_names_follow_the_spoke_cli(catalog):
    plan = sample_plan()
    assert (
        "only with Write and Edit. Never with Bash"
        in build(catalog, plan, "3", "coder", "claude").prompt
    )
    assert (
        "only with write_file and replace. Never with run_shell_command"
        in build(catalog, plan, "3", "coder", "gemini").prompt
    )
    codex = build(catalog, plan, "3", "refactor", "codex").prompt
    assert "create and edit files (apply_patch)" in codex
    assert "read-only commands for reading files are allowed" in codex
    for tool in ("claude", "gemini", "codex", "sim"):
        assert "{{" not in build(catalog, plan, "3", "coder", tool).prompt


def test_retry_context_is_a_marked_section_only_when_given(catalog):
    plan = sample_plan()
    assert "Retry context" not in build(catalog, plan, "3", "coder").prompt
    prompt = build(
        catalog, plan, "3", "coder", extra="pytest failed: test_429\nlimiter.py line 3"
    ).prompt
    section = prompt.split("## Retry context (your previous attempt did not pass)")[1].split(
        "## Prohibitions"
    )[0]
    assert (
        "<<<RETRY CONTEXT\npytest failed: test_429\nlimiter.py line 3\nRETRY CONTEXT>>>" in section
    )


def test_deterministic(catalog):
    first = build(catalog, sample_plan(), "3", "coder")
    assert build(catalog, sample_plan(), "3", "coder") == first


def test_system_prompt_is_a_coordinated_worker_with_the_persona(catalog):
    system = build(catalog, sample_plan(), "3", "architect").system
    assert system.startswith(
        '<maestro_system_prompt mode="coordinated-worker" strategy="simple" version="3.0">'
    )
    assert "<commands>none: report through your final answer</commands>" in system
    assert "# Agent: architect (read-only)" in system and "## Decision Frameworks" in system
    coder = build(catalog, sample_plan(), "3", "coder").system
    assert 'name="status"' in coder and 'name="install"' not in coder and 'name="run"' not in coder


def test_a_filled_output_format_parses_clean():
    # The template the prompt shows and the parser that reads it must agree.
    filled = (
        output_format()
        .split("every field filled in:\n\n", 1)[1]
        .replace("success | partial | failed | blocked", "success")
        .replace("success | partial | failure", "success")
        .replace("pass | fail | skipped", "pass")
        .replace("- [ ] [criterion]: [why it is not met]\n", "")
        .replace("[", "")
        .replace("]", "")
        .replace("- x ", "- [x] ")
    )
    parsed = parse_result("Done.\n\n" + filled)
    assert parsed.problems == []
    assert parsed.submission.verification == [(True, "criterion: how you checked it")]


def test_prompt_size_stays_reasonable(catalog):
    delegation = build(catalog, sample_plan(), "3", "coder")
    assert count_tokens(delegation.system) + count_tokens(delegation.prompt) < 4500


def test_a_coordinating_task_is_told_to_split_itself_not_to_do_the_work(catalog):
    from dataclasses import replace

    plan = sample_plan()
    plan.tasks[2] = replace(plan.task("3"), mode="coordinate")
    system = build(catalog, plan, "3", "coder").system
    assert "<profile>coordinated-coordinator</profile>" in system
    assert "Split your task into atomic subtasks" in system and "maestro task spawn" in system
    assert "maestro run" not in system  # a spoke never re-enters the hub's commands
    worker = build(catalog, sample_plan(), "3", "coder").system
    assert "<profile>coordinated-worker</profile>" in worker and "task spawn" not in worker

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maestro.agents.catalog import load_catalog
from maestro.config import load_settings
from maestro.prompts.delegation import build_delegation
from maestro.spokes.registry import get_spoke
from maestro.state.model import Source
from maestro.state.store import PlanStore
from maestro.tokens import count_tokens

from .helpers import sample_plan


@pytest.fixture
def planned(project):
    plan = sample_plan()
    plan.source = Source("claude", "2026-11-21 12:00 UTC")
    plan.task("4").tool = "codex"
    settings = load_settings(project, {})
    PlanStore(settings.paths).create(plan)
    return project


def expected(project, task_id, tool):
    settings = load_settings(project, {})
    plan = PlanStore(settings.paths).load()
    task = plan.task(task_id)
    catalog = load_catalog(settings)
    agent = catalog.resolve(catalog.for_task(task).name, tool)
    enforced = get_spoke(tool).enforces(agent.tier)
    return build_delegation(
        plan, task, agent, project_root=project, tool=tool, enforced_by_cli=enforced
    ), enforced


def test_prints_exactly_what_the_spoke_receives_with_token_counts(planned, cli):
    result = cli("prompt", "3", "--tool", "claude")
    assert result.code == 0, result.err
    delegation, enforced = expected(planned, "3", "claude")
    system_tokens, prompt_tokens = count_tokens(delegation.system), count_tokens(delegation.prompt)
    assert f"=== system prompt ({system_tokens} tokens) ===\n{delegation.system}" in result.out
    assert f"=== task prompt ({prompt_tokens} tokens) ===\n{delegation.prompt}" in result.out
    assert f"=== total: {system_tokens + prompt_tokens} tokens (cl100k) ===" in result.out
    assert f"- {planned}/src/limits/limiter.py" in result.out
    # claude enforces the coder's full tier with its own flags: no restriction block.
    assert enforced and "## Tool restrictions" not in result.out


def test_json_carries_the_prompts_and_counts(planned, cli):
    data = json.loads(cli("prompt", "3", "--tool", "gemini", "--json").out)["data"]
    delegation, enforced = expected(planned, "3", "gemini")
    assert (data["system"], data["prompt"]) == (delegation.system, delegation.prompt)
    assert data["tokens"]["total"] == count_tokens(delegation.system) + count_tokens(
        delegation.prompt
    )
    assert (data["agent"], data["tier"], data["tool"], data["model"]) == (
        "coder",
        "full",
        "gemini",
        "gemini-3-pro-preview",
    )
    assert data["enforced_by_cli"] is enforced


def test_a_tier_the_cli_cannot_enforce_gets_the_restriction_block(planned, cli):
    # debugger is read+shell: claude's flags cannot stop Bash from writing.
    plan_file = planned / ".ai" / "MAESTRO.md"
    settings = load_settings(planned, {})
    with PlanStore(settings.paths).edit() as plan:
        plan.task("3").agent = "debugger"
    assert "debugger" in plan_file.read_text(encoding="utf-8")
    data = json.loads(cli("prompt", "3", "--tool", "claude", "--json").out)["data"]
    assert data["enforced_by_cli"] is False
    assert "## Tool restrictions (mandatory)\n\nYour tier is **read+shell**" in data["prompt"]


def test_the_tasks_own_tool_is_the_default(planned, cli):
    data = json.loads(cli("prompt", "4", "--json").out)["data"]
    assert (data["tool"], data["agent"]) == ("codex", "tester")
    assert "- Task 3 (coder): not completed (status: pending)" in data["prompt"]


def test_no_tool_and_no_installed_cli_is_a_clear_error(planned, cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = cli("prompt", "3")
    assert result.code == 1
    assert "no spoke CLI is installed" in result.err and "Fix:" in result.err
    # The fix must show the prompt, not start a run: `--tool` works without a CLI installed.
    assert "maestro prompt 3 --tool" in result.err and "maestro run" not in result.err


def test_unknown_task_and_missing_plan(planned, cli, project):
    result = cli("prompt", "9", "--tool", "claude")
    assert result.code == 1 and "no Task 9" in result.err and "1, 2, 3, 4, 5" in result.err
    (project / ".ai" / "MAESTRO.md").unlink()
    result = cli("prompt", "3", "--tool", "claude")
    assert result.code == 1 and "no plan yet" in result.err and "maestro plan --from" in result.err


def test_a_disabled_agent_says_so(planned, cli, monkeypatch):
    monkeypatch.setenv("MAESTRO_DISABLED_AGENTS", "coder")
    result = cli("prompt", "3", "--tool", "claude")
    assert result.code == 1 and "'coder' is disabled" in result.err


def test_plan_written_by_plan_from_is_promptable(project, cli, tmp_path):
    source = tmp_path / "plan.json"
    plan = {
        "goal": "Add a greeting",
        "tasks": [
            {
                "id": "1",
                "title": "Write greet()",
                "specialist": "code",
                "tool": "sim",
                "files": ["src/greet.py"],
                "criteria": ["greet('x') returns 'hello x'"],
                "validation": "python -c 'import src.greet'",
            },
        ],
    }
    source.write_text(json.dumps(plan), encoding="utf-8")
    made = cli("plan", "--from", str(source), "--yes")
    assert made.code == 0, made.err
    result = cli("prompt", "1")
    assert result.code == 0, result.err
    assert "Task 1: Write greet()" in result.out and f"- {project}/src/greet.py" in result.out
    assert "on sim;" in result.out.splitlines()[0]


def test_prompting_writes_nothing(planned, cli):
    # Nothing but the parse caches, which only save the next command time.
    cache = planned / ".ai" / "maestro" / "cache"

    def files() -> list[tuple[Path, bytes]]:
        return sorted(
            (p, p.read_bytes())
            for p in planned.rglob("*")
            if p.is_file() and ".git" not in p.parts and not p.is_relative_to(cache)
        )

    before = files()
    assert cli("prompt", "3", "--tool", "claude").code == 0
    assert files() == before

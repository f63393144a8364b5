"""The canonical command and skill sources: complete, and calling only real commands."""

import re

import pytest

from maestro.commands import BY_NAME
from maestro.install.sources import ON_DEMAND_SKILLS, ROUTER_SKILL, VERBS, load_command, load_skill

EXPECTED_CALLS = {
    "plan": [
        "maestro plan --schema",
        "maestro plan --from - --hub $HUB --dry-run",
        "maestro plan --from - --hub $HUB --yes",
        "maestro skill maestro-decompose",
        "maestro skill maestro-route",
    ],
    "challenge": ["maestro challenge --json"],
    "run": [
        "maestro run --detach --json",
        "`next`",
        "maestro skill maestro-recover",
        "maestro status --json",
    ],
    "review": ["maestro review $ARGUMENTS --json"],
    "status": ["maestro status --json"],
    "report": ["maestro report --output .ai/maestro/report.md"],
}


@pytest.mark.parametrize("verb", VERBS)
def test_each_command_calls_the_engine_it_needs(verb):
    source = load_command(verb)
    assert source.description
    for call in EXPECTED_CALLS[verb]:
        assert call in source.body, call


def test_run_names_the_four_escalation_options():
    body = load_command("run").body
    for option in ("clarify and retry", "reassign", "mark blocked and continue", "abort"):
        assert option in body


def test_plan_recon_per_host():
    body = load_command("plan").body
    assert "[claude] Launch the Explore subagent" in body
    assert "[gemini,codex] Read the tree quickly" in body


def _calls(text):
    return re.findall(r"(?<![\w$/.:@-])maestro ([a-z-]+)", text)


def test_every_maestro_call_in_every_source_is_a_registered_command():
    texts = [load_command(v).body for v in VERBS] + [
        load_skill(s).body for s in (*ON_DEMAND_SKILLS, ROUTER_SKILL)
    ]
    calls = [c for text in texts for c in _calls(text)]
    assert calls and all(c in BY_NAME for c in calls), [c for c in calls if c not in BY_NAME]


@pytest.mark.parametrize("name", [*ON_DEMAND_SKILLS, ROUTER_SKILL])
def test_skills_have_name_and_description(name):
    skill = load_skill(name)
    assert skill.name == name and skill.description and skill.body.strip()


def test_commands_point_to_each_on_demand_skill():
    bodies = " ".join(load_command(v).body for v in VERBS)
    for name in ON_DEMAND_SKILLS:
        assert f"maestro skill {name}" in bodies


@pytest.mark.parametrize("name", ON_DEMAND_SKILLS)
def test_on_demand_skills_use_no_one_hosts_syntax(name):
    # `maestro skill` prints the same text to every hub, so a command named there must
    # work in Codex (`$maestro <verb>`) as well as in Claude Code and Gemini CLI.
    assert "/maestro:" not in load_skill(name).body


CLAUDE_BASH_DEFAULT_TIMEOUT_S = 120  # Claude Code 2.1.197 kills a shell command after this


def test_the_run_loop_waits_less_than_a_host_shell_tool_allows():
    from maestro.cli.wait import DEFAULT_TIMEOUT_S, next_command

    # The hub runs the `next` lines Maestro prints; the file itself names no wait.
    assert "maestro wait" not in load_command("run").body and "`next`" in load_command("run").body
    waits = next_command("R1", after=3, poll=2, as_json=True)
    assert "--timeout" not in waits and DEFAULT_TIMEOUT_S < CLAUDE_BASH_DEFAULT_TIMEOUT_S

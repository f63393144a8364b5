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
        "maestro run --follow $ARGUMENTS",
        "`next:`",
        "maestro skill maestro-recover",
    ],
    "review": ["maestro review $ARGUMENTS --json"],
    "status": ["maestro status"],
    "report": ["maestro report --output .ai/maestro/report.md"],
}


@pytest.mark.parametrize("verb", VERBS)
def test_each_command_calls_the_engine_it_needs(verb):
    source = load_command(verb)
    assert source.description
    for call in EXPECTED_CALLS[verb]:
        assert call in source.body, call


def test_a_decision_names_the_four_escalation_options():
    """The run command asks for the four options; the decision's own line names them."""
    from maestro.engine.progress import describe

    assert "four options" in load_command("run").body
    labels = ("Clarify and retry", "Reassign", "Mark blocked and continue", "Abort")
    options = [{"option": n, "label": label, "command": "x"} for n, label in enumerate(labels, 1)]
    line = describe({"kind": "decision", "task": "3", "status": "failed", "options": options})
    for option in ("clarify and retry", "reassign", "mark blocked and continue", "abort"):
        assert option in line


def test_plan_recons_through_each_hosts_subagent():

    from maestro.install.host import RenderOptions, hosts

    said = {h: hosts()[h].expanded("plan", RenderOptions(invocation="maestro")) for h in hosts()}
    assert "Launch the Explore subagent" in said["claude"]
    # Claude Code runs an agent in the background unless told (2.1.198 on), and on the
    # hub's own model (2.1.332): the hub would plan before the brief came back, and the
    # recon would cost what the hub's reads cost.
    assert '`model: "haiku"` and `run_in_background: false`' in said["claude"]
    assert "`invoke_agent` with agent_name `maestro-recon`" in said["gemini"]
    assert "spawn agent_type `maestro-recon`" in said["codex"]
    for text in said.values():
        assert "Keep only the brief" in text and "git ls-files" in text  # the last resort
        assert sum(name in text for name in ("Explore", "invoke_agent", "spawn_agent")) == 1


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


# What each host's shell tool allows one command (HOSTS.md section 5; the tool schemas
# the pinned hosts send their model): Claude Code's Bash runs a command in the background
# for its `timeout`, at most 7200000 ms, and wakes the model when it ends; Gemini CLI
# stops a command silent for 300 s and has no other limit; Codex's exec_command yields
# after at most 30 s and an empty write_stdin poll waits at most
# background_terminal_max_timeout (300000 ms unless raised).
CLAUDE_BACKGROUND_S, GEMINI_SILENCE_S = 7200, 300


def test_each_hubs_follow_line_fits_its_shell_tool():
    from maestro.cli.wait import next_command
    from maestro.install.text import for_host
    from maestro.roster import CLIS

    body = load_command("run").body
    assert "maestro wait" not in body  # the hub runs the `next:` lines Maestro prints
    assert "--timeout" not in next_command("R1", after=3, poll=2, as_json=False)
    claude, gemini, codex = CLIS["claude"], CLIS["gemini"], CLIS["codex"]
    assert claude.hub_wait_s is not None and claude.hub_wait_s < CLAUDE_BACKGROUND_S
    assert "`run_in_background` true, `timeout` 7200000" in for_host(body, "claude")
    assert gemini.hub_wait_s is None and gemini.host.SILENCE_S == GEMINI_SILENCE_S
    assert codex.hub_wait_s is None
    polls = for_host(body, "codex")
    assert "`yield_time_ms` 30000" in polls and "`yield_time_ms` 3600000" in polls
    for host in ("claude", "gemini", "codex"):
        text = for_host(body, host)
        assert "`maestro run --follow $ARGUMENTS`" in text
        assert text.count("2. Run that, and each `next:` command") == 1

from __future__ import annotations

import json

from maestro.agents.tiers import ROSTER, TIER_TOOLS

from .helpers import persona


def test_list_shows_every_agent_with_tier_and_model(project, cli):
    result = cli("agents", "list")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split()[:3] == ["NAME", "TIER", "GEMINI"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.strip()}
    assert set(rows) == set(ROSTER)
    assert rows["technical-writer"][1:3] == ["read+write", "gemini-3-flash-preview"]


def test_list_json_marks_disabled_and_project_agents(project, cli, write_agent, monkeypatch):
    monkeypatch.setenv("MAESTRO_DISABLED_AGENTS", "debugger")
    write_agent("coder", persona("coder", list(TIER_TOOLS["full"])))
    data = json.loads(cli("agents", "list", "--json").out)["data"]
    rows = {row["name"]: row for row in data["agents"]}
    assert rows["debugger"]["disabled"] is True
    assert rows["coder"]["origin"] == "project"
    assert rows["coder"]["models"] == {
        "claude": None,
        "gemini": "gemini-2.5-pro",
        "codex": None,
        "sim": None,
    }


def test_show_prints_resolved_values_with_sources_and_body(project, cli, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_TURNS", "11")
    result = cli("agents", "show", "coder", "--tool", "claude")
    assert result.code == 0
    assert "model on claude: CLI default  (claude CLI default)" in result.out
    assert "model on gemini: gemini-3-pro-preview" in result.out
    assert "max_turns: 11  (MAESTRO_MAX_TURNS (environment))" in result.out
    assert "## Anti-Patterns" in result.out


def test_show_unknown_agent_names_the_closest(project, cli):
    result = cli("agents", "show", "codr")
    assert result.code == 1
    assert "Did you mean 'coder'?" in result.err
    assert "Traceback" not in result.err


def test_show_without_name_and_list_with_name_are_usage_errors(project, cli):
    assert cli("agents", "show").code == 1
    result = cli("agents", "list", "coder")
    assert result.code == 1 and "takes no name" in result.err


def test_validate_passes_on_the_bundle(project, cli):
    result = cli("agents", "validate")
    assert result.code == 0
    assert result.out.strip().endswith("12 agent(s) checked: no errors.")


def test_validate_reports_every_violation_with_file_and_key(project, cli, write_agent):
    write_agent("coder", persona("coder", ["read_file", "teleport"], temperature=3, kind="remote"))
    write_agent("helper", persona("other", ["read_file"]))
    (project / ".ai" / "maestro.toml").write_text(
        "[agents.tester]\nmax_turns = -1\n", encoding="utf-8"
    )
    result = cli("agents", "validate", "--json")
    assert result.code == 1
    found = {(v["file"], v["key"]) for v in json.loads(result.out)["data"]["violations"]}
    assert {
        (".ai/agents/coder.md", "tools[1]"),
        (".ai/agents/coder.md", "temperature"),
        (".ai/agents/coder.md", "kind"),
        (".ai/agents/helper.md", "name"),
        (".ai/maestro.toml", "(overrides)"),
    } <= found
    text = cli("agents", "validate").out
    assert ".ai/agents/coder.md: tools[1]: 'teleport' is not one of" in text
    assert "error(s)" in text.splitlines()[-1]


def test_permissions_command_passes_then_fails_on_widening(project, cli, write_agent):
    ok = cli("agents", "permissions")
    assert ok.code == 0
    assert "read-only   api-designer, architect, code-reviewer" in ok.out
    write_agent("code-reviewer", persona("code-reviewer", list(TIER_TOOLS["full"])))
    bad = cli("agents", "permissions", "--json")
    assert bad.code == 1
    problems = [f["problem"] for f in json.loads(bad.out)["data"]["findings"]]
    assert "is an analysis agent and may not hold write or shell tools" in problems


def test_permissions_says_which_tiers_a_cli_cannot_enforce(project, cli):
    res = cli("agents", "permissions")
    assert res.code == 0
    assert (
        "note: read+write (refactor, technical-writer) on codex: the shell cannot be forbidden: its "
        "workspace-write sandbox runs any command"
    ) in res.out
    assert (
        "note: read+shell (debugger, performance-engineer, security-engineer) on claude: writes cannot be forbidden"
        in res.out
    )
    gaps = json.loads(cli("agents", "permissions", "--json").out)["data"]["unenforced"]
    assert {(g["tool"], g["tier"]) for g in gaps} == {
        ("codex", "read+write"),
        ("claude", "read+shell"),
        ("gemini", "read+shell"),
    }
    assert next(g for g in gaps if g["tool"] == "codex")["agents"] == [
        "refactor",
        "technical-writer",
    ]

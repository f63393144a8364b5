from __future__ import annotations

import pytest

from maestro.agents.catalog import (
    SPECIALIST_DEFAULTS,
    Catalog,
    agent_name_for,
    load_catalog,
    scan_agents,
)
from maestro.agents.personaschema import BODY_SECTIONS
from maestro.agents.tiers import ROSTER, TIER_TOOLS, tier_of
from maestro.errors import ConfigError, MaestroError, NotFound
from maestro.resources import list_files
from maestro.state.model import Task
from maestro.tokens import count_tokens

from .helpers import persona

ROSTER_NAMES = sorted(ROSTER)


def test_bundled_roster_is_the_twelve_personas(settings_for):
    catalog = load_catalog(settings_for())
    assert catalog.names() == ROSTER_NAMES
    assert [item.name for item in list_files("agents", ".md")] == [f"{n}.md" for n in ROSTER_NAMES]


@pytest.mark.parametrize("name", ROSTER_NAMES)
def test_each_persona_is_complete_and_focused(settings_for, name):
    agent = load_catalog(settings_for()).get(name)
    assert agent.tier == ROSTER[name]
    assert agent.kind == "local"
    assert "\n" not in agent.description and agent.description
    for section in BODY_SECTIONS:
        assert f"## {section}\n" in agent.body
    # The body goes into every dispatch's system prompt: it must stay a few hundred words.
    assert 250 <= len(agent.body.split()) <= 500
    assert count_tokens(agent.body) < 700


def test_notes_models_and_limits(settings_for):
    catalog = load_catalog(settings_for())
    assert catalog.get("technical-writer").model == "gemini-3-flash-preview"
    assert {catalog.get(n).model for n in ROSTER_NAMES if n != "technical-writer"} == {
        "gemini-3-pro-preview"
    }
    assert (catalog.get("coder").max_turns, catalog.get("coder").timeout_mins) == (25, 10)
    assert (catalog.get("debugger").max_turns, catalog.get("debugger").timeout_mins) == (20, 8)
    assert catalog.get("architect").temperature == 0.3
    assert "google_web_search" in catalog.get("architect").tools


@pytest.mark.parametrize(
    "tools, tier",
    [
        (TIER_TOOLS["read-only"], "read-only"),
        (TIER_TOOLS["read+shell"], "read+shell"),
        (TIER_TOOLS["read+write"], "read+write"),
        (TIER_TOOLS["full"], "full"),
        (("read_file", "replace"), "read+write"),
        (("read_file", "google_web_search"), "read-only"),
    ],
)
def test_tier_comes_from_tools(tools, tier):
    assert tier_of(tools) == tier


def test_for_task_uses_agent_then_specialist_default(settings_for):
    catalog = load_catalog(settings_for())
    assert (
        catalog.for_task(Task("1", "t", specialist="review", agent="security-engineer")).name
        == "security-engineer"
    )
    for specialist, default in SPECIALIST_DEFAULTS.items():
        assert catalog.for_task(Task("1", "t", specialist=specialist)).name == default
    assert agent_name_for(Task("1", "t")) == "coder"
    assert SPECIALIST_DEFAULTS == {
        "code": "coder",
        "review": "code-reviewer",
        "test": "tester",
        "research": "architect",
    }


def test_unknown_agent_names_closest_and_all(settings_for):
    catalog = load_catalog(settings_for())
    with pytest.raises(NotFound) as info:
        catalog.get("securty-engineer")
    text = str(info.value)
    assert "Did you mean 'security-engineer'?" in text
    assert all(name in text for name in ROSTER_NAMES)


def test_model_per_spoke_cli_from_frontmatter(settings_for):
    catalog = load_catalog(settings_for())
    assert catalog.resolve("coder", "gemini").model == "gemini-3-pro-preview"
    # A Gemini model name would be rejected by the other CLIs: they use their default.
    for tool in ("claude", "codex", None):
        resolved = catalog.resolve("coder", tool)
        assert resolved.model is None
    assert catalog.resolve("coder", "claude").sources["model"] == "claude CLI default"


def test_general_env_overrides_frontmatter(settings_for):
    env = {
        "MAESTRO_DEFAULT_MODEL": "m-all",
        "MAESTRO_DEFAULT_TEMPERATURE": "0.7",
        "MAESTRO_MAX_TURNS": "9",
        "MAESTRO_AGENT_TIMEOUT": "2.5",
    }
    resolved = load_catalog(settings_for(env)).resolve("coder", "claude")
    assert (resolved.model, resolved.temperature, resolved.max_turns, resolved.timeout_mins) == (
        "m-all",
        0.7,
        9,
        2.5,
    )
    assert resolved.sources["max_turns"] == "MAESTRO_MAX_TURNS (environment)"


def test_writer_model_beats_default_model(settings_for):
    catalog = load_catalog(
        settings_for(
            {
                "MAESTRO_DEFAULT_MODEL": "gemini-2.5-pro",
                "MAESTRO_WRITER_MODEL": "gemini-3-flash-preview",
            }
        )
    )
    assert catalog.resolve("technical-writer", "gemini").model == "gemini-3-flash-preview"
    assert catalog.resolve("coder", "gemini").model == "gemini-2.5-pro"


def test_a_model_override_of_one_vendor_is_not_sent_to_another_cli(settings_for):
    catalog = load_catalog(
        settings_for(
            {"MAESTRO_DEFAULT_MODEL": "gemini-2.5-pro", "MAESTRO_WRITER_MODEL": "claude-sonnet-4-5"}
        )
    )
    assert catalog.resolve("coder", "gemini").model == "gemini-2.5-pro"
    for cli in ("claude", "codex"):
        resolved = catalog.resolve("coder", cli)
        assert resolved.model is None and resolved.sources["model"] == f"{cli} CLI default"
    assert catalog.resolve("technical-writer", "claude").model == "claude-sonnet-4-5"
    assert (
        catalog.resolve("technical-writer", "gemini").model == "gemini-2.5-pro"
    )  # the general one fits
    alias = load_catalog(settings_for({"MAESTRO_DEFAULT_MODEL": "team-proxy-large"}))
    assert {alias.resolve("coder", cli).model for cli in ("claude", "gemini", "codex")} == {
        "team-proxy-large"
    }


def test_agent_table_beats_general_and_models_per_cli(settings_for):
    toml = """
[agents.coder]
model = "table-model"
max_turns = 40
timeout_mins = 12

[agents.coder.models]
claude = "sonnet"
"""
    catalog = load_catalog(
        settings_for({"MAESTRO_DEFAULT_MODEL": "m-all", "MAESTRO_MAX_TURNS": "9"}, toml)
    )
    claude = catalog.resolve("coder", "claude")
    assert (claude.model, claude.max_turns, claude.timeout_mins) == ("sonnet", 40, 12.0)
    assert claude.sources["model"] == "[agents.coder] models.claude"
    assert catalog.resolve("coder", "gemini").model == "table-model"
    assert catalog.resolve("tester", "gemini").model == "m-all"
    assert catalog.resolve("tester", "gemini").max_turns == 9


def test_writer_env_beats_agent_table(settings_for):
    toml = '[agents.technical-writer]\nmodel = "from-table"\n'
    catalog = load_catalog(settings_for({"MAESTRO_WRITER_MODEL": "from-env"}, toml))
    assert catalog.resolve("technical-writer", "codex").model == "from-env"


@pytest.mark.parametrize(
    "toml, needle",
    [
        ('[agents.codr]\nmodel = "x"\n', "Did you mean [agents.coder]?"),
        ("[agents.coder]\nmax_turns = 0\n", "agents.coder.max_turns"),
        ('[agents.coder]\ntemperature = "hot"\n', "agents.coder.temperature"),
        ('[agents.coder]\ncolour = "red"\n', "unknown key 'colour'"),
        ('[agents.coder.models]\nvim = "x"\n', "unknown CLI 'vim'"),
    ],
)
def test_bad_agent_tables_are_config_errors(settings_for, toml, needle):
    with pytest.raises(ConfigError) as info:
        load_catalog(settings_for(toml=toml))
    assert needle in str(info.value)
    assert ".ai/maestro.toml" in str(info.value)


def test_disabled_agents_leave_names_and_refuse_get(settings_for):
    catalog = load_catalog(
        settings_for({"MAESTRO_DISABLED_AGENTS": "security-engineer, performance-engineer"})
    )
    assert "security-engineer" not in catalog.names()
    assert "security-engineer" in catalog.agents
    with pytest.raises(MaestroError) as info:
        catalog.get("security-engineer")
    assert not isinstance(info.value, NotFound)
    assert "disabled" in str(info.value) and "MAESTRO_DISABLED_AGENTS" in str(info.value)
    with pytest.raises(MaestroError, match="disabled"):
        catalog.for_task(Task("1", "t", agent="performance-engineer"))


def test_disabling_an_unknown_agent_is_an_error(settings_for):
    with pytest.raises(ConfigError, match="Did you mean 'tester'"):
        load_catalog(settings_for({"MAESTRO_DISABLED_AGENTS": "testr"}))


def test_project_agent_replaces_bundled_and_adds_new(settings_for, write_agent):
    write_agent("coder", persona("coder", list(TIER_TOOLS["full"]), max_turns=7))
    write_agent("migrator", persona("migrator", list(TIER_TOOLS["read+write"])))
    catalog = load_catalog(settings_for())
    coder = catalog.get("coder")
    assert (coder.origin, coder.source, coder.max_turns) == ("project", ".ai/agents/coder.md", 7)
    assert "coder text for Role." in coder.body
    assert catalog.get("migrator").tier == "read+write"
    assert len(catalog.names()) == 13


def test_broken_project_agent_stops_the_catalog_with_its_file(settings_for, write_agent):
    write_agent("coder", persona("coder", ["read_file", "teleport"]))
    with pytest.raises(ConfigError) as info:
        load_catalog(settings_for())
    assert info.value.file == ".ai/agents/coder.md"
    assert "maestro agents validate" in str(info.value)


def test_project_agent_body_sections_are_only_warnings(settings_for, write_agent):
    write_agent("quick", persona("quick", list(TIER_TOOLS["read-only"]), body="Just do it.\n"))
    scan = scan_agents(settings_for())
    assert "quick" in scan.agents
    assert scan.violations and all(v.level == "warning" for v in scan.violations)


def test_catalog_without_settings_uses_frontmatter_only(settings_for):
    scan = scan_agents(settings_for())
    catalog = Catalog(scan.agents)
    assert catalog.resolve("tester", "gemini").max_turns == 25


def test_an_edited_persona_is_read_again(settings_for, write_agent, project):
    write_agent("scout", persona("scout", ["read_file"], description="Looks around"))
    assert scan_agents(settings_for()).agents["scout"].description == "Looks around"
    write_agent("scout", persona("scout", ["read_file"], description="Looks further"))
    assert scan_agents(settings_for()).agents["scout"].description == "Looks further"
    write_agent("scout", persona("scout", ["read_file"], description="Two\nlines"))
    assert "scout" not in scan_agents(settings_for()).agents

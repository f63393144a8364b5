from __future__ import annotations

from maestro.agents.catalog import parse_agent
from maestro.agents.personaschema import validate_frontmatter

from .helpers import persona


def keys(violations):
    return sorted(v.key for v in violations)


def test_valid_frontmatter_has_no_violations():
    agent, found = parse_agent(
        persona("helper", ["read_file", "glob"]),
        "x/helper.md",
        expected_name="helper",
        origin="bundled",
    )
    assert found == [] and agent is not None
    assert agent.tier == "read-only"


def test_every_violation_is_reported_with_its_key():
    meta = {
        "name": "Bad_Name",
        "description": "two\nlines",
        "kind": "remote",
        "tools": ["read_file", "teleport", "read_file"],
        "temperature": 1.5,
        "max_turns": 0,
        "timeout_mins": 0,
        "colour": "red",
    }
    found = validate_frontmatter(meta, "agents/bad.md")
    assert keys(found) == sorted(
        [
            "(frontmatter)",
            "description",
            "kind",
            "max_turns",
            "model",
            "name",
            "temperature",
            "timeout_mins",
            "tools",
            "tools[1]",
        ]
    )
    by_key = {v.key: v.message for v in found}
    assert "kebab-case" in by_key["name"]
    assert by_key["description"] == "must be a single line"
    assert "'teleport' is not one of" in by_key["tools[1]"]
    assert "missing required key 'model'" == by_key["model"]
    assert "colour" in by_key["(frontmatter)"]
    assert all(v.file == "agents/bad.md" for v in found)


def test_name_must_match_file_name():
    _, found = parse_agent(
        persona("helper", ["read_file"]), "x/other.md", expected_name="other", origin="bundled"
    )
    assert [(v.key, "must match the file name 'other'" in v.message) for v in found] == [
        ("name", True)
    ]


def test_models_map_accepts_only_other_clis():
    text = persona("helper", ["read_file"], models="{claude: sonnet, gemini: x}")
    _, found = parse_agent(text, "x/helper.md", expected_name="helper", origin="bundled")
    assert keys(found) == ["models"]


def test_yaml_error_and_missing_frontmatter():
    _, found = parse_agent(
        "---\nname: [unclosed\n---\nbody\n", "x/a.md", expected_name="a", origin="project"
    )
    assert keys(found) == ["(frontmatter)"] and "not valid YAML" in found[0].message
    _, found = parse_agent("just text\n", "x/a.md", expected_name="a", origin="project")
    assert "must start with a '---'" in found[0].message


def test_missing_body_sections_are_listed():
    _, found = parse_agent(
        persona("helper", ["read_file"], body="## Role\n\nx\n"),
        "x/helper.md",
        expected_name="helper",
        origin="bundled",
    )
    assert [v.message for v in found] == [
        "missing section '## Methodology'",
        "missing section '## Decision Frameworks'",
        "missing section '## Output Contract'",
        "missing section '## Anti-Patterns'",
        "missing section '## Downstream Consumers'",
    ]

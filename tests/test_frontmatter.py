"""The one frontmatter reader: persona, command and skill files."""

from __future__ import annotations

import pytest

from maestro.agents.catalog import parse_agent
from maestro.frontmatter import FrontmatterError, split


def test_the_body_is_kept_byte_for_byte():
    assert split("---\ndescription: d\n---\n\n# Body\n\n") == ({"description": "d"}, "\n# Body\n\n")
    assert split("---\n---\nbody") == ({}, "body")


@pytest.mark.parametrize(
    ("text", "kind", "line"),
    [
        ("no block\n", "missing", None),
        ("---\nname: x\nbody\n", "unclosed", None),
        ("---\nname: x\ndescription: [bad\nkind: local\n---\n", "yaml", 4),
    ],
)
def test_what_is_wrong_and_where(text, kind, line):
    with pytest.raises(FrontmatterError) as err:
        split(text)
    assert err.value.kind == kind and err.value.line == line


def test_a_persona_whose_block_is_not_closed_or_not_a_mapping_says_so():
    _, found = parse_agent("---\nname: a\n", "x/a.md", expected_name="a", origin="project")
    assert [v.message for v in found] == ["is not closed: end the block with a '---' line"]
    _, found = parse_agent(
        "---\n- a\n- b\n---\nbody\n", "x/a.md", expected_name="a", origin="project"
    )
    assert found[0].key == "(frontmatter)" and "mapping" in found[0].message

"""The compiled check (fastjsonschema) never passes what jsonschema refuses, and passes
what it accepts; the run's path to a spoke does not import jsonschema."""

from __future__ import annotations

import copy
import marshal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from maestro.agents.schema import FRONTMATTER_SCHEMA, frontmatter_schema, validate_frontmatter
from maestro.bus.schema import MANIFEST_SCHEMA
from maestro.schemas import FastCheck
from tests.helpers import imports_in_fresh_process

MANIFEST = {
    "format_version": 1,
    "id": "s-1",
    "mode": "coordinated-worker",
    "strategy": "fifo",
    "tier": "read+write",
    "capabilities": {"can_spawn_sessions": False},
    "coordinator_session_id": "run-1",
    "parent_session_id": "run-1",
    "run_id": "r1",
    "task_ids": ["3"],
    "cli": "gemini",
    "agent": "technical-writer",
    "process": {"pid": 42, "start": 7, "namespace": "pid:[1]", "boot": "b", "pgid": 42},
    "status": "working",
    "reason": None,
    "created": "2026-11-24T00:00:00Z",
    "updated": "2026-11-24T00:00:00Z",
    "directive": {"subject": "s", "message": "m", "from": "run-1"},
    "notes": [],
}
PERSONA = {
    "name": "technical-writer",
    "description": "Writes notes",
    "kind": "local",
    "tools": ["read_file", "write_file"],
    "model": "gemini-2.5-pro",
    "models": {"claude": "sonnet"},
    "temperature": 0.2,
    "max_turns": 30,
    "timeout_mins": 10,
}

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 600),
    st.floats(-2, 2000, allow_nan=False) | st.sampled_from([0.0, 1.0, 0.5, 1440.0, 1e400]),
    st.text(max_size=8),
    st.sampled_from(["", "x", "s-1", "-bad", "a\nb", "worker", "local", "read_file", "sonnet"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@st.composite
def mutated(draw: Any, base: dict[str, Any]) -> Any:
    """``base`` with a few keys replaced, removed or added anywhere in it."""
    data: Any = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["set", "drop", "add"]))
        if not path:
            data = draw(json_values) if action == "set" else data
            continue
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if action == "set":
            parent[path[-1]] = draw(json_values)
        elif action == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(json_values)
    return data


def _agree(schema: dict[str, Any], data: Any) -> None:
    fast = FastCheck(lambda: schema).passes(data)
    valid = not list(Draft202012Validator(schema).iter_errors(data))
    if fast:
        assert valid, f"the compiled check passed what jsonschema refuses: {data!r}"
    # The other way round the compiled check may only be stricter where JSON Schema says
    # a number with no fraction is an integer.
    if valid and not fast:
        assert "1.0" in repr(data) or ".0" in repr(data), data


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(MANIFEST))
def test_manifest_checks_agree(data: Any) -> None:
    _agree(MANIFEST_SCHEMA, data)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(PERSONA))
def test_persona_checks_agree(data: Any) -> None:
    _agree(frontmatter_schema(), data)


def test_the_examples_are_valid_and_a_wrong_one_is_named_by_jsonschema() -> None:
    assert FastCheck(lambda: MANIFEST_SCHEMA).passes(MANIFEST)
    assert FastCheck(frontmatter_schema).passes(PERSONA)
    # The message is jsonschema's, as before the compiled check.
    found = validate_frontmatter({**PERSONA, "kind": "remote"}, "agents/x.md")
    assert [v.line() for v in found] == ["agents/x.md: kind: 'remote' is not one of: local"]
    # A number with no fraction is an integer to JSON Schema: the compiled check's no is
    # not the verdict.
    assert validate_frontmatter({**PERSONA, "max_turns": 30.0}, "agents/x.md") == []


def test_a_schema_that_follows_the_roster_is_compiled_again(monkeypatch) -> None:
    check = FastCheck(frontmatter_schema)
    assert check.passes(PERSONA)
    narrower = copy.deepcopy(FRONTMATTER_SCHEMA)
    narrower["properties"]["models"]["propertyNames"]["enum"] = ["codex"]
    monkeypatch.setattr("maestro.agents.schema.frontmatter_schema", lambda: narrower)
    assert not FastCheck(lambda: narrower).passes(PERSONA)


@pytest.mark.parametrize(
    "code",
    [
        # A session written and read back, as each dispatch does.
        (
            "from maestro.bus.sessions import SessionStore; from maestro.paths import ProjectPaths;"
            "import pathlib, sys; s = SessionStore(ProjectPaths(pathlib.Path(sys.argv[1])));"
            "x = s.create(mode='worker'); s.update(x.id, status='completed')"
        ),
        # The catalog of the bundled personas, as each run loads it.
        (
            "from maestro.agents.catalog import load_catalog; from maestro.config import load_settings;"
            "import pathlib, sys; load_catalog(load_settings(pathlib.Path(sys.argv[1]), env={}))"
        ),
    ],
)
def test_the_way_to_a_spoke_does_not_import_jsonschema(code: str, tmp_path) -> None:
    assert "jsonschema" not in imports_in_fresh_process(code, str(tmp_path))


def test_the_compiled_check_is_kept_and_a_broken_copy_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MAESTRO_HOME", raising=False)
    assert FastCheck(lambda: MANIFEST_SCHEMA).passes(MANIFEST)
    kept = list((tmp_path / "cache" / "maestro" / "schemas").glob("*.marshal"))
    assert len(kept) == 1
    before = kept[0].read_bytes()
    # A second process (a new FastCheck) loads it: the same verdicts.
    assert FastCheck(lambda: MANIFEST_SCHEMA).passes(MANIFEST)
    assert not FastCheck(lambda: MANIFEST_SCHEMA).passes({**MANIFEST, "mode": "boss"})
    for garbage in (b"", b"not marshal", before[: len(before) // 2]):
        kept[0].write_bytes(garbage)
        assert not FastCheck(lambda: MANIFEST_SCHEMA).passes({**MANIFEST, "status": "x"})
        assert len(kept[0].read_bytes()) == len(before)  # made again
        marshal.loads(kept[0].read_bytes())

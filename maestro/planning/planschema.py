"""The plan a hub produces, as a JSON Schema, and its errors in one line.

Two schemas from one set of parts. ``SHAPE`` is what ``planning.load`` checks: the keys
and their types, so that a plan missing only what the AAVSR checks want still loads and
is shown with those findings and their remedies. ``SCHEMA``, printed by ``maestro plan
--schema`` for a hub (or a person) to follow, adds what those checks require where JSON
Schema can say it (criteria on every task; files and a validation command on code and
test tasks) and says the rest in its descriptions: a plan valid against it passes the
plan check but for what only the descriptions state. The error mapping turns
jsonschema's findings into one message naming where each problem is (``task 2:
depends[1]``, by the task's id) and a fix with an example of the right shape.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from maestro.errors import UPGRADE, PlanError
from maestro.formatting import key_path
from maestro.planning.aavsr import BUILDS
from maestro.state.model import TASK_ID, TOOLS, plan_fields

INPUT_VERSION = 1
# A commented plan that passes the check (`maestro plan --example`, docs/plan-file.md).
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "plan-example.yaml"
TASK_SHAPE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "title"],
    # A task names a specialist, an agent, or both.
    "anyOf": [{"required": ["specialist"]}, {"required": ["agent"]}],
    "properties": {name: schema for name, schema, _ in plan_fields()},
}

# What the plan check (AAVSR, planning/aavsr.py) refuses beyond the shape, where JSON
# Schema can say it; the descriptions say the rest.
CHECKED: dict[str, Any] = {
    "required": ["criteria"],
    "properties": {"criteria": {"minItems": 1}},
    "if": {"required": ["specialist"], "properties": {"specialist": {"enum": list(BUILDS)}}},
    "then": {"required": ["files", "validation"], "properties": {"files": {"minItems": 1}}},
}
TASK_CHECKED_TOO = (
    "Required by the plan check too: criteria on every task (testable: a command that "
    "passes, an output, a status code, a file); files and a validation command on code and "
    "test tasks, and on a task naming only an agent that can write (coder, tester, ...). "
    "Files stay inside the project, out of .git/ and the state dir (.ai/); validation is a "
    "read-only check (no rm -rf, git push, deploy, publish); the agent exists and may do "
    "the work (one that owns files can write them); a named tool is installed."
)


def _plan_schema(task: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Maestro plan input",
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": ["goal", "tasks"],
        "properties": {
            "version": {"const": INPUT_VERSION, "description": "Plan input format version."},
            "goal": {
                "type": "string",
                "minLength": 1,
                "description": "The high-level objective.",
            },
            "hub": {"enum": TOOLS, "description": "The CLI that made this plan."},
            "tasks": {"type": "array", "minItems": 1, "items": task},
        },
    }


SHAPE = _plan_schema(TASK_SHAPE, "The keys of a plan input and their types.")
SCHEMA = _plan_schema(
    {**TASK_SHAPE, "description": TASK_CHECKED_TOO, "allOf": [CHECKED]},
    "A goal decomposed into atomic tasks, as `maestro plan --from FILE` (or `-`, standard "
    "input) reads it, YAML or JSON. An example that passes: `maestro plan --example`.",
)

# What a right value looks like, per key, for the fix of a schema error.
EXAMPLES = {
    "": "a mapping with goal: and tasks: (see `maestro plan --schema`)",
    "goal": "goal: Add user authentication",
    "hub": "hub: claude",
    "tasks": "tasks: [{id: 1, title: ..., specialist: code, ...}]",
    "version": "version: 1",
    **{name: example for name, _, example in plan_fields()},
}

_TYPE_NAMES = {
    "string": "text",
    "integer": "a whole number",
    "array": "a list",
    "object": "a mapping",
}


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a yes/no value"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def _key_of(parts: list[Any]) -> str:
    """The schema key a path ends in (``tasks[0].depends[1]`` -> ``depends``)."""
    for part in reversed(parts):
        if isinstance(part, str):
            return part
    return ""


# One jsonschema error (a ValidationError: jsonschema has no type hints to name it by).
SchemaError = Any
# (problem, fix) for an error of one validator, given the key it is about and an example
# of a right value; None: no better words than jsonschema's own.
Explain = Callable[[SchemaError, str, str], tuple[str, str] | None]


def _describe(error: SchemaError) -> tuple[str, str]:
    """(problem, fix) for one jsonschema ValidationError, in the words of ``_EXPLAIN``
    for its validator."""
    key = _key_of(list(error.absolute_path))
    example = EXAMPLES.get(key, "see `maestro plan --schema`")
    explain = _EXPLAIN.get(error.validator)
    found = explain(error, key, example) if explain else None
    return found or (error.message, f"see `maestro plan --schema` ({example})")


def _did_you_mean(value: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(value, allowed, n=1)
    return f"did you mean '{close[0]}'? Otherwise " if close else ""


def _required(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    value = error.instance
    props = error.schema.get("properties", {})
    missing = [k for k in error.validator_value if isinstance(value, dict) and k not in value]
    name = missing[0] if missing else "?"
    return (
        f"missing required key '{name}'",
        f"add {EXAMPLES.get(name, name)}" if name in props else "add it",
    )


def _any_of(error: SchemaError, key: str, example: str) -> tuple[str, str] | None:
    value = error.instance
    if not isinstance(value, dict) or "specialist" in value or "agent" in value:
        return None
    return (
        "names neither a specialist nor an agent",
        "add specialist: code (or agent: coder, or both)",
    )


def _additional(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    allowed = list(error.schema.get("properties", {}))
    extra = [k for k in error.instance if k not in allowed]
    name = str(extra[0]) if extra else "?"
    hint = _did_you_mean(name, allowed)
    return f"unknown key {_shown(name)}", f"{hint}remove it or use one of: {', '.join(allowed)}"


def _type(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    value = error.instance
    wanted = error.validator_value
    wanted = wanted if isinstance(wanted, list) else [wanted]
    if key in ("id", "depends") and isinstance(value, float):
        return (
            f"task id {value!r} was read as a decimal number",
            'quote dotted ids so they stay text: id: "2.1", depends: ["2.1"]',
        )
    names = " or ".join(_TYPE_NAMES.get(str(w), str(w)) for w in wanted)
    fix = f"write it as {example}"
    if "string" in wanted and isinstance(value, (bool, int, float)):
        fix += " (quote it if YAML reads it as a number or yes/no)"
    return f"expected {names}, got {_kind(value)}", fix


def _const(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    if key != "version":
        return _enum(error, key, example)
    return (
        f"plan input format version {_shown(error.instance)} is not one this Maestro reads ({INPUT_VERSION})",
        f"write version: {INPUT_VERSION}, or {UPGRADE}",
    )


def _enum(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    allowed = [
        str(a)
        for a in (error.validator_value if error.validator == "enum" else [error.validator_value])
    ]
    hint = _did_you_mean(str(error.instance), allowed)
    return f"{_shown(error.instance)} is not allowed", f"{hint}use one of: {', '.join(allowed)}"


def _pattern(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    value = error.instance
    if key in ("id", "depends"):
        return (
            f"{_shown(value)} is not a task id",
            'use a number like 1 or a dotted number like "2.1"',
        )
    if key == "agent":
        return (
            f"{_shown(value)} is not an agent name",
            "use a lowercase name like coder (see `maestro agents list`)",
        )
    return "must be one non-empty line", f"write it on one line, e.g. {example}"


def _empty(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    return "is empty", f"fill it in, e.g. {example}"


def _too_long(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    limit = error.validator_value
    fix = f"shorten it to {limit:,} characters or fewer"
    if key == "title":
        fix = f"keep a task title to {limit:,} characters; move detail to criteria"
    return f"is {len(error.instance):,} characters, over the limit of {limit:,}", fix


def _too_many(error: SchemaError, key: str, example: str) -> tuple[str, str]:
    limit = error.validator_value
    fix = f"list {limit:,} or fewer"
    if key in ("files", "criteria"):
        fix = f"split the task into smaller ones, each with {limit:,} {key} or fewer"
    return f"lists {len(error.instance):,} items, over the limit of {limit:,}", fix


def _shown(value: Any) -> str:
    """A value a problem quotes, cut short: the value may be as long as its sender liked."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


_EXPLAIN: dict[str, Explain] = {
    "required": _required,
    "anyOf": _any_of,
    "additionalProperties": _additional,
    "type": _type,
    "const": _const,
    "enum": _enum,
    "pattern": _pattern,
    "minimum": lambda error, key, example: (
        f"{error.instance!r} is not a task id",
        "use a number of 0 or more",
    ),
    "minLength": _empty,
    "minItems": _empty,
    "maxLength": _too_long,
    "maxItems": _too_many,
    "uniqueItems": lambda error, key, example: (
        "lists the same item twice",
        "remove the repeated item",
    ),
}


def _order(error: Any) -> tuple[Any, ...]:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path)


def _where(parts: list[Any], data: Any, whole: str) -> str:
    """Where a problem is: ``task 2`` (by the task's own id) and the key path inside it,
    ``tasks[1]`` when that task has no usable id, ``goal`` or ``whole`` outside tasks."""
    if len(parts) >= 2 and parts[0] == "tasks" and isinstance(parts[1], int):
        try:
            tid = data["tasks"][parts[1]]["id"]
        except (KeyError, IndexError, TypeError):
            tid = None
        if isinstance(tid, (int, str)) and not isinstance(tid, bool) and TASK_ID.match(str(tid)):
            inside = key_path(parts[2:], "")
            return f"task {tid}" + (f": {inside}" if inside else "")
    return key_path(parts, whole)


def fields_shape(names: list[str], required: list[str]) -> dict[str, Any]:
    """The shape of a request carrying some of a task's fields (a subtask a spoke
    spawns): each field's schema is plan input's own, so the request is bounded exactly
    as a plan is."""
    properties = TASK_SHAPE["properties"]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": {name: properties[name] for name in names},
    }


def check(
    data: Any, name: str = "plan input", *, shape: dict[str, Any] = SHAPE, whole: str = "the plan"
) -> None:
    """Raise one ``PlanError`` naming every problem against ``shape`` (plan input's,
    ``SHAPE``, unless told), in document order, each where it is and its fix; one line
    however many. ``whole`` names the document where a problem is in no key of it."""

    errors = sorted(Draft202012Validator(shape).iter_errors(data), key=_order)
    if not errors:
        return
    found = [(_where(list(e.absolute_path), data, whole), *_describe(e)) for e in errors]
    if len(found) == 1:
        ((where, problem, fix),) = found
        raise PlanError(f"{name}: {where}: {problem}.", f"{fix}.")
    listed = "; ".join(f"{where}: {problem} ({fix})" for where, problem, fix in found)
    raise PlanError(
        f"{name}: {len(found)} problems: {listed}.",
        "correct each as its brackets say; every key: `maestro plan --schema`.",
    )

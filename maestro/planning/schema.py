"""The plan a hub produces, as a JSON Schema, and its errors as one line each.

The schema is data (printed by ``maestro plan --schema`` for the hub to follow); the
error mapping turns jsonschema's findings into a message naming the key path
(``tasks[2].files``) and a fix with an example of the right shape.
"""

from __future__ import annotations

import difflib
from typing import Any

from maestro.errors import PlanError
from maestro.formatting import key_path
from maestro.state.model import RISKS, SPECIALISTS, TASK_ID, TOOLS

INPUT_VERSION = 1
_ONE_LINE = r"^[^\r\n]*\S[^\r\n]*$"
_ID = {
    "type": ["string", "integer"],
    "pattern": TASK_ID.pattern,
    "minimum": 0,
    "description": "Task id: a number, or a dotted number for a sub-task (1, 2, 2.1).",
}

TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "title"],
    # A task names a specialist, an agent, or both.
    "anyOf": [{"required": ["specialist"]}, {"required": ["agent"]}],
    "properties": {
        "id": _ID,
        "title": {
            "type": "string",
            "pattern": _ONE_LINE,
            "maxLength": 200,
            "description": "One atomic outcome, one line: 'Add the /login endpoint'.",
        },
        "specialist": {
            "enum": list(SPECIALISTS),
            "description": "The kind of work (or name an agent, or both).",
        },
        "agent": {
            "type": "string",
            "pattern": r"^[a-z0-9][a-z0-9-]*$",
            "description": "Persona from `maestro agents list` (default: the specialist's).",
        },
        "tool": {"enum": TOOLS, "description": "The spoke CLI that does the task."},
        "depends": {
            "type": "array",
            "items": _ID,
            "uniqueItems": True,
            "description": "Ids of tasks that must be done first.",
        },
        "files": {
            "type": "array",
            "items": {"type": "string", "pattern": _ONE_LINE},
            "uniqueItems": True,
            "description": "Files the task may create or change, relative to the project root.",
        },
        "criteria": {
            "type": "array",
            "items": {"type": "string", "pattern": _ONE_LINE},
            "description": "Testable success criteria.",
        },
        "validation": {
            "type": "string",
            "pattern": _ONE_LINE,
            "description": "One shell command that checks the work (exit 0 = pass).",
        },
        "risk": {"enum": list(RISKS), "description": "Impact if the task goes wrong."},
    },
}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://maestro-orchestra.invalid/schema/plan-input-v1.json",
    "title": "Maestro plan input",
    "description": "A goal decomposed into atomic tasks. Pipe it to `maestro plan --from -`.",
    "type": "object",
    "additionalProperties": False,
    "required": ["goal", "tasks"],
    "properties": {
        "version": {"const": INPUT_VERSION, "description": "Plan input format version."},
        "goal": {"type": "string", "minLength": 1, "description": "The high-level objective."},
        "hub": {"enum": TOOLS, "description": "The CLI that made this plan."},
        "tasks": {"type": "array", "minItems": 1, "items": TASK_SCHEMA},
    },
}

# What a right value looks like, per key, for the fix of a schema error.
EXAMPLES = {
    "": "a mapping with goal: and tasks: (see `maestro plan --schema`)",
    "goal": "goal: Add user authentication",
    "hub": "hub: claude",
    "tasks": "tasks: [{id: 1, title: ..., specialist: code, ...}]",
    "id": 'id: 1 (or "2.1", quoted, for a sub-task)',
    "title": "title: Add the /login endpoint",
    "specialist": "specialist: code",
    "agent": "agent: coder",
    "tool": "tool: gemini",
    "depends": "depends: [1, 2]",
    "files": "files: [src/auth.py, tests/test_auth.py]",
    "criteria": 'criteria: ["pytest tests/test_auth.py passes"]',
    "validation": "validation: pytest tests/test_auth.py",
    "risk": "risk: low",
    "version": "version: 1",
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


def _describe(error: Any) -> tuple[str, str]:
    """(problem, fix) for one jsonschema ValidationError."""
    parts = list(error.absolute_path)
    key = _key_of(parts)
    example = EXAMPLES.get(key, "see `maestro plan --schema`")
    value = error.instance
    kind = error.validator
    if kind == "required":
        props = error.schema.get("properties", {})
        missing = [k for k in error.validator_value if isinstance(value, dict) and k not in value]
        name = missing[0] if missing else "?"
        return (
            f"missing required key '{name}'",
            f"add {EXAMPLES.get(name, name)}" if name in props else "add it",
        )
    if (
        kind == "anyOf"
        and isinstance(value, dict)
        and "specialist" not in value
        and "agent" not in value
    ):
        return (
            "names neither a specialist nor an agent",
            "add specialist: code (or agent: coder, or both)",
        )
    if kind == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = [k for k in value if k not in allowed]
        name = str(extra[0]) if extra else "?"
        close = difflib.get_close_matches(name, allowed, n=1)
        hint = f"did you mean '{close[0]}'? Otherwise " if close else ""
        return f"unknown key '{name}'", f"{hint}remove it or use one of: {', '.join(allowed)}"
    if kind == "type":
        wanted = (
            error.validator_value
            if isinstance(error.validator_value, list)
            else [error.validator_value]
        )
        names = " or ".join(_TYPE_NAMES.get(str(w), str(w)) for w in wanted)
        if key in ("id", "depends") and isinstance(value, float):
            return (
                f"task id {value!r} was read as a decimal number",
                'quote dotted ids so they stay text: id: "2.1", depends: ["2.1"]',
            )
        fix = f"write it as {example}"
        if (
            "string" in wanted
            and isinstance(value, (bool, int, float))
            and not isinstance(value, list)
        ):
            fix += " (quote it if YAML reads it as a number or yes/no)"
        return f"expected {names}, got {_kind(value)}", fix
    if kind == "const" and key == "version":
        return (
            f"plan input format version {value!r} is not one this Maestro reads ({INPUT_VERSION})",
            f"write version: {INPUT_VERSION}, or upgrade Maestro (pip install -U maestro-orchestra)",
        )
    if kind in ("enum", "const"):
        allowed = error.validator_value if kind == "enum" else [error.validator_value]
        close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1)
        hint = f"did you mean '{close[0]}'? Otherwise " if close else ""
        return (
            f"{value!r} is not allowed",
            f"{hint}use one of: {', '.join(str(a) for a in allowed)}",
        )
    if kind == "pattern":
        if key in ("id", "depends"):
            return (
                f"{value!r} is not a task id",
                'use a number like 1 or a dotted number like "2.1"',
            )
        if key == "agent":
            return (
                f"{value!r} is not an agent name",
                "use a lowercase name like coder (see `maestro agents list`)",
            )
        return "must be one non-empty line", f"write it on one line, e.g. {example}"
    if kind == "minimum":
        return f"{value!r} is not a task id", "use a number of 0 or more"
    if kind in ("minLength", "minItems"):
        return "is empty", f"fill it in, e.g. {example}"
    if kind == "maxLength":
        return "is too long", "keep a task title under 200 characters; move detail to criteria"
    if kind == "uniqueItems":
        return "lists the same item twice", "remove the repeated item"
    return error.message, f"see `maestro plan --schema` ({example})"


def _order(error: Any) -> tuple[Any, ...]:
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path)


def check(data: Any, name: str = "plan input") -> None:
    """Raise a one-line ``PlanError`` for the first schema violation (by key path)."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(data), key=_order)
    if not errors:
        return
    first = errors[0]
    problem, fix = _describe(first)
    more = len(errors) - 1
    tail = f" ({more} more problem{'s' if more != 1 else ''} after this one)" if more else ""
    raise PlanError(
        f"{name}: {key_path(first.absolute_path, 'the plan')}: {problem}{tail}.", f"{fix}."
    )

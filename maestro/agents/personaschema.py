"""The persona file format: YAML frontmatter checked by a JSON Schema, and the body's
required sections. One function returns every violation, so `maestro agents validate`
can report them all at once instead of stopping at the first."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from maestro import roster
from maestro.agents.tiers import TOOLS
from maestro.formatting import key_path

NAME_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"

# `model` is the model for the CLI whose names the notes use (``reads_persona_model`` in
# the roster: Gemini). `models` optionally names a model for the other vendors' CLIs; where it has none the spoke
# CLI's own default model is used (or MAESTRO_DEFAULT_MODEL / [agents.NAME] overrides).
FRONTMATTER_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Maestro agent persona frontmatter",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "name",
        "description",
        "kind",
        "tools",
        "model",
        "temperature",
        "max_turns",
        "timeout_mins",
    ],
    "properties": {
        "name": {"type": "string", "pattern": NAME_PATTERN},
        "description": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "pattern": r"^[^\r\n]+$",
        },
        "kind": {"enum": ["local"]},
        "tools": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"enum": list(TOOLS)},
        },
        "model": {"type": "string", "minLength": 1},
        "models": {
            "type": "object",
            "propertyNames": {"enum": []},  # filled in by frontmatter_schema() from the roster
            "additionalProperties": {"type": "string", "minLength": 1},
        },
        "temperature": {"type": "number", "minimum": 0, "maximum": 1},
        "max_turns": {"type": "integer", "minimum": 1, "maximum": 500},
        "timeout_mins": {"type": "number", "exclusiveMinimum": 0, "maximum": 1440},
    },
}


def frontmatter_schema() -> dict[str, Any]:
    """The schema with the CLIs a persona's ``models`` may name, as the roster has them now."""
    schema = copy.deepcopy(FRONTMATTER_SCHEMA)
    names = [cli.name for cli in roster.real() if not cli.reads_persona_model]
    schema["properties"]["models"]["propertyNames"]["enum"] = names
    return schema


BODY_SECTIONS = (
    "Role",
    "Methodology",
    "Decision Frameworks",
    "Output Contract",
    "Anti-Patterns",
    "Downstream Consumers",
)


@dataclass(frozen=True)
class Violation:
    file: str
    key: str  # frontmatter key path ("tools[2]"), "body", or "(frontmatter)"
    message: str
    level: str = "error"  # error | warning

    def line(self) -> str:
        tag = "" if self.level == "error" else " (warning)"
        return f"{self.file}: {self.key}: {self.message}{tag}"


def _describe(error: Any) -> str:
    # jsonschema's default messages quote whole instances; these read better on one line.
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"missing required key {missing!r}"
    if error.validator == "additionalProperties" and not error.path:
        return str(error.message).replace("Additional properties are not allowed", "unknown key(s)")
    if error.validator == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value)
        return f"{error.instance!r} is not one of: {allowed}"
    if error.validator == "pattern" and list(error.path) == ["name"]:
        return f"{error.instance!r} is not kebab-case (lowercase words joined by '-')"
    if error.validator == "pattern" and list(error.path) == ["description"]:
        return "must be a single line"
    return str(error.message)


def validate_frontmatter(meta: Any, file: str) -> list[Violation]:
    if not isinstance(meta, dict):
        return [Violation(file, "(frontmatter)", "must be a YAML mapping of keys to values")]

    validator = Draft202012Validator(frontmatter_schema())
    found = []
    for error in sorted(
        validator.iter_errors(meta), key=lambda e: (list(map(str, e.path)), e.message)
    ):
        key = key_path(error.path, "(frontmatter)")
        if error.validator == "required":
            key = error.message.split("'")[1] if "'" in error.message else key
        found.append(Violation(file, key, _describe(error)))
    return found


_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def validate_body(body: str, file: str, *, level: str = "error") -> list[Violation]:
    present = {match.group(1).strip().lower() for match in _HEADING.finditer(body)}
    return [
        Violation(file, "body", f"missing section '## {section}'", level)
        for section in BODY_SECTIONS
        if section.lower() not in present
    ]

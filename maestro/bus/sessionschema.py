"""The session manifest's format (JSON Schema) and its check at the boundary.

``.ai/maestro/sessions/<id>/manifest.json`` says its ``format_version``: older versions
are upgraded on read, newer ones refused with a message naming the fix.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from maestro.errors import MaestroError
from maestro.paths import ID_PATTERN

FORMAT_VERSION = 1
MODES = ("worker", "coordinator", "coordinated-worker", "coordinated-coordinator")
STATUSES = ("working", "idle", "completed", "failed", "stopped", "dead")
ENDED = ("completed", "failed", "stopped", "dead")

_ID = {"type": "string", "pattern": ID_PATTERN}
_OPT_ID = {"type": ["string", "null"], "pattern": ID_PATTERN}
_OPT_TEXT = {"type": ["string", "null"]}

MANIFEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Maestro session manifest",
    "type": "object",
    "required": ["format_version", "id", "mode", "strategy", "capabilities", "status", "created"],
    "additionalProperties": False,
    "properties": {
        "format_version": {"type": "integer", "minimum": 1},
        "id": _ID,
        "mode": {"enum": list(MODES)},
        "strategy": {"type": "string"},
        "tier": {"enum": ["read-only", "read+shell", "read+write", "full", None]},
        "capabilities": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "coordinator_session_id": _OPT_ID,
        "parent_session_id": _OPT_ID,
        "run_id": _OPT_TEXT,
        "task_ids": {"type": "array", "items": {"type": "string"}},
        "cli": _OPT_TEXT,
        "agent": _OPT_TEXT,
        "process": {
            "type": ["object", "null"],
            "required": ["pid"],
            "additionalProperties": False,
            "properties": {
                "pid": {"type": "integer", "minimum": 1},
                "start": {"type": ["integer", "null"]},
                "namespace": _OPT_TEXT,
                "boot": _OPT_TEXT,
                "pgid": {"type": ["integer", "null"]},
            },
        },
        "status": {"enum": list(STATUSES)},
        "reason": _OPT_TEXT,
        "created": {"type": "string"},
        "updated": {"type": "string"},
        "directive": {
            "type": ["object", "null"],
            "required": ["subject", "message", "from"],
            "additionalProperties": False,
            "properties": {
                "subject": {"type": "string"},
                "message": {"type": "string"},
                "from": _ID,
            },
        },
        "notes": {"type": "array", "items": {"type": "string"}},
    },
}


@functools.cache
def _validator() -> Any:
    """jsonschema's, built once per process."""
    # local: jsonschema takes 30-100 ms to import, and `maestro wait` and `mail wait`
    # (which hubs call in a loop) read sessions without writing one.
    import jsonschema

    return jsonschema.Draft202012Validator(MANIFEST_SCHEMA)


def check(data: Any, path: Path) -> dict[str, Any]:
    """Validate a manifest read from or about to be written to ``path``; upgrade older
    versions; refuse newer ones. Errors name the file and the key path."""
    if not isinstance(data, dict):
        raise MaestroError(
            "the session manifest is not a JSON object.",
            "delete that session folder; it is only a record.",
            file=path,
        )
    version = data.get("format_version")
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise MaestroError(
            f"the session manifest is format {version}, newer than this Maestro reads ({FORMAT_VERSION}).",
            "upgrade Maestro.",
            file=path,
        )
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.path) or "(top level)"
        raise MaestroError(
            f"session manifest key {where}: {first.message}.",
            "fix or delete that session folder; it is only a record.",
            file=path,
        )
    return data

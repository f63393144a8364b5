"""The one renderer: text for people, a versioned JSON envelope for hubs and scripts."""

from __future__ import annotations

import json
import re
from typing import Any, TextIO

from maestro.cli.context import Result
from maestro.errors import MaestroError

JSON_FORMAT = 1
# json.dumps escapes the C0 controls; DEL and the C1 controls it leaves as they are, and
# a terminal showing the envelope would act on them. Escaped, they decode the same.
_UNESCAPED = re.compile("[\x7f-\x9f]")


def envelope(command: str, ok: bool, exit_code: int, **payload: Any) -> dict[str, Any]:
    return {
        "maestro_format": JSON_FORMAT,
        "command": command,
        "ok": ok,
        "exit_code": exit_code,
        **payload,
    }


def dumps(body: dict[str, Any]) -> str:
    """One line, no spaces: JSON is for programs and models, which pay per token."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
    return _UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render_result(result: Result, as_json: bool, out: TextIO) -> None:
    if as_json:
        body = envelope(result.command, result.exit_code == 0, result.exit_code, data=result.data)
        out.write(dumps(body) + "\n")
    elif result.text:
        out.write(result.text)  # whole: a Frame's colour codes print only as a Frame
        if not result.text.endswith("\n"):
            out.write("\n")
    out.flush()


def render_error(
    command: str, error: MaestroError, as_json: bool, out: TextIO, err: TextIO
) -> None:
    """Once: as the JSON envelope under --json, else as one line on stderr."""
    if as_json:
        body = envelope(command, False, error.exit_code, error=error.to_dict())
        out.write(dumps(body) + "\n")
    else:
        err.write(f"maestro: error: {error}\n")

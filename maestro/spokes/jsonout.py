"""Reading the CLIs' JSON output defensively, and naming the error kind of a failure.

Output of a killed or confused CLI may be truncated JSON, JSON after a stack trace, or no
JSON at all: these helpers return None instead of raising, so the adapters can say what
they found in one clear line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from maestro.process import ended

_DECODER = json.JSONDecoder()


def load_json_object(text: str) -> dict[str, Any] | None:
    """``text`` (a whole output or one JSONL line) as one JSON object, else None."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def json_events(text: str) -> list[dict[str, Any]]:
    """Every line of JSONL ``text`` that is a JSON object (other lines are skipped)."""
    events = []
    for line in text.splitlines():
        event = load_json_object(line)
        if event is not None:
            events.append(event)
    return events


def _objects_in(text: str) -> Iterator[dict[str, Any]]:
    """JSON objects embedded in free text (a stack trace, '[ERROR] {...}'), in order.
    Only braces that start a line or follow '] ' are tried: that is where the CLIs put
    their JSON, and it skips the braces inside quoted error strings."""
    for match in re.finditer(r"(?m)^(?:\[[A-Z]+\] )?(\{)", text):
        try:
            value, _ = _DECODER.raw_decode(text, match.start(1))
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def last_object_with(text: str, key: str) -> dict[str, Any] | None:
    found = None
    for value in _objects_in(text):
        if key in value:
            found = value
    return found


def as_int(value: Any) -> int:
    """A token count from JSON; anything that is not a number counts as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return 0


def http_kind(status: int | None) -> str | None:
    """The error kind of an HTTP status from a provider's API."""
    if status is None:
        return None
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "network"
    if 500 <= status <= 599:
        return "server"
    return None


_MESSAGE_KINDS = (
    (
        "auth",
        re.compile(
            r"unauthori[sz]ed|failed to authenticate|invalid api key|api key not valid|not logged in|please run /login|authentication|permission denied: 403",
            re.IGNORECASE,
        ),
    ),
    (
        "rate_limit",
        re.compile(
            r"rate.?limit|too many requests|quota|usage limit|resource.?exhausted", re.IGNORECASE
        ),
    ),
    # Codex words a 500 as "We're currently experiencing high demand, which may cause
    # temporary errors." with no status, and a full model as "Selected model is at
    # capacity"; Claude adds "This is a server-side issue" to its 5xx results.
    (
        "server",
        re.compile(
            r"overloaded|internal server error|service unavailable|bad gateway|gateway timeout|"
            r"experiencing high demand|at capacity|capacity is unavailable|capacity unavailable|"
            r"server-side issue",
            re.IGNORECASE,
        ),
    ),
    (
        "network",
        re.compile(
            r"connection (error|refused|reset|closed)|econnrefused|econnreset|enotfound|etimedout|eai_again|fetch failed|network|stream disconnected|error sending request|dns|socket hang up|timed out",
            re.IGNORECASE,
        ),
    ),
)
# "unexpected status 401", '"code":429', "API Error: 500", Claude's "Request rejected (429)".
_STATUS = re.compile(
    r"(?:status(?: code)?[:= ]+|\"code\"\s*:\s*\"?|API Error: |error: |rejected \()(\d{3})\b",
    re.IGNORECASE,
)


def status_in(message: str) -> int | None:
    """An HTTP status named in an error message ('unexpected status 401', '"code":429')."""
    match = _STATUS.search(message)
    return int(match.group(1)) if match else None


def message_kind(message: str) -> str | None:
    """Error kind from an error message's HTTP status or wording, None if it says neither."""
    kind = http_kind(status_in(message))
    if kind:
        return kind
    for name, pattern in _MESSAGE_KINDS:
        if pattern.search(message):
            return name
    return None


def inner_message(message: str) -> str:
    """The provider's own words inside a wrapped API error, e.g. '[API Error:
    {"error":{"code":401,"message":"bad key"}}]' -> 'bad key'; else the message itself."""
    for value in _objects_in(message.strip().strip("[]").removeprefix("API Error: ")):
        error = value.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return message


def first_line(text: str, limit: int = 300) -> str:
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def last_line(text: str, limit: int = 300) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def garbled(tool: str, outcome_stdout: str, exit_code: int | None, stderr: str) -> str:
    """One line saying a CLI's output could not be read, with what it did print."""
    shown = first_line(outcome_stdout, 120)
    if shown:
        where = f"its output starts with {shown!r}"
    elif last_line(stderr):
        where = f"stderr says {last_line(stderr, 200)!r}"
    else:
        where = "it printed nothing"
    return f"{tool} {ended(exit_code)} without a readable JSON result; {where}."

"""What a fake CLI prints: a genuine host sample, edited as the test's step asks.

Edits keep the sample's format exactly (compact JSON for Claude, indented JSON for Gemini,
JSONL events for streams and Codex) and change only the fields a step names: the final
text, token usage, session id, cost, or the HTTP status of an API error.
"""

from __future__ import annotations

import json
from typing import Any

from samples import SAMPLES, read_sample

DEFAULT_SAMPLE = {
    ("claude", "json"): "claude_json",
    ("claude", "stream-json"): "claude_stream",
    ("claude", "text"): "claude_text",
    ("gemini", "json"): "gemini_json",
    ("gemini", "stream-json"): "gemini_stream",
    ("gemini", "text"): "gemini_text",
    ("codex", "json"): "codex_json",
    ("codex", "text"): "codex_text",
}
TURN_LIMIT = {"claude": "claude_max_turns", "gemini": "gemini_max_turns"}
REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def pick_sample(cli: str, mode: str, step: dict[str, Any]) -> str:
    if step.get("turn_limit"):
        if cli not in TURN_LIMIT:
            raise SystemExit(f"fake {cli}: no turn-limit sample (the real CLI has no turn limit)")
        name = TURN_LIMIT[cli]
    elif step.get("http"):
        # The genuine sample for this status when there is one (codex words a 500 as
        # "We're currently experiencing high demand..."), else the 401 one edited.
        genuine = f"{cli}_http{int(step['http'])}"
        name = genuine if (SAMPLES / f"{genuine}.meta.json").is_file() else f"{cli}_http401"
    else:
        name = step.get("sample") or DEFAULT_SAMPLE[(cli, mode)]
    if mode == "stream-json" and "_stream" not in name:
        streamed = name.replace(f"{cli}_", f"{cli}_stream_", 1)
        if (SAMPLES / f"{streamed}.meta.json").is_file():
            name = streamed
    return name


def _swap_status(text: str, status: int) -> str:
    """Turn a sample's HTTP 401 into another status, wording included."""
    reason = REASONS.get(status, "Error")
    if status not in (401, 403):
        kind = (
            "rate_limit"
            if status == 429
            else "server_error"
            if status >= 500
            else "invalid_request"
        )
        text = text.replace("Failed to authenticate. ", "").replace(
            '"error":"authentication_failed"', f'"error":"{kind}"'
        )
    text = text.replace("401 Unauthorized", f"{status} {reason}").replace(
        "fake 401", f"fake {status}"
    )
    for old, new in (
        ('"code":401', f'"code":{status}'),
        ('\\"code\\":401', f'\\"code\\":{status}'),
        ('"code": 401', f'"code": {status}'),
        ("status: 401", f"status: {status}"),
        ("API Error: 401", f"API Error: {status}"),
    ):
        text = text.replace(old, new)
    return text


def _claude_result(obj: dict[str, Any], step: dict[str, Any], text: str | None) -> None:
    if text is not None:
        obj["result"] = text
    if "usage" in step:
        u = step["usage"]
        obj.setdefault("usage", {}).update(
            input_tokens=u.get("input", 0),
            output_tokens=u.get("output", 0),
            cache_read_input_tokens=u.get("cached", 0),
            cache_creation_input_tokens=u.get("cache_write", 0),
        )
    if "cost" in step:
        obj["total_cost_usd"] = step["cost"]
    if "http" in step:
        obj["api_error_status"] = step["http"]
    if step.get("denials"):
        obj["permission_denials"] = step["denials"]


def _gemini_stats(usage: dict[str, int], model: str) -> dict[str, Any]:
    inp, out, cached = usage.get("input", 0), usage.get("output", 0), usage.get("cached", 0)
    tokens = {
        "input": inp,
        "prompt": inp + cached,
        "candidates": out,
        "total": inp + cached + out,
        "cached": cached,
        "thoughts": 0,
        "tool": 0,
    }
    return {
        model: {
            "api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 10, "errorsByType": {}},
            "tokens": tokens,
            "roles": {
                "main": {
                    "totalRequests": 1,
                    "totalErrors": 0,
                    "totalLatencyMs": 10,
                    "tokens": tokens,
                }
            },
        }
    }


def _gemini_stream_stats(usage: dict[str, int], model: str) -> dict[str, Any]:
    inp, out, cached = usage.get("input", 0), usage.get("output", 0), usage.get("cached", 0)
    entry = {
        "total_tokens": inp + cached + out,
        "input_tokens": inp + cached,
        "output_tokens": out,
        "cached": cached,
        "input": inp,
    }
    return {**entry, "duration_ms": 10, "tool_calls": 0, "models": {model: entry}}


def edit_json(cli: str, stdout: str, step: dict[str, Any], text: str | None, model: str) -> str:
    obj = json.loads(stdout)
    if cli == "claude":
        _claude_result(obj, step, text)
        out = compact(obj)
    else:
        if text is not None and "response" in obj:
            obj["response"] = text
        if "usage" in step:
            obj.setdefault("stats", {})["models"] = _gemini_stats(step["usage"], model)
        out = json.dumps(obj, indent=2, ensure_ascii=False)
    if "session_id" in step:
        obj["session_id"] = step["session_id"]
        out = compact(obj) if cli == "claude" else json.dumps(obj, indent=2, ensure_ascii=False)
    return out + ("\n" if cli == "claude" else "")


def edit_events(
    cli: str, stdout: str, step: dict[str, Any], text: str | None, model: str
) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    session = step.get("session_id")
    lines: list[str] = []
    last_text = max((i for i, e in enumerate(events) if _is_answer(cli, e)), default=None)
    replaced = False
    for index, event in enumerate(events):
        if session and "session_id" in event:
            event["session_id"] = session
        if session and event.get("type") == "thread.started":
            event["thread_id"] = session
        if text is not None and _is_answer(cli, event):
            if cli == "gemini":
                if replaced:
                    continue  # the deltas collapse into one message with the new text
                event["content"], replaced = text, True
            elif index == last_text:
                if cli == "claude":
                    event["message"]["content"] = [{"type": "text", "text": text}]
                else:
                    event["item"]["text"] = text
        if event.get("type") == "result":
            if cli == "claude":
                _claude_result(event, step, text)
            elif "usage" in step:
                event["stats"] = _gemini_stream_stats(step["usage"], model)
        if event.get("type") == "turn.completed" and "usage" in step:
            u = step["usage"]
            event["usage"] = {
                "input_tokens": u.get("input", 0) + u.get("cached", 0),
                "cached_input_tokens": u.get("cached", 0),
                "cache_write_input_tokens": 0,
                "output_tokens": u.get("output", 0),
                "reasoning_output_tokens": 0,
            }
        lines.append(compact(event) + "\n")
    return lines


def _is_answer(cli: str, event: dict[str, Any]) -> bool:
    if cli == "claude":
        content = (event.get("message") or {}).get("content") or []
        return event.get("type") == "assistant" and any(c.get("type") == "text" for c in content)
    if cli == "gemini":
        return event.get("type") == "message" and event.get("role") == "assistant"
    return (
        event.get("type") == "item.completed"
        and (event.get("item") or {}).get("type") == "agent_message"
    )


def render(cli: str, mode: str, step: dict[str, Any], model: str) -> tuple[list[str], str, int]:
    """(stdout lines, stderr, exit code) of a sample-based step."""
    sample = read_sample(pick_sample(cli, mode, step))
    stdout, stderr, code = sample.stdout, sample.stderr, sample.exit_code
    if cli == "codex":
        # The fake printed this itself when it read stdin, as the real codex does.
        stderr = stderr.replace("Reading additional input from stdin...\n", "", 1)
    if step.get("http"):
        status = int(step["http"])
        if not sample.name.endswith(f"_http{status}"):
            stdout, stderr = _swap_status(stdout, status), _swap_status(stderr, status)
        if cli == "gemini":
            code = status % 256
    text = step.get("text")
    if step.get("huge_mb"):
        pad = "x" * 1023 + "\n"
        text = (
            (text or "FAKE-REPLY: huge output follows.")
            + "\n"
            + pad * (int(step["huge_mb"] * 1024))
        )
        stderr += "noise: " + pad * (int(step["huge_mb"] * 1024))
    stripped = stdout.strip()
    if not stripped or sample.meta.get("stdout_kind") == "text":
        lines = [text + "\n"] if (text is not None and stripped) else ([stdout] if stdout else [])
    elif sample.meta.get("stdout_kind") == "json":
        lines = [edit_json(cli, stdout, step, text, model)]
    else:
        lines = edit_events(cli, stdout, step, text, model)
    return lines, stderr, int(step.get("exit", code))


def gemini_retries(step: dict[str, Any]) -> bool:
    """Whether a real gemini would retry this step's API error itself (429 and 5xx,
    unless the step says ``retries: 0``, as for a user with general.maxAttempts 1)."""
    status = int(step.get("http") or 0)
    return (status == 429 or 500 <= status <= 599) and bool(step.get("retries", 1))


def gemini_retry_notice(status: int) -> str:
    """gemini's stderr up to its first retry notice, as the real one prints it."""
    base = 429 if status == 429 else 500
    text = read_sample(f"gemini_retry{base}").stderr
    for old, new in (
        (f"status {base}", f"status {status}"),
        (f'"code":{base}', f'"code":{status}'),
        (f"fake {base}", f"fake {status}"),
        (f"status: {base}", f"status: {status}"),
    ):
        text = text.replace(old, new)
    return text

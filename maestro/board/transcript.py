"""A spoke's streamed output as a readable transcript, read from the end of its file.

Each attempt's stdout is kept line by line in the run folder as its spoke prints it
(``task-<id>-attempt-<n>.stream.jsonl``). Claude and Gemini print ``stream-json``, Codex
``--json`` lines; a line of another shape (a CLI run without a streaming format, or plain
text) is shown as it is. Each line becomes entries of four kinds: ``message`` (who said
what), ``tool`` (a call with its arguments), ``result`` (what a tool gave back: long, so
the page folds it) and ``status`` (a start, the end, an error). Nothing here is HTML: the
page puts every string in as text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

TAIL_BYTES = 64 * 1024  # what one read takes; a page opening a transcript reads its end
BEHIND_BYTES = 4 * TAIL_BYTES  # a page further behind than this jumps to the end
TEXT_LIMIT = 4000  # one entry's text, cut beyond this (a tool's output can be megabytes)

Entry = dict[str, Any]


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + f" … ({len(text):,} chars)"


def _entry(kind: str, text: Any, **extra: Any) -> Entry:
    return {"kind": kind, "text": _cut(text), **{k: v for k, v in extra.items() if v}}


def _claude(event: dict[str, Any]) -> list[Entry]:
    kind = event.get("type")
    if kind == "system":
        return [
            _entry(
                "status",
                f"session {event.get('session_id', '?')} started ({event.get('subtype', '')})",
            )
        ]
    if kind == "result":
        usage = event.get("usage") or {}
        tokens = sum(v for k, v in usage.items() if k.endswith("tokens") and isinstance(v, int))
        state = "error" if event.get("is_error") else "done"
        return [_entry("status", f"{state}: {event.get('subtype', '')}, {tokens:,} tokens")]
    message = event.get("message") or {}
    content = message.get("content")
    if isinstance(content, str):
        return [_entry("message", content, who=message.get("role", kind))]
    entries = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        part = block.get("type")
        if part == "text":
            entries.append(_entry("message", block.get("text", ""), who=message.get("role")))
        elif part == "thinking":
            entries.append(_entry("message", block.get("thinking", ""), who="thinking"))
        elif part == "tool_use":
            entries.append(_entry("tool", block.get("input", {}), name=block.get("name", "tool")))
        elif part == "tool_result":
            output = block.get("content", "")
            if isinstance(output, list):
                output = "\n".join(str(p.get("text", p)) for p in output if isinstance(p, dict))
            entries.append(_entry("result", output, error=bool(block.get("is_error"))))
    return entries


def _gemini(event: dict[str, Any]) -> list[Entry]:
    kind = event.get("type")
    if kind == "init":
        return [
            _entry(
                "status",
                f"session {event.get('session_id', '?')} started ({event.get('model', '')})",
            )
        ]
    if kind == "message":
        return [
            _entry(
                "message", event.get("content", ""), who=event.get("role"), delta=event.get("delta")
            )
        ]
    if kind == "tool_use":
        return [_entry("tool", event.get("parameters", {}), name=event.get("tool_name", "tool"))]
    if kind == "tool_result":
        failed = event.get("status") not in (None, "success")
        return [_entry("result", event.get("output", event.get("error", "")), error=failed)]
    if kind == "result":
        stats = event.get("stats") or {}
        return [
            _entry(
                "status", f"{event.get('status', 'done')}: {stats.get('total_tokens', 0):,} tokens"
            )
        ]
    if kind == "error":
        return [_entry("status", event.get("message", event), error=True)]
    return []


def _codex(event: dict[str, Any]) -> list[Entry]:
    kind = event.get("type", "")
    if kind == "thread.started":
        return [_entry("status", f"thread {event.get('thread_id', '?')} started")]
    if kind == "turn.completed":
        usage = event.get("usage") or {}
        tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        return [_entry("status", f"turn done: {tokens:,} tokens")]
    if kind in ("turn.failed", "error"):
        error = event.get("error") or event
        return [_entry("status", error.get("message", error), error=True)]
    item = event.get("item") or {}
    if kind != "item.completed" and not (
        kind == "item.started" and item.get("type") == "command_execution"
    ):
        return []
    what = item.get("type")
    if what == "agent_message":
        return [_entry("message", item.get("text", ""), who="assistant")]
    if what == "reasoning":
        return [_entry("message", item.get("text", ""), who="thinking")]
    if what == "command_execution":
        if kind == "item.started":
            return [_entry("tool", {"command": item.get("command", "")}, name="shell")]
        failed = item.get("exit_code") not in (0, None)
        return [_entry("result", item.get("aggregated_output", ""), error=failed)]
    if what == "file_change":
        changes = item.get("changes") or []
        text = "\n".join(
            f"{c.get('kind', '?')} {c.get('path', '?')}" for c in changes if isinstance(c, dict)
        )
        return [_entry("tool", text, name="edit")]
    rest = {k: v for k, v in item.items() if k not in ("id", "type")}
    return [_entry("tool", rest, name=str(what))]


def entries(line: str) -> list[Entry]:
    """The transcript entries of one line of a spoke's stdout."""
    line = line.strip()
    if not line:
        return []
    try:
        event = json.loads(line)
    except ValueError:
        return [_entry("message", line, who="output")]
    if not isinstance(event, dict):
        return [_entry("message", line, who="output")]
    kind = str(event.get("type", ""))
    if "." in kind or kind in ("turn.started",):
        return _codex(event)
    if kind in ("system", "assistant", "user", "result") and (
        "message" in event or "subtype" in event
    ):
        return _claude(event)
    return _gemini(event)


def merged(items: list[Entry]) -> list[Entry]:
    """Gemini's message deltas joined into one message each."""
    out: list[Entry] = []
    for item in items:
        last = out[-1] if out else None
        if last and item.get("delta") and last.get("delta") and last.get("who") == item.get("who"):
            last["text"] = _cut(last["text"] + item["text"])
        else:
            out.append(dict(item))
    return out


def _past_line(handle: IO[bytes]) -> int | None:
    """Read on to the end of the line under way, a slice at a time (a line may be
    megabytes long); the bytes read, or None when the file ends first."""
    read = 0
    while chunk := handle.read(TAIL_BYTES):
        end = chunk.find(b"\n")
        if end >= 0:
            handle.seek(end + 1 - len(chunk), 1)
            return read + end + 1
        read += len(chunk)
    return None


def _skipped(count: int) -> Entry:
    return _entry("status", f"… {count:,} bytes of the transcript not shown: it goes on here")


def tail(path: Path, offset: int | None = None) -> tuple[list[Entry], int, bool]:
    """The entries from byte ``offset``, some ``TAIL_BYTES`` of whole lines at once; the
    offset to read on from; and whether more was left to read. With no offset, or one
    more than ``BEHIND_BYTES`` behind the end, the entries of the last ``TAIL_BYTES``,
    after one that says how much was skipped: a page never falls behind a spoke that
    prints faster than it reads. A line longer than ``TAIL_BYTES`` (a tool's output) is
    shown cut, and read past; one still being written is read next time."""
    found: list[Entry] = []
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            start = 0 if offset is None else min(max(0, offset), size)
            if offset is None or size - start > BEHIND_BYTES:
                handle.seek(max(start, size - TAIL_BYTES))
                if handle.tell() > 0:  # from the start of the next whole line
                    handle.seek(-1, 1)
                    if handle.read(1) != b"\n" and _past_line(handle) is None:
                        return [], start, False  # in a line still being written
                if handle.tell() > start:
                    found.append(_skipped(handle.tell() - start))
                start = handle.tell()
            handle.seek(start)
            read = 0
            while read < TAIL_BYTES:
                raw = handle.readline(TAIL_BYTES)
                if raw.endswith(b"\n"):
                    found += entries(raw.decode("utf-8", "replace"))
                    read += len(raw)
                    continue
                rest = _past_line(handle) if len(raw) == TAIL_BYTES else None
                if rest is None:
                    break  # the end of the file, or of what is written so far
                read += len(raw) + rest
                text = raw[:TEXT_LIMIT].decode("utf-8", "replace")
                cut = f"{text} … (a line of {len(raw) + rest:,} bytes, cut)"
                found.append({"kind": "result", "text": cut, "cut": len(raw) + rest})
    except FileNotFoundError:
        return [], 0, False
    return merged(found), start + read, read >= TAIL_BYTES

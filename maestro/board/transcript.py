"""A spoke's streamed output as a readable transcript, read from the end of its file.

Each attempt's stdout is kept line by line in the run folder as its spoke prints it
(``task-<id>-attempt-<n>.stream.jsonl``). Claude and Gemini print ``stream-json``, Codex
``--json`` lines, the sim spoke Claude's shape; a line of another shape (a CLI run without
a streaming format, or plain text) is shown as it is. Each line becomes entries of four
kinds: ``message`` (who said what, Markdown), ``tool`` (a call: its command, or the file
it reads or writes with a compact diff of the edit, and its other arguments as ``key:
value`` lines), ``result`` (what a tool gave back, with the ``id`` of its call: long, so
the page folds it) and ``status`` (a start, the end with its tokens, an error). The tokens
are counted by the CLI's own spoke (``Spoke.watch``), as the engine counts the node's.
Nothing here is HTML: the page puts every string in as text.
"""

from __future__ import annotations

import difflib
import json
import shlex
from pathlib import Path
from typing import IO, Any

from maestro.spokes.contract import UsageTally
from maestro.spokes.registry import get_spoke

TAIL_BYTES = 64 * 1024  # what one read takes; a page opening a transcript reads its end
BEHIND_BYTES = 4 * TAIL_BYTES  # a page further behind than this jumps to the end
TEXT_LIMIT = 4000  # one entry's text, cut beyond this (a tool's output can be megabytes)
# A call's arguments that say what it does: the command it runs, else the file it touches.
COMMAND = "command"
PATHS = ("file_path", "absolute_path", "notebook_path", "path", "dir_path")

Entry = dict[str, Any]


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + f" … ({len(text):,} chars)"


def _entry(kind: str, text: Any, **extra: Any) -> Entry:
    return {"kind": kind, "text": _cut(text), **{k: v for k, v in extra.items() if v}}


def _tokens(cli: str, event: dict[str, Any]) -> int:
    """The tokens ``event`` reports, as ``cli``'s spoke counts them for the plan."""
    tally = UsageTally()
    get_spoke(cli).watch(event, tally)
    return tally.usage.total


def _lines(value: Any) -> str:
    """An argument's value as lines of text: a list one item a line."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join("\n- " + " · ".join(_flat(item)) for item in value)
    return json.dumps(value, ensure_ascii=False)


def _flat(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(v) for v in value.values() if isinstance(v, (str, int, float, bool))]
    return [value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)]


def _edit(old: Any, new: Any) -> list[str]:
    """The lines a replacement changes, as a unified diff without its file header."""
    before, after = _cut(str(old or "")).splitlines(), _cut(str(new or "")).splitlines()
    return list(difflib.unified_diff(before, after, lineterm="", n=1))[2:]


def _diff(args: dict[str, Any]) -> str:
    """The edit a call's arguments describe (taken out of them): a replacement's diff, an
    edit list's, or a new content's lines, each marked added."""
    lines: list[str] = []
    if "old_string" in args or "new_string" in args:
        lines += _edit(args.pop("old_string", ""), args.pop("new_string", ""))
    edits = args.pop("edits", None) if isinstance(args.get("edits"), list) else None
    for edit in edits or []:
        if isinstance(edit, dict):
            lines += _edit(edit.get("old_string"), edit.get("new_string"))
    for key in ("content", "new_source"):
        if isinstance(args.get(key), str):
            lines += ["+" + line for line in _cut(args.pop(key)).splitlines()]
    return _cut("\n".join(lines))


def _parts(parts: Any) -> str:
    """A tool's output given as content blocks: their text, and what the others were (an
    image is named, not dumped)."""
    return "\n".join(
        str(p.get("text", "")) if p.get("type") == "text" else f"[{p.get('type')}]"
        for p in parts or []
        if isinstance(p, dict)
    )


def _call(name: str, args: Any, call_id: Any = None) -> Entry:
    """A tool call as what it does: its command, or the file it touches and the edit,
    then its other arguments (whichever CLI made it: the names are the CLIs' own)."""
    if not isinstance(args, dict):
        return _entry("tool", args, name=name, id=call_id)
    rest = dict(args)
    command = rest.pop(COMMAND, None)
    path = next((rest.pop(key) for key in PATHS if isinstance(rest.get(key), str)), None)
    head = command if isinstance(command, str) else path
    if isinstance(command, str) and path:
        rest["in"] = path
    diff = _diff(rest)
    more = "\n".join(f"{key}: {_lines(value)}" for key, value in rest.items())
    return _entry(
        "tool",
        head or "",
        name=name,
        id=call_id,
        shell=isinstance(command, str),
        diff=diff,
        args=_cut(more),
    )


def _claude(event: dict[str, Any]) -> list[Entry]:
    kind = event.get("type")
    if kind == "system":
        model = f", model {event['model']}" if event.get("model") else ""
        return [
            _entry(
                "status",
                f"session {event.get('session_id', '?')} started ({event.get('subtype', '')}{model})",
            )
        ]
    if kind == "result":
        tokens = _tokens("claude", event)
        if event.get("is_error"):
            said = event.get("result") or event.get("subtype", "")
            return [_entry("status", f"error: {said}, {tokens:,} tokens", error=True)]
        return [_entry("status", f"done: {event.get('subtype', '')}, {tokens:,} tokens")]
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
            entries.append(
                _call(str(block.get("name", "tool")), block.get("input", {}), block.get("id"))
            )
        elif part == "tool_result":
            output = block.get("content", "")
            if isinstance(output, list):
                output = _parts(output)
            entries.append(
                _entry(
                    "result",
                    output,
                    error=bool(block.get("is_error")),
                    id=block.get("tool_use_id"),
                )
            )
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
        return [
            _call(
                str(event.get("tool_name", "tool")),
                event.get("parameters", {}),
                event.get("tool_id"),
            )
        ]
    if kind == "tool_result":
        failed = event.get("status") not in (None, "success")
        error = event.get("error")
        said = error.get("message", error) if isinstance(error, dict) else error
        output = event.get("output") or said or ""
        return [_entry("result", output, error=failed, id=event.get("tool_id"))]
    if kind == "result":
        status = event.get("status", "done")
        error = event.get("error")
        said = f" {error.get('message', '')}" if isinstance(error, dict) else ""
        tokens = _tokens("gemini", event)
        return [_entry("status", f"{status}: {tokens:,} tokens{said}", error=status != "success")]
    if kind == "error":
        return [_entry("status", event.get("message", event), error=True)]
    return []


def _mcp_output(item: dict[str, Any]) -> str:
    error = item.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    result = item.get("result") or {}
    return _parts(result.get("content") if isinstance(result, dict) else None)


def _unwrapped(command: str) -> str:
    """Codex runs each command as ``/bin/bash -lc '<command>'``: the command itself."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    shell = len(argv) == 3 and argv[0].endswith("sh") and argv[1] in ("-c", "-lc")
    return argv[2] if shell else command


def _codex(event: dict[str, Any]) -> list[Entry]:
    kind = event.get("type", "")
    if kind == "thread.started":
        return [_entry("status", f"thread {event.get('thread_id', '?')} started")]
    if kind == "turn.completed":
        return [_entry("status", f"turn done: {_tokens('codex', event):,} tokens")]
    if kind in ("turn.failed", "error"):
        error = event.get("error") or event
        return [_entry("status", error.get("message", error), error=True)]
    item = event.get("item") or {}
    what, call_id = item.get("type"), item.get("id")
    started = kind == "item.started"
    if not (
        kind == "item.completed" or (started and what in ("command_execution", "mcp_tool_call"))
    ):
        return []
    if what == "agent_message":
        return [_entry("message", item.get("text", ""), who="assistant")]
    if what in ("reasoning", "plan"):
        return [
            _entry("message", item.get("text", ""), who="thinking" if what == "reasoning" else what)
        ]
    if what == "command_execution":
        if started:
            return [_call("shell", {COMMAND: _unwrapped(str(item.get("command", "")))}, call_id)]
        failed = item.get("exit_code") not in (0, None) or item.get("status") == "declined"
        return [_entry("result", item.get("aggregated_output", ""), error=failed, id=call_id)]
    if what == "mcp_tool_call":
        if started:
            name = f"{item.get('server', '?')}.{item.get('tool', '?')}"
            return [_call(name, item.get("arguments") or {}, call_id)]
        failed = item.get("status") == "failed" or bool(item.get("error"))
        return [_entry("result", _mcp_output(item), error=failed, id=call_id)]
    if what == "file_change":
        changes = item.get("changes") or []
        text = "\n".join(
            f"{c.get('kind', '?')} {c.get('path', '?')}" for c in changes if isinstance(c, dict)
        )
        return [_entry("tool", text, name="edit", error=item.get("status") == "failed")]
    if what == "todo_list":
        todos = item.get("items") or []
        text = "\n".join(
            f"[{'x' if t.get('completed') else ' '}] {t.get('text', '')}"
            for t in todos
            if isinstance(t, dict)
        )
        return [_entry("tool", text, name="todo_list")]
    if what == "error":
        return [_entry("status", item.get("message", ""), error=True)]
    rest = {k: v for k, v in item.items() if k not in ("id", "type", "status")}
    return [_call(str(what), rest)]


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
        read = _codex
    elif kind in ("system", "assistant", "user", "result") and (
        "message" in event or "subtype" in event
    ):
        read = _claude
    else:
        read = _gemini
    try:
        return read(event)
    except (AttributeError, TypeError, ValueError):  # a field of another shape than the CLI's
        return [_entry("message", line, who="output")]


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

"""A spoke's streamed output, read as a transcript: the three CLIs' genuine samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maestro.board import transcript
from maestro.process import ProcessOutcome
from maestro.spokes.registry import get_spoke

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "host-samples"


def _read(name: str) -> list[dict]:
    found = []
    for line in (SAMPLES / f"{name}.stdout").read_text().splitlines():
        found += transcript.entries(line)
    return transcript.merged(found)


def test_claude_stream_json_shows_the_tool_call_its_output_and_the_reply():
    items = _read("claude_stream_tool")
    tool = next(i for i in items if i["kind"] == "tool")
    assert tool["name"] == "Bash" and "printf MRK-TOOL-%s 42" in tool["text"]
    assert any(i["kind"] == "result" and i["text"] == "MRK-TOOL-42" for i in items)
    assert {
        "kind": "message",
        "text": "FAKE-REPLY: hello from the fake model server.",
        "who": "assistant",
    } in items
    assert items[0]["kind"] == "status" and items[-1]["kind"] == "status"


def test_gemini_stream_json_joins_the_deltas_into_one_message():
    items = _read("gemini_stream_tool_yolo")
    messages = [i["text"] for i in items if i["kind"] == "message" and i.get("who") == "assistant"]
    assert messages == ["FAKE-REPLY: hello from the fake model server."]
    assert any(i["kind"] == "tool" and i["name"] == "run_shell_command" for i in items)
    assert any(i["kind"] == "result" and i["text"] == "MRK-TOOL-42" for i in items)


def test_codex_json_shows_the_command_its_output_and_the_answer():
    items = _read("codex_tool")
    kinds = [i["kind"] for i in items]
    assert kinds == ["status", "tool", "result", "message", "status"]
    assert "printf MRK-TOOL-%s 42" in items[1]["text"]


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / f"{name}.stdout").read_text().splitlines()]


def _shown(events: list[dict]) -> list[dict]:
    found = []
    for event in events:
        found += transcript.entries(json.dumps(event))
    return transcript.merged(found)


def test_each_clis_shell_call_shows_its_command_and_its_output_under_the_calls_id():
    """A call's output names its call, so the page shows the command with what it printed."""
    for name in ("claude_stream_tool", "gemini_stream_tool_yolo", "codex_tool"):
        items = _read(name)
        call = next(i for i in items if i["kind"] == "tool")
        assert call["shell"] and call["text"].endswith("printf MRK-TOOL-%s 42"), name
        assert "{" not in call["text"] and "command" not in call.get("args", "")
        result = next(i for i in items if i["kind"] == "result")
        assert result["id"] == call["id"] and result["text"] == "MRK-TOOL-42", name
    assert _read("claude_stream_tool")[1]["args"] == "description: print marker"


def _claude_call(name: str, given: dict) -> dict:
    """The genuine sample's tool call, made ``name`` with ``given`` as its input."""
    events = _lines("claude_stream_tool")
    block = events[1]["message"]["content"][0]
    block["name"], block["input"] = name, given
    return next(i for i in _shown(events) if i["kind"] == "tool")


def test_an_edit_shows_its_file_and_a_diff_and_a_write_its_new_lines():
    edit = _claude_call(
        "Edit",
        {"file_path": "src/app.py", "old_string": "a = 1\nb = 2\n", "new_string": "a = 1\nb = 3\n"},
    )
    assert edit["text"] == "src/app.py" and not edit.get("shell")
    assert edit["diff"].splitlines() == ["@@ -1,2 +1,2 @@", " a = 1", "-b = 2", "+b = 3"]
    write = _claude_call("Write", {"file_path": "notes.md", "content": "# Notes\nmore"})
    assert (write["text"], write["diff"]) == ("notes.md", "+# Notes\n+more")
    many = _claude_call(
        "MultiEdit",
        {"file_path": "x.py", "edits": [{"old_string": "p", "new_string": "q"}] * 2},
    )
    assert many["diff"].count("-p") == 2 and "edits" not in many.get("args", "")
    todo = _claude_call("TodoWrite", {"todos": [{"content": "Write the tests", "status": "done"}]})
    assert todo["args"] == "todos: \n- Write the tests · done"


def test_geminis_edits_and_codexs_file_changes_and_tool_calls_read_as_what_they_did():
    events = _lines("gemini_stream_tool_yolo")
    events[2]["tool_name"] = "replace"
    events[2]["parameters"] = {"file_path": "/w/a.py", "old_string": "x", "new_string": "y"}
    events[3].update(status="error", output=None, error={"type": "edit", "message": "no match"})
    call, result = [i for i in _shown(events) if i["kind"] in ("tool", "result")]
    assert (call["name"], call["text"], call["diff"]) == (
        "replace",
        "/w/a.py",
        "@@ -1 +1 @@\n-x\n+y",
    )
    assert result == {"kind": "result", "text": "no match", "error": True, "id": call["id"]}

    changed = {"id": "item_3", "type": "file_change", "status": "completed"}
    changed["changes"] = [{"path": "a.py", "kind": "update"}, {"path": "b.py", "kind": "add"}]
    mcp = {"id": "item_4", "type": "mcp_tool_call", "server": "docs", "tool": "search"}
    mcp.update(arguments={"query": "sse"}, status="in_progress", result=None, error=None)
    done = {
        **mcp,
        "status": "completed",
        "result": {"content": [{"type": "text", "text": "3 hits"}]},
    }
    items = _shown(
        [
            {"type": "item.completed", "item": changed},
            {"type": "item.started", "item": mcp},
            {"type": "item.completed", "item": done},
        ]
    )
    assert items[0] == {"kind": "tool", "text": "update a.py\nadd b.py", "name": "edit"}
    assert items[1] == {
        "kind": "tool",
        "text": "",
        "name": "docs.search",
        "id": "item_4",
        "args": "query: sse",
    }
    assert items[2] == {"kind": "result", "text": "3 hits", "id": "item_4"}


def test_an_image_a_tool_gave_back_is_named_not_dumped():
    events = _lines("claude_stream_tool")
    events[2]["message"]["content"][0]["content"] = [
        {"type": "text", "text": "the chart:"},
        {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo" * 500}},
    ]
    result = next(i for i in _shown(events) if i["kind"] == "result")
    assert result["text"] == "the chart:\n[image]"


def _with_cache(name: str) -> str:
    """The sample with cached prompt tokens in its usage, as a long session has."""
    events = _lines(name)
    for event in events:
        usage = event.get("usage")
        if name.startswith("claude") and event["type"] == "result":
            usage.update(cache_read_input_tokens=5000, cache_creation_input_tokens=300)
        elif name.startswith("codex") and event["type"] == "turn.completed":
            usage.update(input_tokens=5200, cached_input_tokens=5000)
        elif name.startswith("gemini") and event["type"] == "result":
            event["stats"].update(input_tokens=5300, cached=5000, total_tokens=5326)
    return "".join(json.dumps(e) + "\n" for e in events)


@pytest.mark.parametrize("name", ["claude_stream_tool", "gemini_stream_tool_yolo", "codex_tool"])
def test_the_tokens_at_the_end_are_those_the_plan_counts_for_the_attempt(name):
    """The node shows the plan's tokens: what the CLI's spoke read from the same output.
    Cached prompt tokens are not among them, so the transcript's end says the same."""
    stdout = _with_cache(name)
    cli = name.split("_")[0]
    counted = get_spoke(cli).parse(ProcessOutcome(stdout, "", 0, False, 1.0)).usage.total
    end = [i for line in stdout.splitlines() for i in transcript.entries(line)][-1]
    assert f" {counted:,} tokens" in end["text"], (end, counted)
    assert counted < 5000


def test_a_line_that_is_not_json_is_shown_as_it_is():
    assert transcript.entries("plain <b>text</b>") == [
        {"kind": "message", "text": "plain <b>text</b>", "who": "output"}
    ]


def test_a_line_with_a_field_of_another_shape_is_shown_as_it_is():
    for line in (
        '{"type":"result","subtype":"success","usage":"lots"}',
        '{"type":"assistant","message":"hi"}',
        '{"type":"turn.failed","error":"boom"}',
    ):
        assert transcript.entries(line) == [{"kind": "message", "text": line, "who": "output"}]


LINE = '{"type":"message","role":"assistant","content":"%s"}\n'


def test_the_tail_reads_whole_lines_from_an_offset(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(LINE % "one" + '{"type":"mess')
    items, offset, behind = transcript.tail(path)
    assert [i["text"] for i in items] == ["one"] and not behind
    with path.open("a") as handle:
        handle.write('age","role":"assistant","content":"two"}\n')
    items, end, behind = transcript.tail(path, offset)
    assert [i["text"] for i in items] == ["two"] and end == path.stat().st_size


def test_the_tail_of_a_big_transcript_is_its_end_only(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(LINE % f"n{i}" for i in range(20000)))
    items, offset, behind = transcript.tail(path)
    assert items[-1]["text"] == "n19999"
    assert items[0]["kind"] == "status" and "bytes of the transcript not shown" in items[0]["text"]
    assert len(items) < 2000 and offset == path.stat().st_size and not behind


def test_a_reader_far_behind_jumps_to_the_end_and_says_what_it_skipped(tmp_path):
    """11 MB written at once: the next read from where the page was ends at the last
    line, not 64 KiB further on."""
    path = tmp_path / "t.jsonl"
    path.write_text(LINE % "before")
    _, offset, _ = transcript.tail(path)
    with path.open("a") as handle:
        handle.write("".join(LINE % f"n{i:05d} {'x' * 500}" for i in range(20005)))
    items, end, behind = transcript.tail(path, offset)
    assert items[-1]["text"].startswith("n20004 ") and end == path.stat().st_size
    skipped = int(items[0]["text"].split()[1].replace(",", ""))
    assert skipped > 10_000_000 and not behind


def test_a_line_longer_than_a_read_is_shown_cut_and_read_past(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(LINE % "before")
    _, offset, _ = transcript.tail(path)
    big = LINE % ("y" * 200 * 1024)
    with path.open("a") as handle:
        handle.write(big[:100_000])  # still being written: nothing to read yet
    assert transcript.tail(path, offset) == ([], offset, False)
    with path.open("a") as handle:
        handle.write(big[100_000:] + LINE % "after")
    shown, behind = [], True
    while behind:
        items, offset, behind = transcript.tail(path, offset)
        shown += items
    assert [i["text"] for i in shown][-1] == "after" and offset == path.stat().st_size
    cut = shown[0]["text"]
    assert cut.startswith('{"type":"message"') and len(cut) < 4100
    assert cut.endswith(f" … (a line of {len(big):,} bytes, cut)")


def test_a_long_tool_output_is_cut():
    item = transcript.entries('{"type":"tool_result","output":"%s"}' % ("x" * 10000))[0]
    assert len(item["text"]) < 4100 and item["text"].endswith("(10,000 chars)")


def test_the_engine_keeps_each_stdout_line_as_it_comes_and_the_caller_still_sees_it(tmp_path):
    from maestro.engine.rundir import recording
    from maestro.process import run_process

    kept = tmp_path / "task-1-attempt-1.stream.jsonl"
    seen = []

    def line(text: str) -> bool:
        seen.append((text, kept.read_text().splitlines()[-1]))  # already on disk
        return text == "stop"

    runner = recording(run_process, kept)
    script = "printf 'one\\ntwo\\nstop\\nnever\\n'; sleep 5"
    outcome = runner(["sh", "-c", script], cwd=tmp_path, timeout_s=30, on_stdout_line=line)
    assert seen == [("one", "one"), ("two", "two"), ("stop", "stop")]
    assert outcome.aborted and kept.read_text().startswith("one\ntwo\nstop\n")

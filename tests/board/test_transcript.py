"""A spoke's streamed output, read as a transcript: the three CLIs' genuine samples."""

from __future__ import annotations

from pathlib import Path

from maestro.board import transcript

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


def test_a_line_that_is_not_json_is_shown_as_it_is():
    assert transcript.entries("plain <b>text</b>") == [
        {"kind": "message", "text": "plain <b>text</b>", "who": "output"}
    ]


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

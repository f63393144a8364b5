"""The one formatting module: money, tokens, durations and shown paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from maestro.formatting import (
    cleaned,
    duration_cell,
    duration_text,
    elapsed_text,
    money_cell,
    money_text,
    shown_path,
    tokens_text,
)


def test_money_and_tokens():
    assert money_text(0.01234, True) == "~$0.0123" and money_text(None) == "-"
    assert money_text(1.5, places=2) == "$1.50" and money_text(None, unknown="") == ""
    assert money_cell(0.1) == "$0.10" and money_cell(0.01234, True) == "~$0.0123"
    assert tokens_text(12345) == "12,345 tokens" and tokens_text(None) == ""


def test_durations():
    assert [duration_text(s) for s in (None, 45, 65, 7385)] == ["-", "45s", "1m 05s", "2h 03m"]
    assert [duration_cell(s) for s in (None, 45, 65, 7385)] == ["-", "45s", "1m 05s", "2h 03m 05s"]
    assert [elapsed_text(s) for s in (None, 8, 65, 7385)] == ["0.0s", "8.0s", "1m05s", "2h03m"]


def test_shown_paths():
    root, home = Path("/home/u/proj"), Path("/home/u")
    assert shown_path(root / "a" / "b.md", root) == "a/b.md" and shown_path(root, root) == "."
    assert shown_path(root / "runs", root, folder=True) == "runs/"
    assert shown_path(Path("/etc/x"), root, folder=True) == "/etc/x"
    assert (
        shown_path(home / ".claude", root, home=home) == "~/.claude"
        and shown_path(home, root, home=home) == "~"
    )
    assert shown_path(home / ".claude", root) == "/home/u/.claude"


@pytest.mark.parametrize(
    "raw,kept",
    [
        ("\x1b[32m3 passed\x1b[0m in 0.1s", "3 passed in 0.1s"),
        ("see \x1b]8;;https://x\x1b\\the docs\x1b]8;;\x1b\\", "see the docs"),
        ("title\x1b]0;PWNED\x07 \x9b2Jend\x1b", "title end"),
        ("a\r\nb\rc\u2028d\x00\x7f\te", "a\nb\nc\nd\te"),
    ],
)
def test_cleaned_drops_terminal_sequences_whole_finding_9(raw, kept):
    assert cleaned(raw) == kept

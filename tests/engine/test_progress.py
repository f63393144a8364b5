"""The live view: every line fits the terminal, so the in-place redraw stays aligned."""

from __future__ import annotations

import io
import re
from pathlib import Path

from maestro.engine.progress import LiveProgress, clip, describe

ANSI = re.compile(r"\x1b\[[0-9]*[A-Za-z]")


def test_a_long_title_is_clipped_to_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    out = io.StringIO()
    view = LiveProgress(
        out, [("1", "A title far longer than any narrow terminal can show " * 2)], "R1"
    )
    view.handle({"kind": "task_started", "task": "1", "tool": "codex", "attempt": 1})
    view.handle(
        {"kind": "task_failed", "task": "1", "reason": "a reason that is long as well " * 3}
    )
    drawn = [ANSI.sub("", line) for line in out.getvalue().splitlines()]
    assert drawn and max(len(line) for line in drawn) == 49
    # The second draw goes up exactly as many lines as the first one wrote.
    assert out.getvalue().count("\x1b[3F") == 1 and out.getvalue().count("\n") == 6


def test_clip_counts_wide_characters_twice_and_combining_marks_not_at_all():
    assert clip("abcdef", 4) == "abcd"
    assert clip("計画を立てる", 5) == "計画"
    assert clip("e\u0301e\u0301e\u0301", 2) == "e\u0301e\u0301"
    assert clip("short", 80) == "short"


def test_a_workers_report_shows_on_its_row_until_the_task_ends(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    out = io.StringIO()
    view = LiveProgress(out, [("1", "Write the parser"), ("2", "Write the docs")], "R1")
    view.handle({"kind": "task_started", "task": "1", "tool": "codex", "attempt": 1})
    view.handle(
        {
            "kind": "task_report",
            "task": "1",
            "session": "t1-abc",
            "report": "task 1 blocked: need the token format",
        }
    )
    last = ANSI.sub("", out.getvalue()).split("run R1")[-1]
    (row,) = [line for line in last.splitlines() if "Write the parser" in line]
    assert row.rstrip().endswith("need the token format") and "running" in row
    view.handle({"kind": "task_done", "task": "1", "tool": "codex"})
    last = ANSI.sub("", out.getvalue()).split("run R1")[-1]
    assert "need the token format" not in last


def test_a_spawned_task_gets_its_row_below_its_parents_last():
    view = LiveProgress(io.StringIO(), [("1", "One"), ("2", "Two"), ("3", "Three")], "R1")
    for tid in ("2.1", "2.2"):
        view.handle({"kind": "task_spawned", "task": tid, "parent": "2", "title": f"Part {tid}"})
    view.handle({"kind": "task_spawned", "task": "9", "parent": "7", "title": "Orphan"})
    view.handle({"kind": "task_spawned", "task": "2.1", "parent": "2", "title": "Again"})
    assert view.order == ["1", "2", "2.1", "2.2", "3", "9"]
    assert view.rows["2.1"].title == "Part 2.1"  # a repeated event adds nothing


def test_every_event_kind_the_architecture_lists_has_its_own_line():
    """A kind without a line prints as a raw dict (``worktree_kept: {'task': ...}``)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    listed = doc.split("Event kinds:", 1)[1].split(".", 1)[0]
    kinds = re.findall(r"`([a-z_]+)`", listed)
    assert "worktree_kept" in kinds and len(kinds) > 10
    for kind in kinds:
        line = describe({"kind": kind, "task": "2", "path": "/p/wt"})
        assert not line.startswith(f"{kind}: {{"), line


def test_a_pull_request_event_reads_as_a_sentence_not_a_dict():
    opened = {
        "kind": "pr",
        "branch": "maestro/x",
        "detail": "pull request #1 opened: u",
        "url": "u",
    }
    assert describe(opened) == "pr: pull request #1 opened: u"
    failed = {"kind": "pr_checks", "number": 1, "state": "failed", "failed": ["tests"], "round": 1}
    assert describe(failed) == "pull request #1 checks failed: tests (CI round 1)"
    green = {"kind": "pr_checks", "number": 1, "state": "green", "checks": 2}
    assert describe(green) == "pull request #1 checks green (2)"

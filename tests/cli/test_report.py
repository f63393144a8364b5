"""`maestro report` end to end: real runs with the fake CLIs, then the report of them."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.cli.test_review import PLAN as REVIEW_PLAN
from tests.cli.test_review import submission
from tests.engine.mermaid_check import check
from tests.engine.test_report import diagrams

# Task 1 by codex, Task 2 (depending on it) by gemini.
PLAN = REVIEW_PLAN.replace("tool: codex, depends", "tool: gemini, depends")
FAKE_NOW = "2026-11-21T12:00:00Z"


def normalized(markdown: str) -> str:
    """Run ids are random and a dispatch's seconds depend on the machine: both are masked,
    and so is the run's start, its end (pinned by MAESTRO_FAKE_NOW) less its wall time."""
    text = re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{4}", "<run-id>", markdown)
    text = re.sub(r"\(\d\d:\d\d:\d\d to ", "(<start> to ", text)
    text = re.sub(r"\b(\d+h )?(\d+m )?\d+s\b", "<secs>", text)
    return re.sub(r", d(\d+), \S+ \S+, ", r", d\1, <start>, ", text)


@pytest.fixture
def planned(cli, project, fake_clis, monkeypatch, temp_home):
    # Codex names no model in its output: the one its config names prices it.
    (temp_home / ".codex").mkdir()
    (temp_home / ".codex" / "config.toml").write_text('model = "gpt-5"\n')
    monkeypatch.setenv("MAESTRO_FAKE_NOW", FAKE_NOW)
    monkeypatch.setenv("MAESTRO_LOG", "summary")
    monkeypatch.setenv("MAESTRO_RETRY_BACKOFF", "0")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=project, check=True)
    assert cli("plan", "--from", "-", "--yes", stdin=PLAN).code == 0
    return project


def _script_success(fake_clis):
    fake_clis.script(
        "codex",
        [
            {
                "text": submission("count_words returns the number of words", "src/wc.py"),
                "write": {"path": "src/wc.py", "content": "def count_words(t):\n    return 0\n"},
                "usage": {"input": 9000, "output": 800},
            }
        ],
    )
    fake_clis.script(
        "gemini",
        [
            {
                "text": submission("docs/wc.md explains wc", "docs/wc.md"),
                "write": {"path": "docs/wc.md", "content": "# wc\n"},
                "usage": {"input": 7000, "output": 500},
            }
        ],
    )


def test_report_of_a_small_finished_run(cli, planned, fake_clis, md_snapshot):
    _script_success(fake_clis)
    run = cli("run")
    assert run.code == 0, run.out + run.err
    res = cli("report")
    assert res.code == 0, res.err
    assert "| Tasks | 2: 2 done |" in res.out
    assert "| Codex | 1 | 9,800 | ~$" in res.out and "| Gemini | 1 | 7,500 | ~$" in res.out
    for block in diagrams(res.out):
        assert check(block) == []
    assert normalized(res.out) == md_snapshot


def test_report_of_a_run_with_failures_and_retries(cli, planned, fake_clis, md_snapshot):
    # codex: a server error (retried at once), then success. gemini: an answer the format
    # gate rejects (retried with more context), then success.
    fake_clis.script(
        "codex",
        [
            {"http": 500},
            {
                "text": submission("count_words returns the number of words", "src/wc.py"),
                "write": {"path": "src/wc.py", "content": "x = 1\n"},
            },
        ],
    )
    fake_clis.script(
        "gemini",
        [
            {"text": "I documented it."},
            {
                "text": submission("docs/wc.md explains wc", "docs/wc.md"),
                "write": {"path": "docs/wc.md", "content": "# wc\n"},
            },
        ],
    )
    run = cli("run")
    assert run.code == 0, run.out + run.err
    res = cli("report", "--json")
    data = json.loads(res.out)["data"]
    clis = {c["tool"]: c for c in data["clis"]}
    assert (clis["codex"]["dispatches"], clis["codex"]["failures"], clis["codex"]["retries"]) == (
        2,
        1,
        1,
    )
    assert (
        clis["gemini"]["dispatches"],
        clis["gemini"]["failures"],
        clis["gemini"]["retries"],
    ) == (2, 1, 1)
    story = "\n".join(data["resolutions"])
    assert "Task 1 (Count words in a file): dispatch on Codex failed" in story
    assert "immediate retry on Codex" in story and "succeeded" in story
    assert (
        "Task 2 (Document wc): dispatch on Gemini failed" in story
        and "context expansion on Gemini" in story
    )
    assert any(
        "Task 2 needed 2 attempts (context expansion)" in tip for tip in data["recommendations"]
    )
    markdown = data["markdown"]
    assert markdown.count(":crit,") == 2
    assert normalized(markdown) == md_snapshot


def test_output_writes_a_file_and_never_overwrites_other_files(cli, planned, fake_clis, project):
    _script_success(fake_clis)
    assert cli("run").code == 0
    res = cli("report", "--output", "walkthrough.md")
    assert res.code == 0 and "Report written to" in res.out
    text = (project / "walkthrough.md").read_text(encoding="utf-8")
    assert text.startswith("# Maestro report\n") and "```mermaid" in text
    assert (
        cli("report", "--output", "walkthrough.md", "--brief").code == 0
    )  # its own report: replaced
    assert "```mermaid" not in (project / "walkthrough.md").read_text(encoding="utf-8")
    (project / "notes.md").write_text("my notes\n", encoding="utf-8")
    res = cli("report", "--output", "notes.md")
    assert res.code == 1 and res.err.count("\n") == 1 and "not a Maestro report" in res.err
    assert (project / "notes.md").read_text(encoding="utf-8") == "my notes\n"


def test_without_a_log_it_reports_from_the_plan(cli, planned, fake_clis, monkeypatch):
    monkeypatch.setenv("MAESTRO_LOG", "off")
    _script_success(fake_clis)
    assert cli("run").code == 0
    res = cli("report")
    assert res.code == 0
    assert "> **Missing:** No execution log (logging was off" in res.out
    assert "| Tasks | 2: 2 done |" in res.out and "From the plan's fields (no log):" in res.out
    assert "Per CLI, from the plan (no log)" in res.out


def test_nothing_to_report_is_one_line(cli, project):
    res = cli("report")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "nothing to report" in res.err and "maestro demo" in res.err


def test_demo_keep_ends_by_printing_where_its_report_is(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    res = cli("demo", "--keep")
    assert res.code == 0, res.out + res.err
    (line,) = [line for line in res.out.splitlines() if line.startswith("report: ")]
    from pathlib import Path

    report = Path(line.removeprefix("report: "))
    assert report.is_relative_to(tmp_path)
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# Maestro report\n") and "| Tasks | 6: 6 done |" in text
    blocks = diagrams(text)
    assert len(blocks) == 2 and all(check(b) == [] for b in blocks)

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maestro.errors import ConfigError
from maestro.logfile import ExecutionLog, LogRow, LogSession, ParsedLog
from maestro.logfile.document import parse, render
from maestro.logfile.rows import LogFormatError, ToolTotals, compute_totals, render_row
from maestro.paths import ProjectPaths
from maestro.tables import split_row

NOTES_EXAMPLE = """\
# Maestro Execution Log

## Session: 2026-01-16 14:30 UTC
**Goal:** Add user authentication

| Time | Actor | Action | Target | Tokens | Duration | Outcome | Notes |
|------|-------|--------|--------|--------|----------|---------|-------|
| 14:30:15 | Hub | Recon | Explore subagent | 1,247 | 12s | ✅ | Found auth patterns |
| 14:31:02 | Hub | Dispatch | Gemini (code) | 27,316 | 45s | ✅ | Task 1 complete |
| 14:32:15 | Hub | Dispatch | Codex (test) | 8,072 | 23s | ❌ | Missing context |
| 14:33:40 | Hub | Retry | Codex (test) | 12,105 | 31s | ✅ | Context expanded |
| 14:34:20 | Hub | Review | Gemini (review) | 15,230 | 28s | ✅ | Approved |
| 14:35:00 | Hub | Complete | - | - | - | ✅ | All tasks done |

## Totals
| Tool | Dispatches | Tokens | Failures | Retries |
|------|------------|--------|----------|---------|
| Gemini CLI | 2 | 42,546 | 0 | 0 |
| Codex CLI | 2 | 20,177 | 1 | 1 |
| Subagents | 1 | 1,247 | 0 | 0 |
| **Total** | **5** | **63,970** | **1** | **1** |
"""


def row(n=1, **fields):
    base = dict(
        time="14:31:02",
        actor="Hub",
        action="Dispatch",
        target=f"Task {n}",
        tokens=1000 * n,
        duration_s=45.0,
        outcome="✅",
        notes=f"Task {n} complete",
        tool="gemini",
        task=str(n),
    )
    base.update(fields)
    return LogRow(**base)


@pytest.fixture
def paths(tmp_path):
    return ProjectPaths(tmp_path)


def test_parses_the_notes_example():
    log = parse(NOTES_EXAMPLE)
    (session,) = log.sessions
    assert session.stamp == "2026-01-16 14:30 UTC" and session.goal == "Add user authentication"
    assert len(session.rows) == 6
    dispatch, failed, retry = session.rows[1], session.rows[2], session.rows[3]
    assert (dispatch.tool, dispatch.target, dispatch.tokens, dispatch.duration_s) == (
        "gemini",
        "code",
        27316,
        45.0,
    )
    assert failed.failed and failed.tool == "codex" and not failed.retry
    assert retry.retry and not retry.failed
    assert session.rows[5].tokens is None and session.rows[5].duration_s is None
    written = {t.tool: (t.dispatches, t.tokens, t.failures, t.retries) for t in log.totals}
    assert written["gemini"] == (2, 42546, 0, 0) and written["codex"] == (2, 20177, 1, 1)
    assert log.total.dispatches == 5 and log.total.tokens == 63970


def test_totals_recomputed_match_the_notes_for_cli_rows():
    totals = compute_totals(parse(NOTES_EXAMPLE).rows())
    assert [(t.label, t.dispatches, t.tokens, t.failures, t.retries) for t in totals] == [
        ("Gemini CLI", 2, 42546, 0, 0),
        ("Codex CLI", 2, 20177, 1, 1),
    ]


def test_round_trip_objects_and_text():
    log = ParsedLog(
        sessions=[
            LogSession(
                "2026-01-16 14:30 UTC",
                "Add auth",
                run_id="r1",
                hub="claude",
                rows=[
                    row(1, cost=0.55),
                    row(
                        2,
                        tool="codex",
                        failed=True,
                        outcome="timeout",
                        cost=0.0123,
                        cost_estimated=True,
                        notes="pipe | inside\nand a newline, back\\slash",
                    ),
                    row(2, tool="codex", action="Retry", retry=True, duration_s=125.0),
                    row(
                        3,
                        tool=None,
                        target="-",
                        task=None,
                        tokens=None,
                        duration_s=None,
                        action="Complete",
                        notes="",
                    ),
                ],
            ),
            LogSession("2026-01-17 09:00 UTC", "Second goal", rows=[row(4, duration_s=3700.0)]),
        ]
    )
    log.rows()[3].target = ""
    text = render(log)
    back = parse(text)
    assert back.sessions == log.sessions
    assert render(back) == text
    assert back.totals == compute_totals(log.rows())


def test_render_of_canonical_text_is_byte_identical():
    text = render(parse(NOTES_EXAMPLE))
    assert render(parse(text)) == text


def test_cells_escape_pipes_and_newlines():
    line = render_row(row(notes="a | b\nc"))
    assert "a \\| b<br>c" in line and line.count("\n") == 0
    assert split_row(line, breaks=True)[-1] == "a | b\nc"


def test_row_with_wrong_cell_count_is_a_one_line_error():
    bad = NOTES_EXAMPLE.replace("| 14:31:02 | Hub | Dispatch |", "| 14:31:02 | Hub |")
    with pytest.raises(LogFormatError) as err:
        parse(bad, "log.md")
    assert err.value.line == 9 and "\n" not in str(err.value) and "Fix:" in str(err.value)


def test_newer_format_is_refused():
    with pytest.raises(LogFormatError, match="newer"):
        parse("# Maestro Execution Log\n<!-- maestro-log-format: 9 -->\n")


def test_off_writes_nothing(paths):
    log = ExecutionLog(paths, "off")
    log.start_session("goal")
    log.append(row())
    assert not paths.log.exists() and not paths.state_dir.exists()


def test_bad_verbosity(paths):
    with pytest.raises(ConfigError, match="MAESTRO_LOG"):
        ExecutionLog(paths, "loud")


def test_summary_writes_session_rows_and_totals(paths, monkeypatch):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-01-16T14:30:00Z")
    log = ExecutionLog(paths, "summary")
    log.start_session("Add user authentication", run_id="r1", hub="claude")
    log.append(row(1, cost=0.5))
    log.append(row(2, tool="codex", failed=True, outcome="", tokens=None))
    log.append(row(2, tool="codex", action="Retry", retry=True))
    text = paths.log.read_text()
    assert text.startswith("# Maestro Execution Log\n")
    assert "## Session: 2026-01-16 14:30 UTC\n**Goal:** Add user authentication\n" in text
    assert (
        "| 14:31:02 | Hub | Dispatch | Gemini (Task 1) | 1,000 ($0.50) | 45s | ✅ | Task 1 complete |"
        in text
    )
    assert "| Codex CLI | 2 | 2,000 | 1 | 1 |" in text
    assert "| **Total** | **3** | **3,000** | **1** | **1** |" in text
    assert text.index("## Session") < text.index("## Totals")
    parsed = log.read()
    assert len(parsed.sessions[0].rows) == 3 and parsed.sessions[0].run_id == "r1"
    assert parsed.totals == compute_totals(parsed.rows())


def test_detailed_points_to_run_folder(paths):
    log = ExecutionLog(paths, "detailed")
    log.start_session("g", run_id="20260116T143000Z")
    log.append(row())
    assert "**Details:** `.ai/maestro/runs/20260116T143000Z/`" in paths.log.read_text()


def test_second_session_goes_before_totals_and_totals_cover_both(paths):
    first = ExecutionLog(paths, "summary")
    first.start_session("one")
    first.append(row(1))
    second = ExecutionLog(paths, "summary")
    second.start_session("two")
    second.append(row(2, tool="claude"))
    parsed = second.read()
    assert [s.goal for s in parsed.sessions] == ["one", "two"]
    assert [len(s.rows) for s in parsed.sessions] == [1, 1]
    assert [t.tool for t in parsed.totals] == ["gemini", "claude"]
    assert paths.log.read_text().count("## Totals") == 1


def test_append_without_a_session_in_the_file_restarts_one(paths):
    log = ExecutionLog(paths, "summary")
    log.start_session("the goal")
    paths.log.unlink()  # archived mid-run
    log.append(row())
    parsed = log.read()
    assert parsed.sessions[0].goal == "the goal" and len(parsed.sessions[0].rows) == 1


def test_a_persons_notes_survive_appends(paths):
    log = ExecutionLog(paths, "summary")
    log.start_session("g")
    log.append(row(1))
    text = paths.log.read_text()
    text = text.replace("## Totals", "A note I wrote about this run.\n\n## Totals")
    text += "\n## My section\nkeep me\n"
    paths.log.write_text(text)
    log.append(row(2))
    after = paths.log.read_text()
    assert "A note I wrote about this run." in after and "## My section\nkeep me" in after
    assert len(log.read().rows()) == 2 and "| **Total** | **2** |" in after


def test_a_row_adds_to_the_totals_as_written_and_a_new_session_recounts_them(paths):
    """A row costs the same however long the log: it is added to the Totals table, not
    counted again with every row; a run's start recounts them (a hand edit of a row)."""
    log = ExecutionLog(paths, "summary")
    log.start_session("g")
    log.append(row(1))
    text = paths.log.read_text()
    paths.log.write_text(text.replace("| Gemini CLI | 1 | 1,000 |", "| Gemini CLI | 7 | 1,000 |"))
    paths.log.write_text(paths.log.read_text().replace("**1**", "**7**", 1))
    log.append(row(2))
    assert "| Gemini CLI | 8 | 3,000 | 0 | 0 |" in paths.log.read_text()
    ExecutionLog(paths, "summary").start_session("again")
    assert "| Gemini CLI | 2 | 3,000 | 0 | 0 |" in paths.log.read_text()


def test_append_matches_canonical_render(paths):
    log = ExecutionLog(paths, "summary")
    log.start_session("g")
    for n in range(1, 4):
        log.append(row(n))
    text = paths.log.read_text()
    assert render(parse(text)) == text


def test_crlf_file_stays_crlf(paths):
    log = ExecutionLog(paths, "summary")
    log.start_session("g")
    paths.log.write_bytes(paths.log.read_bytes().replace(b"\n", b"\r\n"))
    log.append(row())
    data = paths.log.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert len(log.read().rows()) == 1


def test_read_without_file_is_empty(paths):
    assert ExecutionLog(paths, "off").read() == ParsedLog()


WORKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from maestro import clis
    from maestro.logfile import ExecutionLog, LogRow
    from maestro.paths import ProjectPaths
    worker, count, root = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    clis.load({})  # the roster names the rows' tools
    log = ExecutionLog(ProjectPaths(root), "summary")
    for n in range(count):
        log.append(LogRow("12:00:00", "Hub", "Dispatch", f"Task {worker}.{n}", 10, 1.0, "ok",
                          f"w{worker} n{n}", tool=("gemini", "codex")[worker % 2], task=f"{worker}.{n}",
                          failed=n % 5 == 0))
""")


def test_several_processes_appending_lose_no_row(paths, tmp_path):
    ExecutionLog(paths, "summary").start_session("concurrent")
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    repo = Path(__file__).resolve().parents[1]
    workers, count = 6, 25
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(w), str(count), str(paths.root)],
            env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"},
        )
        for w in range(workers)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    parsed = ExecutionLog(paths, "summary").read()
    notes = sorted(r.notes for r in parsed.rows())
    assert notes == sorted(f"w{w} n{n}" for w in range(workers) for n in range(count))
    assert parsed.total == ToolTotals(
        "Total", workers * count, workers * count * 10, workers * 5, 0
    )

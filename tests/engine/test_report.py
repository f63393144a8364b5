"""The report: figures from the plan and the log, the Markdown walkthrough, its diagrams."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC
from pathlib import Path

import pytest

from maestro.logfile import LogRow, LogSession, ParsedLog
from maestro.report import build_report, render_markdown, report_data
from maestro.report.mermaid import (
    MAX_EDGES,
    MAX_TEXT,
    Bar,
    flowchart,
    gantt,
    node_label,
)
from maestro.state.model import Plan, Task
from tests.engine.mermaid_check import check
from tests.engine.sample_runs import failing_run, finished_run

MERMAID_JS = Path(__file__).resolve().parent / "mermaid_js"
FAKE_NOW = "2026-11-21T12:10:00Z"
GANTT_HEAD = (
    "gantt\n  title x\n  dateFormat YYYY-MM-DD HH:mm:ss\n  axisFormat %H:%M:%S\n  section a\n"
)


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", FAKE_NOW)


def diagrams(markdown: str) -> list[str]:
    blocks, inside, current = [], False, []
    for line in markdown.splitlines():
        if line == "```mermaid":
            inside, current = True, []
        elif line == "```" and inside:
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


def test_finished_run_report_snapshot(md_snapshot):
    plan, log = finished_run()
    markdown = render_markdown(
        build_report(plan, log, sources=["`.ai/MAESTRO.md`", "`.ai/MAESTRO-LOG.md`"])
    )
    assert markdown == md_snapshot


def test_failing_run_report_snapshot(md_snapshot):
    plan, log = failing_run()
    markdown = render_markdown(build_report(plan, log, max_concurrent=3))
    assert markdown == md_snapshot


def test_brief_report_snapshot(md_snapshot):
    plan, log = failing_run()
    markdown = render_markdown(build_report(plan, log), brief=True)
    assert "```mermaid" not in markdown
    assert markdown == md_snapshot


def test_failures_are_told_with_how_they_were_resolved():
    plan, log = failing_run()
    report = build_report(plan, log)
    story = "\n".join(report.resolutions)
    assert (
        "Task 2 (Add the wc subcommand): dispatch on Codex failed at `12:01:40` "
        "(integration gate: `python -m pytest -q` exited 1) → context expansion on Codex at `12:02:05` "
        "succeeded"
    ) in story
    assert (
        "review round 1 (Claude): request-changes, 1 critical/major → revising; round 2 (Claude): approve → accepted"
        in story
    )
    assert (
        "Task 3 (Stream large files): dispatch on Codex failed at `12:01:42` (codex: rate limit"
        in story
    )
    assert "now blocked: needs decomposition" in story
    tips = "\n".join(report.recommendations)
    assert "Task 2 needed 2 attempts (context expansion)" in tips
    assert "Task 3 is blocked (needs decomposition)" in tips
    assert "Codex failed 4 of 6 dispatches" in tips
    assert "Task 1 dispatch on Gemini used 52,000 tokens, over its abort threshold (50,000)" in tips
    assert "1 task(s) are still pending" in tips


def test_tokens_and_cost_per_cli_mark_estimates():
    plan, log = failing_run()
    data = report_data(build_report(plan, log))
    by_tool = {c["tool"]: c for c in data["clis"]}
    assert by_tool["codex"] == {
        "tool": "codex",
        "dispatches": 6,
        "tokens": 90_000,
        "failures": 4,
        "retries": 3,
        "cost": pytest.approx(0.2438),
        "cost_estimated": True,
    }
    assert by_tool["claude"]["cost_estimated"] is False and by_tool["claude"]["dispatches"] == 2
    assert data["tokens"] == sum(t.usage.total for t in plan.tasks) + sum(
        r.usage.total for r in plan.reviews
    )
    assert data["cost_estimated"] is True
    levels = {b["what"]: b["level"] for b in data["budgets"]}
    assert levels["Task 1 dispatch"] == "red" and levels["Task 3 retry"] == "ok"


def test_timing_wall_time_waits_and_critical_path():
    plan, log = finished_run()
    data = report_data(build_report(plan, log))
    timing = data["timing"]
    assert timing["start"] == "2026-11-21T11:59:05Z"  # the challenge's row: 11:59:30 minus 25s
    assert timing["end"] == "2026-11-21T12:01:50Z"
    assert timing["critical_path"] == ["1", "2"] and timing["critical_s"] == 90
    tasks = {t["id"]: t for t in data["tasks"]}
    assert tasks["2"]["waited_s"] == 40 and tasks["2"]["queued_s"] == 1
    assert tasks["1"]["waited_s"] == 0


def test_report_without_log_uses_the_plan_and_says_what_is_missing(md_snapshot):
    plan, _ = failing_run()
    report = build_report(plan, None)
    markdown = render_markdown(report)
    assert "> **Missing:** No execution log (logging was off" in markdown
    assert "From the plan's fields (no log):" in markdown
    assert "Logging was off: set MAESTRO_LOG=summary" in markdown
    # The timeline still has one bar per started task, from the plan's start and finish.
    gantt_text = diagrams(markdown)[1]
    assert gantt_text.count(":done,") == 2 and gantt_text.count(":crit,") == 1
    assert markdown == md_snapshot


def test_report_from_log_alone_when_the_plan_is_gone():
    _, log = finished_run()
    report = build_report(None, log)
    assert report.tokens == sum(r.tokens or 0 for r in log.rows())
    assert any("No plan file" in note for note in report.missing)
    assert report.plan.goal == log.sessions[-1].goal


# ---- diagrams ----------------------------------------------------------------------------


@pytest.mark.parametrize("run", [finished_run, failing_run])
def test_every_diagram_passes_the_strict_check(run):
    plan, log = run()
    for report in (build_report(plan, log), build_report(plan, None)):
        blocks = diagrams(render_markdown(report))
        assert len(blocks) == 2
        for block in blocks:
            assert check(block) == [], block


def test_flowchart_colors_each_task_by_status():
    plan, _ = failing_run()
    text = flowchart(plan.tasks)
    assert 't3["3. Stream large files (blocked)"]:::blocked' in text
    assert 't2["2. Add the wc subcommand (done, review approved)"]:::done' in text
    assert "  t1 --> t2" in text and "  t3 --> t4" in text
    assert all(
        f"classDef {s} " in text for s in ("pending", "running", "done", "failed", "blocked")
    )


def test_labels_escape_what_mermaid_would_read():
    label = node_label('say "hi" <b>#1; `x`')
    assert label == "say #quot;hi#quot; #lt;b#gt;#35;1; #96;x#96;"
    text = flowchart([Task("1", 'Quote " and <tag> and #5;')])
    assert check(text) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            'flowchart LR\n  t1["a"]:::done\n  t1 --> t2\n  classDef done fill:#fff',
            "undeclared node t2",
        ),
        ('flowchart LR\n  t1["a "b""]:::done\n  classDef done fill:#fff', "not a node"),
        ('flowchart LR\n  t1["a"]:::done', "no classDef"),
        (
            GANTT_HEAD + "    b :done, d1, 2026-02-30 12:00:00, 2026-02-30 12:00:05",
            "date does not exist",
        ),
        (
            GANTT_HEAD + "    b: c :done, d1, 2026-01-01 12:00:00, 2026-01-01 12:00:05",
            "not a section or bar",
        ),
        ("graph TD\n  a --> b", "expected 'flowchart"),
    ],
)
def test_strict_check_catches_broken_diagrams(text, problem):
    assert any(problem in p for p in check(text)), check(text)


def test_gantt_bars_never_have_zero_length():
    from datetime import datetime

    moment = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    text = gantt([Bar("Task 1", "sim: dispatch; #2", moment, moment)])
    assert "    sim dispatch 2 :done, d1, 2026-11-21 12:00:00, 2026-11-21 12:00:01" in text
    assert check(text) == []


def large_run(n: int = 700) -> tuple[Plan, ParsedLog]:
    """A chain-and-fan plan past Mermaid's limits: n tasks, about 2n dependencies."""
    tasks, rows = [], []
    for i in range(1, n + 1):
        depends = [str(d) for d in (i - 1, i - 7) if d >= 1]
        stamp = f"2026-11-21T{12 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        tasks.append(
            Task(
                str(i),
                f"Step {i}",
                status="failed" if i == 350 else "done",
                tool="codex",
                depends=depends,
                attempts=1,
                started=stamp,
                finished=stamp,
            )
        )
        rows.append(
            LogRow(
                time=stamp,
                actor="Hub",
                action="Dispatch",
                target=f"Task {i}",
                tokens=1000,
                duration_s=1,
                outcome="✅",
                tool="codex",
                task=str(i),
            )
        )
    return Plan(goal="large", tasks=tasks), ParsedLog(
        sessions=[LogSession("2026-11-21 12:00 UTC", "large", rows=rows)]
    )


def test_large_runs_are_drawn_coarser_so_mermaid_still_draws_them():
    plan, log = large_run()
    assert check(flowchart(plan.tasks))[0].endswith(f"Mermaid draws fewer than {MAX_EDGES}")
    report = build_report(plan, log)
    assert report.flowchart_note and "one node per group of waves" in report.flowchart_note
    assert report.gantt_note and "one bar per" in report.gantt_note
    for text in (report.flowchart, report.gantt):
        assert check(text) == [] and len(text) <= MAX_TEXT
    assert (
        'Waves 349-352: 4 tasks (3 done, 1 failed)"]:::failed' in report.flowchart
    )  # the most urgent wins
    markdown = render_markdown(report)
    assert f"> {report.flowchart_note}" in markdown and f"> {report.gantt_note}" in markdown


def _mermaid_js_ready() -> bool:
    return shutil.which("node") is not None and (MERMAID_JS / "node_modules" / "mermaid").is_dir()


def test_diagrams_parse_with_mermaid_itself():
    """Mermaid's own parser (the npm package, under node). Installed by .ci/run with
    `npm ci --prefix tests/engine/mermaid_js`; without it the test skips, unless
    MAESTRO_REQUIRE_MERMAID_JS=1 (CI) makes its absence a failure."""
    if not _mermaid_js_ready():
        if os.environ.get("MAESTRO_REQUIRE_MERMAID_JS") == "1":
            pytest.fail(
                "node or tests/engine/mermaid_js/node_modules is missing; run "
                "`npm ci --prefix tests/engine/mermaid_js`"
            )
        pytest.skip("mermaid npm package not installed: npm ci --prefix tests/engine/mermaid_js")
    texts = []
    for run in (finished_run, failing_run):
        plan, log = run()
        texts += diagrams(render_markdown(build_report(plan, log)))
        texts += diagrams(render_markdown(build_report(plan, None)))
    big = build_report(*large_run())
    texts += [big.flowchart, big.gantt]
    texts.append(
        flowchart(
            [
                Task("1", 'Quote " and <tag> and #5; `x`', depends=[]),
                Task("1.1", "end", depends=["1"], status="failed"),
            ]
        )
    )
    broken = 'flowchart LR\n  t1["a"]:::done\n  t1 -->'
    out = subprocess.run(
        ["node", str(MERMAID_JS / "check.mjs")],
        input=json.dumps(texts + [broken]),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    results = json.loads(out.stdout)
    assert results[:-1] == [None] * len(texts), [r for r in results if r]
    assert results[-1] and "Parse error" in results[-1]  # the parser really rejects a broken one

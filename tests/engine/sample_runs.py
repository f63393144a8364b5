"""Two runs, as the engine leaves them in the plan and the log, for report tests.

Built as objects and turned into the log's real text (``render``, then
``parse``), so the report reads exactly what a run writes. Times are fixed.
"""

from __future__ import annotations

from maestro.logfile import LogRow, LogSession, ParsedLog
from maestro.logfile.document import parse, render
from maestro.state.model import Challenge, Finding, Plan, Receipt, Review, Source, Task, Usage

GOAL = "Add a word-count command to the CLI"
RUN = "20261121T120000Z-ab12"


def _row(
    time: str,
    action: str,
    tool: str | None,
    task: str | None,
    tokens: int | None,
    seconds: float | None,
    outcome: str = "✅",
    notes: str = "",
    *,
    failed: bool = False,
    retry: bool = False,
    cost: float | None = None,
    estimated: bool = False,
    target: str | None = None,
) -> LogRow:
    return LogRow(
        time=f"2026-11-21T{time}Z",
        actor="Hub",
        action=action,
        target=target if target is not None else (f"Task {task}" if task else ""),
        tokens=tokens,
        duration_s=seconds,
        outcome=outcome,
        notes=notes,
        tool=tool,
        failed=failed,
        retry=retry,
        cost=cost,
        cost_estimated=estimated,
        task=task,
    )


def through_text(log: ParsedLog) -> ParsedLog:
    return parse(render(log))


def _task(
    id: str,
    title: str,
    tool: str,
    *,
    depends: list[str] | None = None,
    status: str = "done",
    attempts: int = 1,
    usage: Usage | None = None,
    cost: float | None = None,
    estimated: bool = True,
    started: str | None = None,
    finished: str | None = None,
    result: str | None = None,
    review: str | None = None,
) -> Task:
    return Task(
        id=id,
        title=title,
        status=status,
        specialist="code",
        tool=tool,
        depends=depends or [],
        files=[f"src/wc_{id}.py"],
        criteria=[f"{title} works"],
        validation="python -m pytest -q",
        attempts=attempts,
        usage=usage or Usage(),
        cost=cost,
        cost_estimated=estimated if cost is not None else False,
        started=f"2026-11-21T{started}Z" if started else None,
        finished=f"2026-11-21T{finished}Z" if finished else None,
        result=result,
        run_id=RUN if started else None,
        receipt=Receipt(
            diff_stat="1 file changed, 20 insertions(+)",
            files_changed=[f"src/wc_{id}.py"],
            validation="python -m pytest -q",
            validation_exit=0,
            diff_sha="a" * 64,
        )
        if status == "done"
        else None,
        review=review,
    )


def finished_run() -> tuple[Plan, ParsedLog]:
    """Three tasks, all done on the first attempt; one challenge and one approving review."""
    plan = Plan(
        goal=GOAL,
        source=Source("claude", "2026-11-21 11:58 UTC"),
        tasks=[
            _task(
                "1",
                "Count words in a file",
                "gemini",
                usage=Usage(12_000, 2_000, 1_000),
                cost=0.0114,
                started="12:00:00",
                finished="12:00:40",
                result="Added wc_1.py with count_words().",
            ),
            _task(
                "2",
                "Add the wc subcommand",
                "codex",
                depends=["1"],
                usage=Usage(18_000, 3_500),
                cost=0.0575,
                started="12:00:41",
                finished="12:01:31",
                result="Wired the wc subcommand.",
                review="approved",
            ),
            _task(
                "3",
                "Document wc in the README",
                "claude",
                depends=["1"],
                usage=Usage(22_000, 1_500, 9_000),
                cost=0.0931,
                estimated=False,
                started="12:00:42",
                finished="12:01:12",
                result="README section added.",
            ),
        ],
        challenges=[
            Challenge(
                id="C1",
                challenger="gemini",
                time="2026-11-21T11:59:30Z",
                findings={"scope": [Finding("could share the file reader with Task 1", task="2")]},
                usage=Usage(6_000, 400),
                cost=0.0021,
                cost_estimated=True,
            )
        ],
        reviews=[
            Review(
                id="R1",
                task="2",
                reviewer="gemini",
                round=1,
                time="2026-11-21T12:01:50Z",
                verdict="approve",
                findings=[Finding("the help text could name the flag", task="2", severity="note")],
                usage=Usage(9_000, 600),
                cost=0.0031,
                cost_estimated=True,
                diff_sha="a" * 64,
                outcome="accepted",
            )
        ],
    )
    session = LogSession(
        stamp="2026-11-21 11:59 UTC",
        goal=GOAL,
        run_id=RUN,
        hub="claude",
        rows=[
            _row(
                "11:59:30",
                "Challenge",
                "gemini",
                None,
                6_400,
                25,
                notes="C1: 1 findings",
                cost=0.0021,
                estimated=True,
                target="challenge",
            ),
            _row(
                "12:00:40",
                "Dispatch",
                "gemini",
                "1",
                14_000,
                40,
                notes="attempt 1",
                cost=0.0114,
                estimated=True,
            ),
            _row("12:01:12", "Dispatch", "claude", "3", 23_500, 30, notes="attempt 1", cost=0.0931),
            _row(
                "12:01:31",
                "Dispatch",
                "codex",
                "2",
                21_500,
                50,
                notes="attempt 1",
                cost=0.0575,
                estimated=True,
            ),
            _row(
                "12:01:50",
                "Review",
                "gemini",
                "2",
                9_600,
                18,
                notes="R1 round 1: approve -> accepted",
                cost=0.0031,
                estimated=True,
                target="review",
            ),
        ],
    )
    return plan, through_text(ParsedLog(sessions=[session]))


def failing_run() -> tuple[Plan, ParsedLog]:
    """Failures and retries: a gate failure retried with context, a rate limit retried at
    once, a task blocked after its retries, a dependent left pending, a review that asked
    for changes before approving, and a dispatch over its abort threshold."""
    plan = Plan(
        goal=GOAL,
        source=Source("codex", "2026-11-21 11:58 UTC"),
        tasks=[
            _task(
                "1",
                "Count words in a file",
                "gemini",
                usage=Usage(40_000, 12_000),
                cost=0.0276,
                started="12:00:00",
                finished="12:01:10",
                result="count_words() added.",
            ),
            _task(
                "2",
                "Add the wc subcommand",
                "codex",
                depends=["1"],
                attempts=2,
                usage=Usage(30_000, 6_000),
                cost=0.0975,
                started="12:01:11",
                finished="12:03:00",
                result="Subcommand wired.",
                review="approved",
            ),
            _task(
                "3",
                "Stream large files",
                "codex",
                depends=["1"],
                status="blocked",
                attempts=3,
                usage=Usage(45_000, 9_000),
                cost=0.1463,
                started="12:01:12",
                finished="12:04:30",
                result="needs decomposition: integration gate: `python -m pytest -q` exited 1 (after 3 attempts)",
            ),
            _task("4", "Benchmark wc", "claude", depends=["3"], status="pending", attempts=0),
        ],
        reviews=[
            Review(
                id="R1",
                task="2",
                reviewer="claude",
                round=1,
                time="2026-11-21T12:02:10Z",
                verdict="request-changes",
                findings=[
                    Finding("wc crashes on an empty file", task="2", severity="major"),
                    Finding("name the flag in the help text", task="2", severity="minor"),
                ],
                usage=Usage(11_000, 900),
                cost=0.0402,
                diff_sha="b" * 64,
                outcome="revising",
            ),
            Review(
                id="R2",
                task="2",
                reviewer="claude",
                round=2,
                time="2026-11-21T12:03:20Z",
                verdict="approve",
                usage=Usage(11_500, 300),
                cost=0.0391,
                diff_sha="c" * 64,
                outcome="accepted",
            ),
        ],
    )
    session = LogSession(
        stamp="2026-11-21 12:00 UTC",
        goal=GOAL,
        run_id=RUN,
        hub="codex",
        rows=[
            _row(
                "12:01:10",
                "Dispatch",
                "gemini",
                "1",
                52_000,
                70,
                notes="attempt 1; 🛑 red (52,000 > 50,000)",
                cost=0.0276,
                estimated=True,
            ),
            _row(
                "12:01:40",
                "Dispatch",
                "codex",
                "2",
                15_000,
                29,
                "integration gate: `python -m pytest -q` exited 1",
                "attempt 1",
                failed=True,
                cost=0.0406,
                estimated=True,
            ),
            _row(
                "12:01:42",
                "Dispatch",
                "codex",
                "3",
                2_000,
                30,
                "codex: rate limit: 429 Too Many Requests",
                "attempt 1",
                failed=True,
                cost=0.0054,
                estimated=True,
            ),
            _row(
                "12:02:05",
                "Retry",
                "codex",
                "2",
                14_000,
                24,
                notes="attempt 2",
                retry=True,
                cost=0.0381,
                estimated=True,
            ),
            _row(
                "12:02:10",
                "Review",
                "claude",
                "2",
                11_900,
                20,
                notes="R1 round 1: request-changes -> revising",
                cost=0.0402,
                target="review",
            ),
            _row(
                "12:02:50",
                "Retry",
                "codex",
                "3",
                26_000,
                60,
                "integration gate: `python -m pytest -q` exited 1",
                "attempt 2",
                failed=True,
                retry=True,
                cost=0.0704,
                estimated=True,
            ),
            _row(
                "12:03:00",
                "Dispatch",
                "codex",
                "2",
                7_000,
                40,
                notes="attempt 3; review R1 findings",
                cost=0.0188,
                estimated=True,
            ),
            _row(
                "12:03:20",
                "Review",
                "claude",
                "2",
                11_800,
                19,
                notes="R2 round 2: approve -> accepted",
                cost=0.0391,
                target="review",
            ),
            _row(
                "12:04:30",
                "Retry",
                "codex",
                "3",
                26_000,
                95,
                "integration gate: `python -m pytest -q` exited 1",
                "attempt 3",
                failed=True,
                retry=True,
                cost=0.0705,
                estimated=True,
            ),
        ],
    )
    return plan, through_text(ParsedLog(sessions=[session]))

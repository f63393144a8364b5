"""How long `maestro report` takes to build and render large runs, and whether Mermaid's
own parser still accepts the diagrams at that size.

A layered plan of N tasks (each depends on up to two tasks of the layer before), every
task done after 1-3 attempts, one log row per attempt, a review for every tenth task.
Times the in-process build (figures, narrative, recommendations) and the Markdown render
(median of 5), then, when tests/engine/mermaid_js is installed, the Mermaid parse.

Run: python bench/report.py [--tasks 50 500 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from maestro import clis
from maestro.logfile import LogRow, LogSession, ParsedLog
from maestro.logfile.document import parse, render
from maestro.report import build_report, render_markdown
from maestro.state.model import Plan, Review, Task, Usage
from tests.engine.mermaid_check import check

clis.load({})  # the roster: the built-in CLIs


TOOLS = ("claude", "gemini", "codex")
MERMAID_JS = ROOT / "tests" / "engine" / "mermaid_js"


def clock(seconds: int) -> str:
    return f"2026-11-21T{12 + seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def sample(n: int, seed: int = 7) -> tuple[Plan, ParsedLog]:
    rng = random.Random(seed)
    width = max(1, int(n**0.5))
    tasks: list[Task] = []
    rows: list[LogRow] = []
    reviews: list[Review] = []
    for i in range(n):
        layer_start = (i // width) * width
        previous = list(range(max(0, layer_start - width), layer_start))
        depends = sorted({str(d + 1) for d in rng.sample(previous, min(2, len(previous)))}, key=int)
        tool = TOOLS[i % 3]
        attempts = rng.choice((1, 1, 1, 2, 3))
        start = (i // width) * 120 + rng.randint(0, 20)
        spent = 0
        for attempt in range(attempts):
            took = rng.randint(5, 40)
            spent += took
            failed = attempt < attempts - 1
            rows.append(
                LogRow(
                    time=clock(start + spent),
                    actor="Hub",
                    action="Retry" if attempt else "Dispatch",
                    target=f"Task {i + 1}",
                    tokens=rng.randint(2_000, 60_000),
                    duration_s=took,
                    outcome="integration gate: exited 1" if failed else "✅",
                    notes=f"attempt {attempt + 1}",
                    tool=tool,
                    failed=failed,
                    retry=attempt > 0,
                    cost=0.01,
                    cost_estimated=tool != "claude",
                    task=str(i + 1),
                )
            )
        tasks.append(
            Task(
                str(i + 1),
                f"Task number {i + 1}",
                status="done",
                tool=tool,
                depends=depends,
                attempts=attempts,
                usage=Usage(20_000 * attempts, 2_000 * attempts),
                cost=0.01 * attempts,
                cost_estimated=tool != "claude",
                started=clock(start),
                finished=clock(start + spent),
            )
        )
        if i % 10 == 0:
            reviews.append(
                Review(
                    f"R{len(reviews) + 1}",
                    str(i + 1),
                    TOOLS[(i + 1) % 3],
                    1,
                    clock(start + spent + 30),
                    "approve",
                    usage=Usage(8_000, 300),
                    cost=0.003,
                    outcome="accepted",
                )
            )
    rows.sort(key=lambda r: r.time)
    log = parse(
        render(ParsedLog(sessions=[LogSession("2026-11-21 12:00 UTC", "bench", rows=rows)]))
    )
    return Plan(goal="bench", tasks=tasks, reviews=reviews), log


def median_ms(fn, runs: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def mermaid_parse_ms(texts: list[str]) -> str:
    if shutil.which("node") is None or not (MERMAID_JS / "node_modules" / "mermaid").is_dir():
        return "n/a (npm ci --prefix tests/engine/mermaid_js)"
    began = time.perf_counter()
    out = subprocess.run(
        ["node", str(MERMAID_JS / "check.mjs")],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    took = (time.perf_counter() - began) * 1000
    errors = [e for e in json.loads(out.stdout) if e]
    return f"{took:,.0f} ms, {'ok' if not errors else 'REJECTED: ' + errors[0][:80]}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, nargs="+", default=[50, 500, 2000])
    args = parser.parse_args()
    print(
        f"{'tasks':>6} {'log rows':>9} {'build ms':>9} {'render ms':>10} {'report KB':>10}  strict check, Mermaid parse"
    )
    for n in args.tasks:
        plan, log = sample(n)
        report = build_report(plan, log)
        markdown = render_markdown(report)
        build = median_ms(lambda plan=plan, log=log: build_report(plan, log))
        render = median_ms(lambda report=report: render_markdown(report))
        problems = check(report.flowchart) + (check(report.gantt) if report.gantt else [])
        strict = "ok" if not problems else problems[0]
        texts = [report.flowchart] + ([report.gantt] if report.gantt else [])
        print(
            f"{n:>6} {len(log.rows()):>9} {build:>9.1f} {render:>10.1f} {len(markdown) / 1024:>10.0f}  "
            f"{strict}, {mermaid_parse_ms(texts)}"
        )


if __name__ == "__main__":
    main()

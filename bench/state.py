"""The plan file's cost: `maestro status` whole-process time, in-process parse and render.

For plans of 50, 500 and 2000 tasks (mid-run: a third done with results, tokens, cost,
times and receipts, some running, the rest pending with criteria and dependencies) in a
temporary project, prints:

- the median wall time of `python -m maestro status` and `status --json`, each run as a
  fresh process: warm (the parse cache holds the file) over --runs runs, cold (the cache
  removed before every run) over --runs runs, and the very first run of each size;
- in-process medians: parse, render of the parsed plan (through its layout), canonical
  render (no layout), one edit() cycle, and a cache load;
- the top entries of `python -X importtime -m maestro status` (warm and cold).

Run: python bench/state.py [--sizes 50,500,2000] [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from maestro.paths import ProjectPaths
from maestro.state import cache
from maestro.state.model import Plan, Receipt, Source, Task, Usage
from maestro.state.planfile import PARSER_VERSION, parse, render
from maestro.state.store import PlanStore


def build_plan(size: int) -> Plan:
    tasks = []
    for i in range(1, size + 1):
        task = Task(
            str(i),
            f"Implement part {i} of the billing service",
            specialist="code",
            agent="coder",
            tool=("claude", "gemini", "codex")[i % 3],
            depends=[str(i - 1)] if i > 1 else [],
            files=[f"src/billing/part_{i}.py", f"tests/test_part_{i}.py"],
            criteria=[
                f"part_{i}.charge() returns a Receipt for a valid card",
                "Declined cards raise PaymentDeclined with the gateway's code",
            ],
            validation=f"pytest tests/test_part_{i}.py -q",
            risk="medium",
        )
        if i <= size // 3:
            task.status, task.attempts = "done", 1
            task.result = f"Implemented part {i}; 6 tests pass."
            task.usage, task.cost, task.cost_estimated = (
                Usage(27316, 1204, 8000),
                0.0412,
                i % 2 == 0,
            )
            task.started, task.finished = "2026-11-21T12:00:05Z", "2026-11-21T12:01:10Z"
            task.session, task.run_id = f"sess-{i:05d}", "20261121T120000Z"
            task.receipt = Receipt(
                "2 files changed, 48 insertions(+)", task.files, task.validation, 0, "3f2a9c1"
            )
        elif i <= size // 3 + 4:
            task.status, task.started, task.pid = "running", "2026-11-21T12:02:00Z", 40000 + i
        tasks.append(task)
    return Plan(
        goal="Add card payments to the billing service.",
        tasks=tasks,
        source=Source("claude", "2026-11-21 11:55 UTC"),
    )


def median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def env_for(project: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")}
    env["PYTHONPATH"] = str(ROOT)
    env["HOME"] = str(project.parent / "home")
    return env


def run_status(project: Path, *extra: str, importtime: bool = False) -> tuple[float, str]:
    argv = [
        sys.executable,
        *(["-X", "importtime"] if importtime else []),
        "-m",
        "maestro",
        "status",
        *extra,
    ]
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=project, env=env_for(project), capture_output=True, text=True, check=False
    )
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"maestro status failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return elapsed, done.stderr


def whole_process(project: Path, store: PlanStore, runs: int) -> dict[str, float]:
    figures = {}
    for extra in ((), ("--json",)):
        name = "status" + (" --json" if extra else "")
        store.cache_path.unlink(missing_ok=True)
        figures[f"{name} first run"] = run_status(project, *extra)[0]
        figures[f"{name} warm"] = statistics.median(
            run_status(project, *extra)[0] for _ in range(runs)
        )
        cold = []
        for _ in range(runs):
            store.cache_path.unlink(missing_ok=True)
            cold.append(run_status(project, *extra)[0])
        figures[f"{name} cold"] = statistics.median(cold)
    return figures


def in_process(store: PlanStore, plan: Plan, runs: int) -> dict[str, float]:
    data = store.path.read_bytes()
    text = data.decode()
    parsed = parse(text)
    key = cache.cache_key(data, PARSER_VERSION)
    cache.write(store.cache_path, key, parsed)

    def edit_cycle() -> None:
        with store.edit() as p:
            p.tasks[-1].attempts += 1

    return {
        "parse": median_ms(lambda: parse(text), runs),
        "render (layout)": median_ms(lambda: render(parsed), runs),
        "render (canonical)": median_ms(lambda: render(plan), runs),
        "edit() cycle": median_ms(edit_cycle, max(3, runs // 3)),
        "cache load": median_ms(lambda: cache.read(store.cache_path, key), runs),
    }


def import_top(project: Path, store: PlanStore, warm: bool, count: int = 8) -> list[str]:
    if not warm:
        store.cache_path.unlink(missing_ok=True)
    else:
        run_status(project)
    stderr = run_status(project, importtime=True)[1]
    rows = []
    for line in stderr.splitlines():
        # "import time:  self [us] | cumulative | imported package"
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line.split(":", 1)[1].split("|")
        rows.append((int(cumulative), int(own), name.rstrip()))
    rows.sort(reverse=True)
    return [
        f"{cum / 1000:7.1f} ms cumulative {own / 1000:6.1f} ms self  {name}"
        for cum, own, name in rows[:count]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="50,500,2000")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs; medians of {args.runs} runs\n"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "proj"
            project.mkdir()
            (Path(tmp) / "home").mkdir()
            subprocess.run(["git", "init", "-q", str(project)], check=True)
            store = PlanStore(ProjectPaths(project))
            plan = build_plan(size)
            store.create(plan)
            print(f"== {size} tasks ({store.path.stat().st_size / 1024:.0f} KiB)")
            for name, ms in whole_process(project, store, args.runs).items():
                print(f"  maestro {name:<26} {ms:8.1f} ms")
            for name, ms in in_process(store, plan, args.runs).items():
                print(f"  in-process {name:<23} {ms:8.1f} ms")
            if size == 500:
                for warm in (True, False):
                    print(
                        f"  python -X importtime -m maestro status, {'warm' if warm else 'cold'} cache, top entries:"
                    )
                    for row in import_top(project, store, warm):
                        print("    " + row)
            print()


if __name__ == "__main__":
    main()

"""What a person waits for before Maestro does anything: `maestro status` and a run's start.

Each figure is the whole process, as a user types the command (the console script next
to this interpreter), median of --runs runs, in temporary git projects with one HOME:

- `maestro status` on a plan of 40 and of 500 tasks, mid-run (a third done with results,
  tokens, cost, times and receipts, four running, the rest pending with criteria and
  dependencies), after one run not counted (goals: at most 150 ms and 500 ms);
- `maestro run` on a 3-task `tool: sim` plan, from just before the process is started to
  its first spoke's start (the sim spoke runs in the engine's process: a wrapper records
  the time it is called), each run in a new project planned with `maestro plan --from`
  (goal: at most 300 ms).

Run: python bench/state.py [--runs 10] [--sizes 40,500] [--skip status,run]
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

import yaml

from maestro import clis
from maestro.paths import ProjectPaths
from maestro.state.model import Plan, Receipt, Source, Task, Usage
from maestro.state.store import PlanStore

clis.load({})  # the roster: the built-in CLIs


GOALS_MS = {40: 150, 500: 500}
FIRST_SPOKE_GOAL_MS = 300

# `maestro` as the console script runs it, with SimSpoke.execute wrapped to note the time
# it is called (argv[1]: the file to append it to).
WRAPPER = """
import sys, time
import maestro.clis.sim as sim
note, sys.argv = sys.argv[1], ["maestro", *sys.argv[2:]]
execute = sim.SimSpoke.execute
def noted(self, *args, **kwargs):
    with open(note, "a") as handle:
        handle.write(f"{time.time()}\\n")
    return execute(self, *args, **kwargs)
sim.SimSpoke.execute = noted
from maestro.cli import console_main
console_main()
"""


def maestro_argv() -> list[str]:
    """The console script next to this interpreter, as a user types `maestro`."""
    script = Path(sys.executable).with_name("maestro")
    return [str(script)] if script.exists() else [sys.executable, "-m", "maestro"]


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


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    env["HOME"] = str(home)
    return env


def git_project(folder: Path) -> Path:
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    folder.mkdir(parents=True)
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=folder, check=True)
    (folder / "README.md").write_text("bench\n")
    subprocess.run([*git, "add", "-A"], cwd=folder, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=folder, check=True)
    return folder


def timed(argv: list[str], cwd: Path, home: Path) -> float:
    """The whole process's wall time in ms; a failure stops the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(
        argv, check=False, cwd=cwd, env=env_for(home), capture_output=True, text=True
    )
    took = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-600:]}")
    return took


def status(base: Path, size: int, runs: int) -> None:
    project = git_project(base / f"status-{size}")
    PlanStore(ProjectPaths(project)).create(build_plan(size))
    kib = (project / ".ai" / "MAESTRO.md").stat().st_size / 1024
    timed([*maestro_argv(), "status"], project, base / "home")  # not counted
    times = sorted(timed([*maestro_argv(), "status"], project, base / "home") for _ in range(runs))
    print(
        f"maestro status, {size} tasks ({kib:.0f} KiB): median {statistics.median(times):.0f} ms "
        f"(goal <= {GOALS_MS.get(size, '-')} ms; min {times[0]:.0f}, max {times[-1]:.0f})"
    )


def first_spoke(base: Path, runs: int) -> None:
    source = base / "sim-plan.yaml"
    tasks = [
        {
            "id": i,
            "title": f"Write module {name}",
            "specialist": "code",
            "agent": "coder",
            "tool": "sim",
            "files": [f"src/{name}.py"],
            "criteria": [f"src/{name}.py exists"],
            "validation": f"test -f src/{name}.py",
        }
        for i, name in enumerate("abc", start=1)
    ]
    plan = {"version": 1, "goal": "Write three modules", "hub": "claude", "tasks": tasks}
    source.write_text(yaml.safe_dump(plan, sort_keys=False))
    home = base / "home"
    firsts = []
    for n in range(runs):
        project = git_project(base / f"run-{n}")
        timed([*maestro_argv(), "plan", "--from", str(source), "--yes"], project, home)
        note = base / f"run-{n}.note"
        started = time.time()
        timed([sys.executable, "-c", WRAPPER, str(note), "run"], project, home)
        firsts.append((float(note.read_text().split()[0]) - started) * 1000)
    firsts.sort()
    print(
        f"maestro run, 3 sim tasks, process start -> first spoke: median {statistics.median(firsts):.0f} ms "
        f"(goal <= {FIRST_SPOKE_GOAL_MS} ms; min {firsts[0]:.0f}, max {firsts[-1]:.0f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--sizes", default="40,500")
    parser.add_argument("--skip", default="", help="comma-separated: status, run")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs; medians of {args.runs} runs")
    with tempfile.TemporaryDirectory(prefix="maestro-bench-") as tmp:
        base = Path(tmp)
        (base / "home").mkdir()
        if "status" not in skip:
            for size in (int(s) for s in args.sizes.split(",")):
                status(base, size, args.runs)
        if "run" not in skip:
            first_spoke(base, args.runs)


if __name__ == "__main__":
    main()

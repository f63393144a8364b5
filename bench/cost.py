"""What a run costs Maestro as the plan grows: its own CPU per task, and `maestro status`
after a person's edit of a plan that has run.

For each size, a temporary git project with that many independent research tasks for
Claude Code, run by `maestro run` (the console script, 8 at once, no stagger) against the
fake `claude` of tests/fakes, which answers at once with a valid Result Submission:

- the run's wall time and CPU (the engine process and everything it started: git, the
  fakes), against the spokes alone: the fake started as many times with the same argv,
  8 at once. The difference is Maestro's own CPU; per task it should not grow with the
  plan (goal: at 500 tasks at most 1.3x its figure at 50), and the whole run should take
  at most 2x the spokes alone;
- then a hand edit of the plan (its Goal reworded, as a person saves it), and
  `maestro status` on it, the whole process, median of --runs (goal at 500 tasks: at most
  500 ms), with the size of the plan's kept history.

Run: python bench/cost.py [--sizes 50,500] [--runs 5]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.overhead import ANSWER, plan_yaml
from bench.state import env_for, git_project, maestro_argv
from maestro import clis
from tests.fakes.plugin import FakeClis

clis.load({})  # the roster: the built-in CLIs


AT_ONCE = 8
CPU_GROWTH_GOAL = 1.3
STATUS_GOAL_MS = 500
RUN_GOAL = 2.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and all it started, its output); a failure stops the
    benchmark."""
    cpu, start = children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} exited {done.returncode}: {done.stderr[-800:]}")
    return wall, children_cpu() - cpu, done.stdout


def spokes_alone(fakes: FakeClis, cwd: Path, env: dict[str, str], size: int) -> tuple[float, float]:
    """The fake started ``size`` times with the argv of the run's first call, AT_ONCE at a
    time: (wall s, CPU s)."""
    first = fakes.runs("claude")[0]
    argv = [str(fakes.path("claude")), *first["argv"]]
    spoke_env = {**env, **first["env"]}

    def one(_: int) -> None:
        subprocess.run(argv, cwd=cwd, env=spoke_env, capture_output=True, check=True)

    cpu, start = children_cpu(), time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(AT_ONCE) as pool:
        list(pool.map(one, range(size)))
    return time.perf_counter() - start, children_cpu() - cpu


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def one_size(base: Path, size: int, runs: int) -> dict[str, float]:
    home = base / f"home-{size}"
    home.mkdir()
    project = git_project(base / f"proj-{size}")
    fakes = FakeClis(base / f"fakes-{size}")
    fakes.default("claude", {"text": ANSWER, "usage": {"input": 1000, "output": 200}})
    env = env_for(home)
    env.update(
        {
            "PATH": f"{fakes.bin_dir}{os.pathsep}{env.get('PATH', os.defpath)}",
            "MAESTRO_MAX_CONCURRENT": str(AT_ONCE),
            "MAESTRO_STAGGER_DELAY": "0",
            "MAESTRO_SANDBOX_WRITE": str(fakes.state_dir),  # where the confined fakes record
            "MAESTRO_RETRY_BACKOFF": "0",
        }
    )
    source = base / f"plan-{size}.yaml"
    source.write_text(plan_yaml(size, tool="claude"))
    measured([*maestro_argv(), "plan", "--from", str(source), "--yes"], project, env)
    run_wall, run_cpu, out = measured([*maestro_argv(), "run", "--json"], project, env)
    counts = json.loads(out)["data"]["counts"]
    if counts["done"] != size:
        raise SystemExit(f"the run did not finish every task: {counts}")
    alone_wall, alone_cpu = spokes_alone(fakes, project, env, size)
    plan = project / ".ai" / "MAESTRO.md"
    text = plan.read_text(encoding="utf-8")
    plan.write_text(text.replace("overhead per dispatch", "overhead, by hand", 1))
    status = [measured([*maestro_argv(), "status"], project, env) for _ in range(runs)]
    history = next(home.rglob("plan-history"), None)
    row = {
        "size": size,
        "run_s": run_wall,
        "run_cpu_s": run_cpu,
        "alone_s": alone_wall,
        "alone_cpu_s": alone_cpu,
        "own_cpu_ms_per_task": (run_cpu - alone_cpu) / size * 1000,
        "status_ms": statistics.median(w for w, _, _ in status) * 1000,
        "status_cpu_ms": statistics.median(c for _, c, _ in status) * 1000,
        "history_kib": folder_bytes(history) / 1024 if history else 0.0,
        "plan_kib": plan.stat().st_size / 1024,
    }
    print(
        f"{size} tasks: run {run_wall:.1f} s wall, {run_cpu:.1f} s CPU; spokes alone "
        f"{alone_wall:.1f} s wall, {alone_cpu:.1f} s CPU; run / spokes alone "
        f"{run_wall / alone_wall:.2f}x (goal <= {RUN_GOAL}x); Maestro's own CPU "
        f"{row['own_cpu_ms_per_task']:.1f} ms per task",
        flush=True,
    )
    print(
        f"{size} tasks: maestro status after a hand edit: median {row['status_ms']:.0f} ms wall, "
        f"{row['status_cpu_ms']:.0f} ms CPU (plan {row['plan_kib']:.0f} KiB, kept history "
        f"{row['history_kib']:.0f} KiB)",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,500")
    parser.add_argument("--runs", type=int, default=5, help="`maestro status` runs per size")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} CPUs; {AT_ONCE} spokes at once")
    with tempfile.TemporaryDirectory(prefix="maestro-cost-") as tmp:
        rows = [one_size(Path(tmp), size, args.runs) for size in sizes]
    small = rows[0]
    for row in rows[1:]:
        growth = row["own_cpu_ms_per_task"] / small["own_cpu_ms_per_task"]
        print(
            f"Maestro's own CPU per task at {row['size']} / at {small['size']} tasks: "
            f"{growth:.2f}x (goal <= {CPU_GROWTH_GOAL}x at 500 / at 50)"
        )
    for row in rows:
        if row["size"] == 500:
            print(
                f"maestro status after a hand edit at 500 tasks: {row['status_ms']:.0f} ms "
                f"(goal <= {STATUS_GOAL_MS} ms)"
            )


if __name__ == "__main__":
    main()

"""Eager DAG scheduling against its lower bound and against batch waves.

A 40-task layered DAG (fixed seed), each task a fake spoke that sleeps a known duration.

- eager: maestro's Scheduler at concurrency = the DAG's width (its largest antichain,
  so the cap never holds back work the graph allows); the lower bound of any schedule is
  the critical path, so wall / critical path near 1.0 means no scheduling loss;
- waves: the same tasks in batch waves (graph.waves), each wave waiting for its slowest
  task before the next starts, as a wave-based runner does.

Run: python bench/scheduler.py [--seed N] [--scale SECONDS]
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maestro import (
    clis,
    graph,
)
from maestro.engine.scheduler import Job, Outcome, Scheduler
from maestro.state.model import Task

clis.load({})  # the roster: the built-in CLIs


def layered_dag(
    seed: int, n: int = 40, layers: int = 8, scale: float = 0.1
) -> tuple[list[Task], dict[str, float]]:
    rng = random.Random(seed)
    sizes = [1] * layers
    for _ in range(n - layers):
        sizes[rng.randrange(layers)] += 1
    tasks: list[Task] = []
    durations: dict[str, float] = {}
    previous: list[str] = []
    earlier: list[str] = []
    number = 0
    for size in sizes:
        current = []
        for _ in range(size):
            number += 1
            tid = str(number)
            deps = (
                set(rng.sample(previous, k=min(len(previous), rng.randint(1, 2))))
                if previous
                else set()
            )
            if earlier and rng.random() < 0.3:
                deps.add(rng.choice(earlier))  # a longer edge, skipping a layer
            tasks.append(Task(id=tid, title=f"task {tid}", depends=sorted(deps, key=int)))
            durations[tid] = round(scale * rng.uniform(1.0, 6.0), 3)
            current.append(tid)
        earlier += previous
        previous = current
    return tasks, durations


def width(tasks: list[Task]) -> int:
    """Largest antichain (Dilworth): tasks minus a maximum matching of the reachability
    relation's bipartite graph."""
    ids = [t.id for t in tasks]
    reach = {tid: set(graph.descendants(tasks, tid)) for tid in ids}
    match: dict[str, str] = {}

    def augment(u: str, seen: set[str]) -> bool:
        for v in reach[u]:
            if v in seen:
                continue
            seen.add(v)
            if v not in match or augment(match[v], seen):
                match[v] = u
                return True
        return False

    matched = sum(augment(u, set()) for u in ids)
    return len(ids) - matched


def eager(tasks: list[Task], durations: dict[str, float], cap: int) -> tuple[float, int]:
    def run_one(tid: str) -> Outcome:
        time.sleep(durations[tid])
        return Outcome("done")

    jobs = [Job(t.id, tuple(t.depends)) for t in tasks]
    started = time.monotonic()
    report = Scheduler(jobs, run_one, max_concurrent=cap, order=int).run()
    assert all(o.status == "done" for o in report.outcomes.values()) and len(
        report.outcomes
    ) == len(tasks)
    return time.monotonic() - started, report.peak_concurrency


def batch_waves(tasks: list[Task], durations: dict[str, float]) -> float:
    started = time.monotonic()
    for wave in graph.waves(tasks):
        threads = [threading.Thread(target=time.sleep, args=(durations[tid],)) for tid in wave]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--scale",
        type=float,
        default=0.1,
        help="seconds per duration unit (durations are 1-6 units)",
    )
    args = parser.parse_args()
    tasks, durations = layered_dag(args.seed, scale=args.scale)
    graph.validate(tasks)
    critical, path = graph.critical_path(tasks, durations)
    cap = width(tasks)
    waves = graph.waves(tasks)
    eager_s, peak = eager(tasks, durations, cap)
    waves_s = batch_waves(tasks, durations)
    print(
        f"DAG: {len(tasks)} tasks, {len(waves)} waves, width {cap}, seed {args.seed}, "
        f"total work {sum(durations.values()):.2f}s"
    )
    print(f"critical path: {critical:.3f}s ({' -> '.join(path)})")
    print(
        f"eager scheduling at concurrency {cap}: {eager_s:.3f}s wall, peak {peak} running, "
        f"wall / critical path = {eager_s / critical:.3f} (target <= 1.05)"
    )
    print(f"batch waves: {waves_s:.3f}s wall, wall / critical path = {waves_s / critical:.3f}")
    print(f"speedup of eager over waves: {waves_s / eager_s:.2f}x")


if __name__ == "__main__":
    main()

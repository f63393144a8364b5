"""Launch latency and per-dispatch overhead, end to end with real processes.

`maestro run` is a real process in a temporary git project, and every spoke a real
process too: the project's fake `gemini` (tests/fakes/fake_cli.py), which sleeps its own
task's duration (the step key ``sleep_for_task``) and answers in gemini's real format
with a valid Result Submission. Side by side, in the same run, the batch-wave dispatcher
of the original design starts the same fake processes: one batch per dependency level,
each batch waiting for its slowest process.

1. A 40-task DAG (seeded durations 0.5-3 s, several chains): with no cap and no stagger,
   wall / critical path (goal <= 1.05) and the batch waves' wall, beside the waves' wall
   with no overhead at all (the most any schedule can gain over waves on it); at shipped defaults
   (3 at once, 1 s stagger), wall / the zero-overhead schedule of the same cap and
   stagger rule (goal <= 1.05), simulated with the scheduler's own priority.
2. A chain of 20 x 0.2 s: the median time from a task's dependency ending (its fake's
   last word) to its own spoke process being forked (the kernel's start time, 10 ms
   ticks), at shipped defaults (goal <= 60 ms), also `--in-place` where runs have a
   worktree per dispatch, and with no stagger; batch waves alike.
3. 4 independent 2 s tasks, 4 at once, no stagger: wall (goal <= 2.2 s), the same with
   --in-place (no worktrees: the run without git), and batch waves.
4. Whole-process time of `maestro status`, `maestro wait --timeout 0` and `maestro mail
   inbox` on the 40-task plan, median of --samples.

The figures are compared within one run (the machine's load moves them all). A run's
start to its first spoke, and `maestro status` on larger plans: bench/state.py.
Run: python bench/launch.py [--seed N] [--samples N] [--skip SECTION,...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml

from maestro import (
    clis,
    graph,
)
from maestro.state.model import Task
from tests.engine.runkit import answer
from tests.fakes.plugin import FakeClis

clis.load({})  # the roster: the built-in CLIs


CRITERION = "the note names the module that owns parsing"
# Isolated workspaces (a worktree per dispatch in a git repository) are the default where
# this maestro has them; `--in-place` is the shared tree.
WORKTREES = (
    "--in-place"
    in subprocess.run(
        [sys.executable, "-m", "maestro", "run", "--help"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
)
SHIPPED = {"MAESTRO_MAX_CONCURRENT": None, "MAESTRO_STAGGER_DELAY": None}
NO_LIMITS = {"MAESTRO_MAX_CONCURRENT": "64", "MAESTRO_STAGGER_DELAY": "0"}


def maestro_argv() -> list[str]:
    """The console script next to this interpreter, as a user types `maestro`."""
    script = Path(sys.executable).with_name("maestro")
    return [str(script)] if script.exists() else [sys.executable, "-m", "maestro"]


# -- the work ----------------------------------------------------------------------------
def dag(seed: int, n: int = 40, chains: int = 4) -> tuple[list[Task], dict[str, float]]:
    """``chains`` chains of n/chains tasks; a task also waits, now and then, for a task
    of another chain one step further up."""
    rng = random.Random(seed)
    per = n // chains
    tasks, durations = [], {}
    for step in range(per):
        for chain in range(chains):
            tid = str(step * chains + chain + 1)
            deps = set()
            if step:
                deps.add(str((step - 1) * chains + chain + 1))
                if rng.random() < 0.3:
                    other = rng.choice([c for c in range(chains) if c != chain])
                    deps.add(str((step - 1) * chains + other + 1))
            tasks.append(
                Task(id=tid, title=f"Note the parser module {tid}", depends=sorted(deps, key=int))
            )
            durations[tid] = round(rng.uniform(0.5, 3.0), 2)
    return tasks, durations


def chain(n: int, seconds: float) -> tuple[list[Task], dict[str, float]]:
    tasks = [
        Task(id=str(i), title=f"Note the parser module {i}", depends=[str(i - 1)] if i > 1 else [])
        for i in range(1, n + 1)
    ]
    return tasks, {t.id: seconds for t in tasks}


def independent(n: int, seconds: float) -> tuple[list[Task], dict[str, float]]:
    tasks = [Task(id=str(i), title=f"Note the parser module {i}") for i in range(1, n + 1)]
    return tasks, {t.id: seconds for t in tasks}


# -- the zero-overhead schedules -----------------------------------------------------------
def ranks(tasks: list[Task]) -> dict[str, int]:
    """The scheduler's priority: the longest chain of dependants below a task."""
    children: dict[str, list[str]] = {t.id: [] for t in tasks}
    for t in tasks:
        for dep in t.depends:
            children[dep].append(t.id)
    rank: dict[str, int] = {}
    for t in reversed(graph.topological_order(tasks)):
        rank[t.id] = 1 + max((rank[c] for c in children[t.id]), default=0)
    return rank


def ideal(
    tasks: list[Task], durations: dict[str, float], cap: int, stagger: float, rule: str
) -> float:
    """The wall time of a schedule that costs nothing but the tasks themselves, under a
    cap and a stagger rule: ``previous`` (a start waits for the stagger after the
    previous start) or ``running`` (a start waits only while a spoke that started less
    than the stagger ago still runs)."""
    rank = ranks(tasks)
    order = sorted(tasks, key=lambda t: (-rank[t.id], int(t.id)))
    done: set[str] = set()
    running: list[tuple[float, float, str]] = []  # start, end, id
    started: set[str] = set()
    last_start = -1e9
    now = 0.0
    while len(done) < len(tasks):
        wake = [end for _, end, _ in running]
        for t in order:
            if len(running) >= cap:
                break
            if t.id in started or not all(d in done for d in t.depends):
                continue
            if rule == "previous":
                hold = last_start + stagger if now < last_start + stagger else None
            else:
                recent = [s + stagger for s, end, _ in running if s + stagger > now]
                hold = min(recent) if recent else None
            if hold is not None:
                wake.append(hold)
                break
            started.add(t.id)
            running.append((now, now + durations[t.id], t.id))
            wake.append(now + durations[t.id])
            last_start = now
        now = min(wake)
        for item in [r for r in running if r[1] <= now]:
            running.remove(item)
            done.add(item[2])
    return now


# -- a project -------------------------------------------------------------------------
class Project:
    """A temporary git project with the fake CLIs and a plan of ``tasks``."""

    def __init__(self, folder: Path, tasks: list[Task]) -> None:
        self.folder, self.tasks = folder, tasks
        self.root, self.home = folder / "proj", folder / "home"
        self.bin_dir, self.state_dir = folder / "fakes" / "bin", folder / "fakes" / "state"

    @classmethod
    def create(cls, folder: Path, tasks: list[Task], durations: dict[str, float]) -> Project:
        project = cls(folder, tasks)
        project.root.mkdir(parents=True)
        project.home.mkdir()
        fakes = FakeClis(folder / "fakes")
        text = answer([CRITERION], summary="Noted.")
        fakes.default("gemini", {"text": text, "sleep_for_task": durations})
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project.root, check=True)
        (project.root / "README.md").write_text("bench\n")
        subprocess.run([*git, "add", "-A"], cwd=project.root, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=project.root, check=True)
        plan = {
            "version": 1,
            "goal": "Measure how fast a ready task starts",
            "hub": "claude",
            "tasks": [
                {
                    "id": int(t.id),
                    "title": t.title,
                    "specialist": "research",
                    "agent": "technical-writer",
                    "tool": "gemini",
                    "depends": [int(d) for d in t.depends],
                    "files": [f"notes/n{t.id}.md"],
                    "criteria": [CRITERION],
                }
                for t in tasks
            ],
        }
        source = folder / "plan.yaml"
        source.write_text(yaml.safe_dump(plan, sort_keys=False))
        project.maestro("plan", "--from", str(source), "--yes", check=True)
        return project

    def env(self, settings: dict[str, str | None] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MAESTRO_", "FAKE_"))}
        # An installed package has its bytecode compiled (pip does it): without this, a
        # module changed since its last run would be compiled again at every start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["HOME"] = str(self.home)
        env["PATH"] = os.pathsep.join([str(self.bin_dir), env.get("PATH", os.defpath)])
        env["MAESTRO_SANDBOX_WRITE"] = str(self.state_dir)  # where the confined fakes record
        for key, value in (settings or {}).items():
            if value is not None:
                env[key] = value
        return env

    def maestro(
        self, *argv: str, settings: dict[str, str | None] | None = None, check: bool = False
    ) -> tuple[float, float, subprocess.CompletedProcess[str]]:
        """(wall-clock time just before the process started, its whole time, the outcome)."""
        started = time.time()
        begun = time.perf_counter()
        out = subprocess.run(
            [*maestro_argv(), *argv],
            check=False,
            cwd=self.root,
            env=self.env(settings),
            capture_output=True,
            text=True,
        )
        took = time.perf_counter() - begun
        if check and out.returncode != 0:
            raise SystemExit(
                f"maestro {' '.join(argv)} exited {out.returncode}: {out.stdout}{out.stderr}"
            )
        return started, took, out

    def spokes(self) -> list[dict[str, Any]]:
        """The spokes' runs: task, fork time and end time (wall clock)."""
        ends = {}
        log = self.state_dir / "gemini.ends.jsonl"
        for line in log.read_text().splitlines() if log.exists() else []:
            entry = json.loads(line)
            ends[entry["call"]] = entry["end"]
        runs = []
        calls = self.state_dir / "gemini.calls.jsonl"
        lines = calls.read_text().splitlines() if calls.exists() else []
        for call in (json.loads(line) for line in lines if line.strip()):
            if "step" not in call:
                continue  # `--version`
            forked = call["time"] - (call["boottime"] - call["forked"])
            runs.append(
                {
                    "task": call["env"].get("MAESTRO_TASK_ID"),
                    "forked": forked,
                    "own_start": call["time"],
                    "end": ends.get(call["call"]),
                }
            )
        return runs


def run_maestro(
    project: Project, settings: dict[str, str | None], *flags: str
) -> tuple[float, list[dict[str, Any]]]:
    _, wall, out = project.maestro("run", *flags, settings=settings)
    if out.returncode != 0:
        raise SystemExit(
            f"maestro run exited {out.returncode}: {out.stdout[-2000:]}{out.stderr[-2000:]}"
        )
    return wall, project.spokes()


def run_waves(project: Project) -> tuple[float, list[dict[str, Any]]]:
    """The original design's dispatcher: each dependency level as one batch of spoke
    processes, the next batch once the slowest of this one has ended."""
    gemini = str(project.bin_dir / "gemini")
    env = project.env()
    before = len(project.spokes())
    began = time.perf_counter()
    for wave in graph.waves(project.tasks):
        procs = [
            subprocess.Popen(
                [gemini, "-p", f"Do task {tid}", "-o", "json", "--skip-trust"],
                env={**env, "MAESTRO_TASK_ID": tid},
                cwd=project.root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for tid in wave
        ]
        for proc in procs:
            proc.wait()
    wall = time.perf_counter() - began
    return wall, project.spokes()[before:]


def handoffs(tasks: list[Task], runs: list[dict[str, Any]], at: str = "forked") -> list[float]:
    """Per task with dependencies: its spoke's fork (``at``: or its first clock reading)
    minus its last dependency's end (ms)."""
    by_task = {r["task"]: r for r in runs}
    gaps = []
    for t in tasks:
        if t.depends and t.id in by_task:
            ended = max(by_task[d]["end"] for d in t.depends)
            gaps.append((by_task[t.id][at] - ended) * 1000)
    return gaps


def fake_startup(runs: list[dict[str, Any]]) -> float:
    """Median ms from a fake's fork to its own first clock reading (its interpreter)."""
    return statistics.median((r["own_start"] - r["forked"]) * 1000 for r in runs)


# -- the sections ----------------------------------------------------------------------
def section_dag(base: Path, seed: int) -> None:
    tasks, durations = dag(seed)
    critical, _ = graph.critical_path(tasks, durations)
    free = Project.create(base / "dag-free", tasks, durations)
    wall, _ = run_maestro(free, NO_LIMITS)
    waves_wall, _ = run_waves(free)
    print(
        f"1. 40-task DAG, seed {seed}, {len(graph.waves(tasks))} levels, critical path {critical:.2f} s, work {sum(durations.values()):.1f} s"
    )
    print(
        f"   no cap, no stagger: maestro {wall:.2f} s = {wall / critical:.3f}x critical path (goal <= 1.05); batch waves {waves_wall:.2f} s = {waves_wall / critical:.3f}x"
    )
    # Waves that cost nothing but their tasks: the most any schedule can gain over them here.
    bound = sum(max(durations[tid] for tid in wave) for wave in graph.waves(tasks))
    print(
        f"   batch waves with no overhead at all {bound:.2f} s = {bound / critical:.3f}x critical path: on this DAG no schedule is more than {bound / critical:.3f}x faster than batch waves; maestro is {waves_wall / wall:.3f}x faster"
    )
    shipped = Project.create(base / "dag-shipped", tasks, durations)
    wall, _ = run_maestro(shipped, SHIPPED)
    running = ideal(tasks, durations, 3, 1.0, "running")
    previous = ideal(tasks, durations, 3, 1.0, "previous")
    print(
        f"   shipped defaults (3 at once, 1 s stagger): maestro {wall:.2f} s; zero-overhead schedule {running:.2f} s with the stagger held only while a recent start runs, {previous:.2f} s with it counted from the previous start"
    )
    print(
        f"   wall / zero-overhead: {wall / running:.3f} (goal <= 1.05) against the first, {wall / previous:.3f} against the second"
    )


def section_chain(base: Path) -> None:
    tasks, durations = chain(20, 0.2)
    variants = [("shipped defaults", SHIPPED, ()), ("no stagger", NO_LIMITS, ())]
    if WORKTREES:
        variants.insert(1, ("shipped defaults, --in-place", SHIPPED, ("--in-place",)))
    # The batch waves start the fake unconfined: its own start-up, to take off the time
    # to a confined fake's first clock reading (what is left is Maestro's and the sandbox's).
    template = Project.create(base / "chain-waves", tasks, durations)
    _, runs = run_waves(template)
    own = fake_startup(runs)
    waves = statistics.median(handoffs(tasks, runs))
    for label, settings, flags in variants:
        folder = base / f"chain-{''.join(c if c.isalnum() else '-' for c in label)}"
        project = Project.create(folder, tasks, durations)
        wall, runs = run_maestro(project, settings, *flags)
        gaps = handoffs(tasks, runs)
        ready = [g - own for g in handoffs(tasks, runs, "own_start")]
        print(
            f"2. chain of 20 x 0.2 s, {label}: dependency end -> spoke fork median {statistics.median(gaps):.0f} ms (min {min(gaps):.0f}, max {max(gaps):.0f}); -> its program running, the sandbox's start included, median {statistics.median(ready):.0f} ms (min {min(ready):.0f}, max {max(ready):.0f}; goal <= 60 ms at defaults), wall {wall:.2f} s"
        )
    print(
        f"   batch waves (unconfined): median {waves:.0f} ms; the fake's own start-up there (fork -> its first clock reading) {own:.0f} ms"
    )


def section_fanout(base: Path) -> None:
    """Also with --in-place (no worktree made or removed): what the run costs without git."""
    tasks, durations = independent(4, 2.0)
    settings = {"MAESTRO_MAX_CONCURRENT": "4", "MAESTRO_STAGGER_DELAY": "0"}
    # A project each: a copy's fakes would load their code from the first one's folder,
    # which a confined fake does not see (its /tmp is its own).
    worktrees = Project.create(base / "fanout-worktrees", tasks, durations)
    wall, _ = run_maestro(worktrees, settings)
    in_place = Project.create(base / "fanout-in-place", tasks, durations)
    in_place_wall, _ = run_maestro(in_place, settings, "--in-place")
    waves_wall, _ = run_waves(Project.create(base / "fanout-waves", tasks, durations))
    print(
        f"3. 4 independent 2 s tasks, 4 at once, no stagger: maestro {wall:.2f} s (goal <= 2.2 s; --in-place {in_place_wall:.2f} s), batch waves {waves_wall:.2f} s"
    )


def section_commands(base: Path, seed: int, samples: int) -> None:
    tasks, durations = dag(seed)
    folder = base / "dag-free"
    if folder.exists():
        proj = Project(folder, tasks)
    else:
        proj = Project.create(folder, tasks, durations)
        run_maestro(proj, NO_LIMITS)
    figures = []
    for argv in (("status",), ("wait", "--timeout", "0"), ("mail", "inbox")):
        times = []
        for _ in range(samples):
            _, took, out = proj.maestro(*argv)
            if out.returncode not in (0, 10, 11):
                raise SystemExit(
                    f"maestro {' '.join(argv)} exited {out.returncode}: {out.stdout}{out.stderr}"
                )
            times.append(took * 1000)
        figures.append(f"`maestro {' '.join(argv)}` {statistics.median(times):.0f} ms")
    print(f"4. whole process on the 40-task plan, median of {samples}: " + ", ".join(figures))


SECTIONS = ("dag", "chain", "fanout", "commands")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument(
        "--skip", default="", help=f"comma-separated sections to leave out: {', '.join(SECTIONS)}"
    )
    args = parser.parse_args()
    skip = {s for s in args.skip.split(",") if s}
    base = Path(tempfile.mkdtemp(prefix="maestro-launch-"))
    try:
        if "dag" not in skip:
            section_dag(base, args.seed)
        if "chain" not in skip:
            section_chain(base)
        if "fanout" not in skip:
            section_fanout(base)
        if "commands" not in skip:
            section_commands(base, args.seed, args.samples)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

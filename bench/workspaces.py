"""What a worktree per dispatch costs: git's own time, a whole run, and per dispatch.

1. `git worktree add --detach` + `git worktree remove` of Maestro's base commit, on
   repositories of 100 and 10,000 files (median of --repeat), and the worktree's first
   read (the snapshot that measures a dispatch's change).
2. A 40-task run (4 layers of 10, each task depending on one of the layer before) whose
   spokes take --spoke-s seconds and write their file, at concurrency 8 in a 1,000-file
   repository: wall time in worktrees against --in-place (goal: within 10%).
3. Per-dispatch overhead the worktrees add: 40 tasks to an instant spoke at concurrency
   1, worktrees against in place, difference / 40.

Everything else is the real engine (run lock, plan writes, gates, landing).

Run: python bench/workspaces.py [--repeat N] [--spoke-s S]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maestro import clis

clis.load({})  # the roster: the built-in CLIs


IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def make_repo(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(files):
        folder = root / f"pkg{i // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"VALUE = {i}\n" * 20)
    (root / ".gitignore").write_text(".ai/\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "commit", "-q", "-m", "bench"], cwd=root, check=True, env={**os.environ, **IDENTITY}
    )


def worktree_times(files: int, repeat: int) -> tuple[float, float, float]:
    """Median seconds of create, first read and remove."""
    from maestro.engine.workspace import Worktrees
    from maestro.paths import ProjectPaths

    base = Path(tempfile.mkdtemp(prefix="maestro-wt-bench-"))
    try:
        root = base / "repo"
        make_repo(root, files)
        from maestro.config import load_settings
        from maestro.repo import Repo

        settings = load_settings(root, env={"MAESTRO_PROJECT_DIR": str(root)})
        repo = Repo.find(root)
        assert repo is not None
        spaces = Worktrees(ProjectPaths(root), repo, "bench", settings)
        spaces.start()
        create, read, remove = [], [], []
        for i in range(repeat):
            t0 = time.perf_counter()
            wt = spaces.create(f"t{i}")
            t1 = time.perf_counter()
            spaces.measure(wt, ())
            t2 = time.perf_counter()
            spaces.discard(wt)
            t3 = time.perf_counter()
            create.append(t1 - t0)
            read.append(t2 - t1)
            remove.append(t3 - t2)
        spaces.close()
        return statistics.median(create), statistics.median(read), statistics.median(remove)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def writing_spoke(delay_s: float):
    """The overhead benchmark's instant spoke, taking ``delay_s`` and writing its task's
    declared files where it runs (its worktree, or the project in place)."""
    from bench.overhead import instant_spoke_class

    class WritingSpoke(instant_spoke_class()):
        def dispatch(self, req, *, runner=None, base_env=None, on_start=None):
            time.sleep(delay_s)
            for path in req.files:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"# written for task {req.task_id}\n")
            return super().dispatch(req, runner=runner, base_env=base_env, on_start=on_start)

    return WritingSpoke()


def plan_yaml(tasks: int, width: int) -> str:
    lines = ["version: 1", "goal: Measure worktrees against in place", "hub: sim", "tasks:"]
    for i in range(1, tasks + 1):
        lines += [
            f"  - id: {i}",
            f"    title: Write generated module number {i}",
            "    specialist: code",
            "    tool: sim",
            f"    files: [gen/m{i}.py]",
            '    criteria: ["The answer names the module that owns parsing"]',
            f"    validation: test -f gen/m{i}.py",
        ]
        if i > width:
            lines.append(f"    depends: [{i - width}]")
    return "\n".join(lines) + "\n"


def run_wall(files: int, tasks: int, width: int, concurrency: int, delay_s: float, in_place: bool):
    from maestro.cli import main as cli_main
    from maestro.cli.context import Context
    from maestro.engine.run import Engine
    from maestro.engine.runcontext import RunOptions

    base = Path(tempfile.mkdtemp(prefix="maestro-wt-bench-"))
    try:
        root = base / "repo"
        make_repo(root, files)
        (base / "plan.yaml").write_text(plan_yaml(tasks, width))
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")}
        env.update(
            {
                "MAESTRO_PROJECT_DIR": str(root),
                "MAESTRO_STAGGER_DELAY": "0",
                "MAESTRO_MAX_CONCURRENT": str(concurrency),
                **IDENTITY,
            }
        )
        ctx = Context(
            cwd=root, env=env, stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO()
        )
        if cli_main(["plan", "--from", str(base / "plan.yaml"), "--yes"], ctx) != 0:
            raise SystemExit("plan --from failed: " + ctx.stdout.getvalue() + ctx.stderr.getvalue())
        spoke = writing_spoke(delay_s)
        engine = Engine(
            ctx.settings,
            env=env,
            options=RunOptions(in_place=in_place),
            out=io.StringIO(),
            spoke_for=lambda name: spoke,
            backoff_s=0.0,
        )
        started = time.perf_counter()
        summary = engine.run()
        wall = time.perf_counter() - started
        assert summary.counts["done"] == tasks, summary.message
        assert all((root / f"gen/m{i}.py").exists() for i in range(1, tasks + 1))
        return wall
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--spoke-s", type=float, default=2.0, help="each spoke's duration")
    args = parser.parse_args()

    print("1. git worktree per dispatch (median of", args.repeat, "):")
    for files in (100, 10_000):
        create, read, remove = worktree_times(files, args.repeat)
        print(
            f"   {files:>6,} files: create {create * 1000:.0f} ms, first read {read * 1000:.0f} ms, "
            f"remove {remove * 1000:.0f} ms"
        )

    print(
        f"2. 40-task run, 4 layers of 10, spokes of {args.spoke_s:g} s, concurrency 8, 1,000 files:"
    )
    walls = {}
    for in_place in (True, False):
        walls[in_place] = run_wall(1000, 40, 10, 8, args.spoke_s, in_place)
    ratio = walls[False] / walls[True]
    print(
        f"   in place {walls[True]:.2f} s, worktrees {walls[False]:.2f} s: "
        f"worktrees / in place = {ratio:.3f} (goal <= 1.10)"
    )

    print("3. per-dispatch overhead, 40 tasks to an instant spoke at concurrency 1, 100 files:")
    fast = {}
    for in_place in (True, False):
        fast[in_place] = run_wall(100, 40, 40, 1, 0.0, in_place)
    added = (fast[False] - fast[True]) / 40 * 1000
    print(
        f"   in place {fast[True] / 40 * 1000:.1f} ms, worktrees {fast[False] / 40 * 1000:.1f} ms "
        f"per dispatch: worktrees add {added:.1f} ms"
    )


if __name__ == "__main__":
    main()

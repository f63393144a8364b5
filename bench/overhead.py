"""Engine overhead per dispatch: the whole pipeline around an instant spoke.

100 independent tasks in a temporary git project, each dispatched to a fake spoke that
answers at once with a valid Result Submission and Handoff Report. Everything else is
the real engine: run lock and folder, AAVSR re-check, delegation prompt, state
transitions through PlanStore.edit(), git snapshots before and after each dispatch,
result parsing, the four gates, the receipt, events and progress. Wall time / 100 at
concurrency 1 is the engine's own cost per dispatch.

Run: python bench/overhead.py [--tasks N] [--concurrency C] [--log summary] [--rounds R]
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


ANSWER = """## Status
success

## Summary
Answered at once by the benchmark's instant spoke.

## Changes
- None

## Verification
- [x] The answer names the module that owns parsing - it does

## Issues
None

### Task Report
- Status: success
- Objective Achieved: yes
- Files Created: none
- Files Modified: none
- Files Deleted: none
- Decisions Made: none
- Validation: skipped
- Validation Output: N/A
- Errors: none
- Scope Deviations: none

### Downstream Context
- Key Interfaces Introduced: none
- Patterns Established: none
- Integration Points: none
- Assumptions: none
- Warnings: none
"""


def instant_spoke_class():
    from maestro.spokes.base import Spoke
    from maestro.spokes.contract import SpokeResult
    from maestro.state.model import Usage

    class InstantSpoke(Spoke):
        name = "sim"
        executable = None
        simulated = True

        def enforces(self, tier: str) -> bool:
            return True

        def build_argv(self, req):
            return ["instant"]

        def dispatch(self, req, *, runner=None, base_env=None, on_start=None):
            return SpokeResult(
                tool="sim",
                text=ANSWER,
                success=True,
                usage=Usage(1000, 200),
                cost=0.0,
                session_id="instant",
                exit_code=0,
                simulated=True,
                argv=["instant"],
            )

    return InstantSpoke


def plan_yaml(n: int, tool: str = "sim") -> str:
    lines = [
        "version: 1",
        "goal: Measure the engine's overhead per dispatch",
        f"hub: {tool}",
        "tasks:",
    ]
    for i in range(1, n + 1):
        lines += [
            f"  - id: {i}",
            f"    title: Find the module that owns parsing, question {i}",
            "    specialist: research",
            f"    tool: {tool}",
            '    criteria: ["The answer names the module that owns parsing"]',
        ]
    return "\n".join(lines) + "\n"


def one_round(args: argparse.Namespace) -> float:
    """Seconds of wall time for one run of ``args.tasks`` dispatches in a fresh project."""
    from maestro.cli import main as cli_main
    from maestro.cli.context import Context
    from maestro.engine.run import Engine
    from maestro.engine.runcontext import RunOptions

    base = Path(tempfile.mkdtemp(prefix="maestro-bench-"))
    try:
        root = base / "proj"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        (root / "README.md").write_text("bench\n")
        (base / "plan.yaml").write_text(plan_yaml(args.tasks))
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")}
        env.update(
            {
                "MAESTRO_PROJECT_DIR": str(root),
                "MAESTRO_STAGGER_DELAY": "0",
                "MAESTRO_MAX_CONCURRENT": str(args.concurrency),
                "MAESTRO_LOG": args.log,
            }
        )
        ctx = Context(
            cwd=root, env=env, stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO()
        )
        if cli_main(["plan", "--from", str(base / "plan.yaml"), "--yes"], ctx) != 0:
            raise SystemExit("plan --from failed: " + ctx.stdout.getvalue() + ctx.stderr.getvalue())
        spoke = instant_spoke_class()()
        engine = Engine(
            ctx.settings,
            env=env,
            options=RunOptions(),
            out=io.StringIO(),
            quiet=False,
            spoke_for=lambda name: spoke,
            backoff_s=0.0,
        )
        started = time.perf_counter()
        summary = engine.run()
        wall = time.perf_counter() - started
        assert summary.counts["done"] == args.tasks, summary.message
        return wall
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--log", default="off", choices=("off", "summary", "detailed"))
    parser.add_argument(
        "--rounds", type=int, default=3, help="repeat in fresh projects; the median is reported"
    )
    args = parser.parse_args()
    walls = sorted(one_round(args) for _ in range(args.rounds))
    per = [w / args.tasks * 1000 for w in walls]
    median = statistics.median(per)
    print(
        f"{args.tasks} dispatches to an instant spoke at concurrency {args.concurrency}, log {args.log}, "
        f"{args.rounds} rounds: {', '.join(f'{p:.1f}' for p in per)} ms per dispatch"
    )
    print(f"engine overhead per dispatch (median): {median:.1f} ms (target <= 30 ms)")


if __name__ == "__main__":
    main()

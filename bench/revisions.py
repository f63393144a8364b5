"""A 12-task run end to end at two revisions of Maestro, side by side in one run.

The plan: 3 chains of 4 tasks (seeded durations 0.5-1.5 s), each task a real process, the
fake `gemini` of this checkout's tests/fakes, which sleeps its task's duration and answers
in gemini's format. Each revision runs it as a person does, `maestro plan --from` then
`maestro run`, with `python -m maestro` importing the revision's own tree (a detached git
worktree; this checkout for the newer one), at shipped defaults (3 at once, 1 s stagger)
and with no cap or stagger. Rounds alternate the revisions, as a shared machine's load
drifts; the figures are the medians.

Run: python bench/revisions.py [OLD] [NEW] [--rounds N]
     (OLD: 65bca98, issue 22's baseline; NEW: this checkout)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import launch
from bench.launch import NO_LIMITS, SHIPPED, Project
from maestro import clis
from maestro.state.model import Task

clis.load({})  # the roster: the built-in CLIs


def twelve(seed: int = 12) -> tuple[list[Task], dict[str, float]]:
    rng = random.Random(seed)
    tasks, durations = [], {}
    for chain in range(3):
        for step in range(4):
            tid = str(chain * 4 + step + 1)
            depends = [str(int(tid) - 1)] if step else []
            tasks.append(Task(id=tid, title=f"Note the parser module {tid}", depends=depends))
            durations[tid] = round(rng.uniform(0.5, 1.5), 2)
    return tasks, durations


def tree_of(revision: str | None, base: Path) -> Path:
    if revision is None:
        return ROOT
    tree = base / f"tree-{revision}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), revision],
        check=True,
    )
    return tree


def one_run(tree: Path, folder: Path, settings: dict[str, str | None]) -> float:
    """Wall seconds of `maestro run` at ``tree``; its plan written by that tree too."""
    os.environ["PYTHONPATH"] = str(tree)  # (Project's processes inherit it)
    tasks, durations = twelve()
    project = Project.create(folder, tasks, durations)
    _, wall, out = project.maestro("run", settings=settings)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: maestro run exited {out.returncode}: {out.stderr[-800:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?", default="65bca98")
    parser.add_argument("new", nargs="?", default=None, help="default: this checkout")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    launch.maestro_argv = lambda: [sys.executable, "-m", "maestro"]
    with tempfile.TemporaryDirectory(prefix="maestro-revisions-") as tmp:
        base = Path(tmp)
        trees = {
            args.old: tree_of(args.old, base),
            args.new or "this checkout": tree_of(args.new, base),
        }
        try:
            for label, settings in (
                ("shipped defaults", SHIPPED),
                ("no cap, no stagger", NO_LIMITS),
            ):
                walls: dict[str, list[float]] = {name: [] for name in trees}
                for round_ in range(args.rounds):
                    for name, tree in trees.items():
                        folder = base / f"{label[:7]}-{round_}-{len(walls[name])}-{tree.name}"
                        walls[name].append(one_run(tree, folder, settings))
                figures = ", ".join(
                    f"{name} {statistics.median(w):.2f} s ({' '.join(f'{x:.2f}' for x in w)})"
                    for name, w in walls.items()
                )
                old, new = (statistics.median(w) for w in walls.values())
                print(f"12-task run, {label}: {figures}; new / old {new / old:.3f}", flush=True)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(
                        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                        check=False,
                    )


if __name__ == "__main__":
    main()

"""What confinement costs a process Maestro starts: ``true`` bare, in bwrap with the
hardened minimum (what the probe starts), then wrapped by maestro/sandbox.py as a task
spoke's would be (the machine read-only, a private /tmp, a
writable worktree with its private git dir, a CLI's state folder with its config
read-only, the secrets hidden, hardened), each started through the one process runner.

Prints the median, min and max milliseconds of N starts of each, and the difference.

Run: python bench/sandbox.py [--runs 50]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maestro import sandbox
from maestro.process import run_process


def timed(argv: list[str], env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        out = run_process(argv, cwd=cwd, env=env, timeout_s=30)
        took.append((time.perf_counter() - started) * 1000)
        assert out.exit_code == 0, out.stderr
    return took


def line(name: str, took: list[float]) -> str:
    return f"{name:<28} median {statistics.median(took):6.1f} ms  min {min(took):6.1f}  max {max(took):6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    found, why = sandbox.probe(os.environ)
    if found is None:
        sys.exit(f"bench/sandbox.py: {why}")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        repo, worktree, state = base / "repo", base / "wt", base / "state"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "-c",
                "user.name=b",
                "-c",
                "user.email=b@b",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
            check=True,
        )
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(worktree)], check=True
        )
        env = dict(os.environ)
        rules = sandbox.Rules(found, sandbox.expand(sandbox.SECRETS, env))
        config = sandbox.pre_create(state, ["settings.json", "hooks/"])
        bare = timed(["/bin/true"], env, worktree, runs)
        # The hardened minimum: what the probe starts (no folder of the policy's).
        least = sandbox.command(["/bin/true"], sandbox.Policy(cwd=Path("/"), env={}), rules)
        minimal = timed(least, {"PATH": os.defpath}, worktree, runs)
        wrapped_times = []
        for _ in range(runs):
            started = time.perf_counter()
            # Everything a dispatch does for it: the policy, its private git dir, the start.
            policy = sandbox.work_policy(
                worktree,
                env,
                writes=True,
                scratch=base / "git",
                state=None,
                writable=[state],
                read_only=config,
            )
            argv, run_env = sandbox.wrap(["/bin/true"], policy, rules)
            out = run_process(argv, cwd=worktree, env=run_env, timeout_s=30)
            wrapped_times.append((time.perf_counter() - started) * 1000)
            assert out.exit_code == 0, out.stderr
    print(f"{runs} starts each, load {os.getloadavg()[0]:.2f}")
    print(line("/bin/true, bare", bare))
    print(line("/bin/true, bwrap hardened", minimal))
    print(line("/bin/true, confined", wrapped_times))
    print(
        f"confinement adds {statistics.median(wrapped_times) - statistics.median(bare):.1f} ms a start (medians)"
    )


if __name__ == "__main__":
    main()

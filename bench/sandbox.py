"""What confinement costs a process Maestro starts: ``true`` bare, in bwrap with the
hardened minimum (what the probe starts), then wrapped by maestro/sandbox.py as a task
spoke's would be (the machine read-only, a private /tmp, a
writable worktree with its private git dir, a CLI's state folder with its config
read-only, the secrets hidden, hardened, its own network namespace, /tmp and /dev/shm
sized, its processes bounded: a cgroup of its own made, entered and removed where Maestro
can make one), the same without the cgroup (RLIMIT_NPROC as a person, nothing as root),
then with its way out: a door of Maestro's proxy opened and closed around it, its
listener opened in the sandbox's network namespace while ``true`` waits at its gate
(maestro/netns.py). Each through the one process runner; the proxy's thread is started
before the timing (its first door's cost is printed apart). Where Anthropic's sandbox runtime is installed (``srt`` on PATH, or
``npm ci --prefix tests/srt``), the same start confined by srt too, macOS's sandbox, which
confines with bubblewrap on Linux (fewer starts: each takes some hundred milliseconds).

Prints the median, min and max milliseconds of N starts of each, and the differences.

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
from dataclasses import replace
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
    return f"{name:<30} median {statistics.median(took):6.1f} ms  min {min(took):6.1f}  max {max(took):6.1f}"


def srt_rules(env: dict[str, str]) -> sandbox.Rules | None:
    """srt's rules here, from PATH or tests/srt; None without it."""
    tests = Path(__file__).resolve().parents[1] / "tests" / "srt" / "node_modules" / ".bin"
    env = {**env, "PATH": f"{env.get('PATH', os.defpath)}{os.pathsep}{tests}"}
    backend, sandbox.BACKEND = sandbox.BACKEND, sandbox.SRT
    try:
        probed, _ = sandbox.probe(env)
    finally:
        sandbox.BACKEND = backend
    return probed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    probed, why = sandbox.probe(os.environ)
    if probed is None:
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
        rules = replace(
            probed, hide=sandbox.expand(sandbox.SECRETS, env), cgroups=sandbox.cgroups()
        )
        config = sandbox.pre_create(state, ["settings.json", "hooks/"])
        bare = timed(["/bin/true"], env, worktree, runs)
        # The hardened minimum: what the probe starts (no folder of the policy's).
        least = sandbox.command(["/bin/true"], sandbox.Policy(cwd=Path("/"), env={}), rules)
        minimal = timed(least, {"PATH": os.defpath}, worktree, runs)

        def start(net: bool, confined: sandbox.Rules = rules) -> float:
            """Everything a dispatch does for it: the door, the cgroup, the policy, its
            private git dir, the start."""
            started = time.perf_counter()
            with (
                sandbox.network(confined if net else None) as door,
                sandbox.bounded(confined) as bound,
            ):
                policy = sandbox.work_policy(
                    worktree,
                    env,
                    writes=True,
                    scratch=base / "git",
                    state=None,
                    writable=[state],
                    read_only=config,
                )
                policy = sandbox.placed(policy, door, bound)
                argv, run_env = sandbox.wrap(["/bin/true"], policy, confined)
                out = run_process(
                    argv, cwd=worktree, env=run_env, timeout_s=30, **sandbox.starting(door)
                )
            assert out.exit_code == 0, out.stderr
            return (time.perf_counter() - started) * 1000

        first = time.perf_counter()
        with sandbox.network(rules):
            first_door = (time.perf_counter() - first) * 1000
        uncounted = replace(rules, cgroups=None)
        confined, without = [], []
        for _ in range(runs):  # alternately: a change of the machine's load hits both
            confined.append(start(False))
            without.append(start(False, uncounted))
        networked = [start(True) for _ in range(runs)]
        srt, by_srt = srt_rules(env), []
        if srt is not None:  # the same rules, srt confining
            srt = replace(rules, program=srt.program, backend=srt.backend, tmp_mb=None)
            by_srt = [start(True, srt) for _ in range(max(3, runs // 5))]
    middle = statistics.median
    print(f"{runs} starts each, load {os.getloadavg()[0]:.2f}")
    print(line("/bin/true, bare", bare))
    print(line("/bin/true, bwrap hardened", minimal))
    print(line("/bin/true, confined", confined))
    print(line("confined, no cgroup", without))
    print(line("confined, with its way out", networked))
    print(f"bounds: {sandbox.bounds(rules)}")
    print(f"confinement adds {middle(confined) - middle(bare):.1f} ms a start (medians)")
    print(f"its cgroup adds {middle(confined) - middle(without):.1f} ms of it (medians)")
    print(f"its way out adds {middle(networked) - middle(confined):.1f} ms more (medians)")
    print(f"the proxy's start, with its first door: {first_door:.1f} ms, once a process")
    if by_srt:
        print(line("srt, with its way out", by_srt))
        print(f"srt costs {middle(by_srt) / middle(networked):.0f} times bwrap (medians)")
    else:
        print("srt: not installed (npm ci --prefix tests/srt), not measured")


if __name__ == "__main__":
    main()

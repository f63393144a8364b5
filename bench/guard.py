"""What the guard around each dispatch costs (maestro/engine/guard.py).

Per dispatch the guard takes a mark before the spoke (the user's tree through a private
index, HEAD, refs, the repository's config/hooks/info files) and compares after it. On
repositories of 100 and 10,000 tracked files (plus 1% untracked), median of --repeat:

- mark: one mark, warm (the private index already knows every file's stat data);
- after, nothing changed: the comparison when the spoke stayed in its worktree;
- after, one file written outside: the comparison, the put-back and the saved copy.

For scale, the same run prints the start-up of the pinned real CLIs where they are
installed (`<cli> --version`, MAESTRO_REALCLI_DIR or ~/.cache/maestro/realcli), the least
a spoke costs before its first model call.

Run: python bench/guard.py [--repeat N]
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

from bench.workspaces import IDENTITY  # the same committer the workspace figures use
from maestro import clis
from maestro.engine.guard import Found, Guard
from maestro.repo import Repo

clis.load({})  # the roster: the built-in CLIs


def make_repo(root: Path, files: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(files):
        path = root / f"pkg{i % 100}" / f"mod{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"VALUE = {i}\n" * 20)
    env = {**os.environ, **IDENTITY}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "files"], cwd=root, check=True, env=env)
    for i in range(max(1, files // 100)):
        (root / f"pkg{i % 100}" / f"scratch{i}.txt").write_text("untracked\n")


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:7.1f} ms"


def bench(files: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        make_repo(root, files)
        repo = Repo.find(root)
        assert repo is not None
        guard = Guard(
            repo,
            index=Path(tmp) / "guard.index",
            exclude=[],
            drop=[],
            saved=Path(tmp) / "saved",
        )
        guard.mark()  # the run's start: the first read hashes what the index lacks
        marks, clean, dirty = [], [], []
        for i in range(repeat):
            t = time.perf_counter()
            mark = guard.mark()
            marks.append(time.perf_counter() - t)
            found = Found(f"clean-{i}")
            t = time.perf_counter()
            guard.undo_git(mark, found)
            guard.undo_tree(mark, found, keep=lambda _p: False)
            clean.append(time.perf_counter() - t)
            assert not found
            mark = guard.mark()
            (root / f"OUTSIDE-{i}.txt").write_text("written outside\n")
            found = Found(f"dirty-{i}")
            t = time.perf_counter()
            guard.undo_git(mark, found)
            guard.undo_tree(mark, found, keep=lambda _p: False)
            dirty.append(time.perf_counter() - t)
            assert found.paths == [f"OUTSIDE-{i}.txt (created)"], found.paths
        total = [a + b for a, b in zip(marks, clean, strict=True)]
        print(
            f"{files:>6} files: mark {ms(marks)}  after (clean) {ms(clean)}  "
            f"after (one file put back) {ms(dirty)}  per dispatch {ms(total)}"
        )


def cli_startup(repeat: int) -> None:
    base = Path(
        os.environ.get("MAESTRO_REALCLI_DIR", Path.home() / ".cache" / "maestro" / "realcli")
    )
    for name in ("claude", "gemini", "codex"):
        exe = base / "node_modules" / ".bin" / name
        if not exe.exists():
            print(f"{name:>6} --version: not installed under {base}")
            continue
        samples = []
        for _ in range(max(3, repeat // 3)):
            t = time.perf_counter()
            subprocess.run([str(exe), "--version"], capture_output=True, check=False)
            samples.append(time.perf_counter() - t)
        print(f"{name:>6} --version: {ms(samples)} (a spoke's start-up, before any model call)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    for files in (100, 10_000):
        bench(files, args.repeat)
    cli_startup(args.repeat)


if __name__ == "__main__":
    main()

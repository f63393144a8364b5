"""Helpers the tests import; the fixtures that use them are in tests/conftest.py."""

from __future__ import annotations

import io
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from maestro.cli import main
from maestro.cli.context import Context

# The real HOME's host folders: the test session fails if any of them changes.
GUARDED = [".claude", ".gemini", ".codex", ".agents", ".local/state/maestro", ".claude.json"]


def home_snapshot(home: Path) -> dict[str, object]:
    """What the guarded folders under ``home`` hold: file names and modification times."""
    snap: dict[str, object] = {}
    for name in GUARDED:
        path = home / name
        if path.is_dir():
            snap[name] = sorted(
                (str(p.relative_to(path)), p.stat().st_mtime_ns)
                for p in path.rglob("*")
                if p.is_file()
            )
        elif path.exists():
            snap[name] = path.stat().st_mtime_ns
        else:
            snap[name] = None
    return snap


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_cli(*argv: str, stdin: str = "") -> CliResult:
    """Run `maestro ...` in-process in the current directory and environment."""
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(
        cwd=Path.cwd(), env=dict(os.environ), stdout=out, stderr=err, stdin=io.StringIO(stdin)
    )
    code = main(list(argv), ctx)
    return CliResult(code, out.getvalue(), err.getvalue())


def new_pid_namespace() -> list[str]:
    """The command prefix that runs a command in a PID namespace of its own with this
    machine's /proc still mounted (as a command in Codex's sandbox is): pids there are
    not the numbers /proc shows. A skip where the system does not allow one."""
    for prefix in (
        ["unshare", "--pid", "--fork"],
        ["unshare", "--user", "--map-root-user", "--pid", "--fork"],
    ):
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, check=False)
        except FileNotFoundError:
            break  # no unshare(1)
        if done.returncode == 0:
            return prefix
    pytest.skip("this system does not allow a new PID namespace (unshare --pid --fork)")

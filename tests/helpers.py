"""Helpers the tests import; the fixtures that use them are in tests/conftest.py."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

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

"""Strict tooling as tests: ruff (lint and format) on the code and tests, mypy on the package."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip(module, reason=f"{module} is in the test extras: pip install '.[test]'")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_ruff_is_clean():
    done = _run("ruff", "check", "maestro", "bench", "tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_code_is_ruff_formatted():
    """One layout for every file: `ruff format maestro bench tests` fixes a failure."""
    done = _run("ruff", "format", "--check", "maestro", "bench", "tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_clean_on_the_package(tmp_path):
    done = _run("mypy", "--cache-dir", str(tmp_path / "mypy"), "maestro")
    assert done.returncode == 0, done.stdout + done.stderr

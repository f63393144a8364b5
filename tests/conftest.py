"""Shared fixtures. Every test runs under a temporary HOME with no MAESTRO_* settings
inherited from the machine; the session fails loudly if the real HOME's host folders
changed while the tests ran."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from maestro import clis, sandbox
from tests.helpers import GUARDED, home_snapshot, run_cli
from tests.snapshots import MarkdownSnapshot, TextSnapshot, XmlSnapshot

# Fake claude/gemini/codex executables on PATH: the `fake_clis` fixture (tests/fakes/README.md).
# `runenv`: a committed git project with fake CLIs and no stagger or backoff waits.
# `receiver`, `desktop`: a webhook on loopback and a fake notify-send (tests/notifykit.py).
pytest_plugins = ["tests.fakes.plugin", "tests.engine.runkit", "tests.notifykit"]

clis.load({})  # the roster, for tests that use a module without the command line

REAL_HOME = Path(os.environ.get("HOME", str(Path.home())))


@pytest.fixture(scope="session", autouse=True)
def _real_home_untouched():
    before = home_snapshot(REAL_HOME)
    yield
    after = home_snapshot(REAL_HOME)
    changed = [name for name in GUARDED if before[name] != after[name]]
    assert not changed, f"tests touched the real HOME ({REAL_HOME}): {changed}"


@pytest.fixture(autouse=True)
def temp_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith("MAESTRO_") or key in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.invalid")
    return home


# Read before `temp_home` clears every MAESTRO_* setting: CI turns these skips into failures.
REQUIRE_GH = os.environ.get("MAESTRO_REQUIRE_GH") == "1"
REQUIRE_SRT = os.environ.get("MAESTRO_REQUIRE_SRT") == "1"


@pytest.fixture
def gh_cli() -> str:
    """GitHub's CLI (gh) on PATH, for tests/forge against a loopback fake of GitHub.
    Skipped without it, unless MAESTRO_REQUIRE_GH=1 makes that a failure."""
    found = shutil.which("gh")
    if found is None:
        if REQUIRE_GH:
            pytest.fail("gh is not installed; install GitHub's CLI (Debian: apt install gh)")
        pytest.skip("gh is not installed: apt install gh, or see https://cli.github.com")
    return found


# Anthropic's sandbox runtime, pinned in tests/srt/package.json (`npm ci --prefix tests/srt`).
SRT_BIN = Path(__file__).parent / "srt" / "node_modules" / ".bin"


@pytest.fixture
def srt(monkeypatch) -> sandbox.Rules:
    """Processes confined by srt, as on macOS (on Linux srt confines with bubblewrap too):
    its bare rules. Skipped without it, unless MAESTRO_REQUIRE_SRT=1 (CI) makes that a
    failure."""
    if not (SRT_BIN / "srt").exists():
        if REQUIRE_SRT:
            pytest.fail("tests/srt/node_modules is missing; run `npm ci --prefix tests/srt`")
        pytest.skip("srt is not installed: npm ci --prefix tests/srt")
    monkeypatch.setenv("PATH", f"{SRT_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(sandbox, "BACKEND", sandbox.SRT)
    probed, why = sandbox.probe(os.environ)
    assert probed is not None, why
    return probed


@pytest.fixture
def unconfined(monkeypatch):
    """Spokes and validation commands run with the person's full rights (sandbox off):
    for what Maestro does when a person opted out of confinement (the guard's undo)."""
    monkeypatch.setenv("MAESTRO_SANDBOX", "0")


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """An empty git repository as the working directory."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextSnapshot)


@pytest.fixture
def md_snapshot(snapshot):
    return snapshot.use_extension(MarkdownSnapshot)


@pytest.fixture
def xml_snapshot(snapshot):
    return snapshot.use_extension(XmlSnapshot)


@pytest.fixture
def cli():
    """Run `maestro ...` in-process: cli("status", "--json") -> CliResult."""
    return run_cli

"""Fixtures of the real-CLI tests."""

from __future__ import annotations

import os
import subprocess

import pytest

from . import hostenv
from .fake_model import FakeModel
from .hostenv import shell_path

PLAN = """\
goal: Add user authentication
hub: claude
tasks:
  - {id: 1, title: Add the login endpoint, specialist: code, tool: sim, files: [src/auth.py],
     criteria: ["pytest passes"], validation: pytest}
"""


@pytest.fixture
def planned(cli, project):
    """A project holding a plan, for a host to show with `maestro status`."""
    assert cli("plan", "--from", "-", "--yes", stdin=PLAN).code == 0
    return project


@pytest.fixture
def model(project, temp_home, monkeypatch):
    """A committed git project whose whole environment points the three real CLIs at one
    fake model: nothing of the machine's (keys, settings) reaches them."""
    (project / "README.md").write_text("project\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=project, check=True)
    with FakeModel() as fake:
        dirs = shell_path()
        env = {
            **hostenv.claude_env(temp_home, fake.url, dirs),
            **hostenv.gemini_env(temp_home, fake.url, dirs),
            **hostenv.codex_env(temp_home, fake.url, dirs),
        }
        keep = (
            "XDG_STATE_HOME",
            "XDG_CONFIG_HOME",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
        )
        for key in list(os.environ):
            if key not in keep:
                monkeypatch.delenv(key)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        # Small settings keep the real-CLI part fast: no waits between launches or retries.
        monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
        monkeypatch.setenv("MAESTRO_RETRY_BACKOFF", "0")
        monkeypatch.setenv("MAESTRO_MAX_RETRIES", "1")
        monkeypatch.setenv("MAESTRO_AGENT_TIMEOUT", "1.5")
        monkeypatch.setenv("MAESTRO_LOG", "detailed")
        yield fake

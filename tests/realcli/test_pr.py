"""`maestro run --pr` with a real CLI as the spoke (the pinned claude against the loopback
fake model) and the real gh and git against the loopback FakeHub (tests/forge): the task's
work reaches the pull request as its own commit, under Claude Code's co-author line."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.forge import conftest as forge
from tests.forge.fakehub import Job, Step

from .hostenv import needs
from .test_spokes import CONTENT, one_task, write_then_answer

pytestmark = [pytest.mark.realcli, pytest.mark.gh]
# The loopback GitHub and its certificate (tests/forge/conftest.py), as fixtures here too.
certificate, hub = forge.certificate, forge.hub


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def test_a_claude_task_reaches_the_pull_request_as_its_own_commit(
    cli,
    model,
    project,
    hub,
    monkeypatch,
):
    needs("claude")
    git("-C", str(project), "remote", "add", "origin", hub.url)
    subprocess.run(
        ["git", "-C", str(project), "push", "-q", "origin", "HEAD:main"], check=True, env=os.environ
    )
    hub.ci = [Job("tests", steps=[Step("Run the tests", "success", "1 passed")])]
    monkeypatch.setenv("MAESTRO_PR_POLL", "1")
    one_task(cli, project, "claude")
    model.reply = write_then_answer("hello.txt")
    res = cli("run", "--pr")
    assert res.code == 0, res.out + res.err
    [pull] = hub.pulls.values()
    assert (pull.head, pull.base, pull.title) == (
        "maestro/greet-the-world",
        "main",
        "Greet the world",
    )
    assert "| 1. Write the greeting file | done | claude |" in pull.body
    bare = str(hub.bare)
    assert git("-C", bare, "show", "maestro/greet-the-world:hello.txt") == CONTENT
    message = git("-C", bare, "log", "-1", "--format=%B", "maestro/greet-the-world")
    assert message.startswith("Write the greeting file\n")
    assert "done by claude" in message and "Maestro-Task: 1" in message
    assert "Co-authored-by: Claude <noreply@anthropic.com>" in message
    assert "every check passed" in res.out
    assert git("-C", str(project), "log", "--format=%s") == "init\n"  # the person's branch
    assert not (project / "hello.txt").exists()

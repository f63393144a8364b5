"""How .ci/run decides to reuse its cached npm prefix of the pinned CLIs (runs without them)."""

from __future__ import annotations

import json
import os

import pytest

from . import hostenv


def fake_prefix(root, versions):
    for name, version in versions.items():
        package = root / "node_modules" / hostenv.NPM_PACKAGES[name]
        package.mkdir(parents=True)
        (package / "package.json").write_text(json.dumps({"version": version}))
        (root / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
        (root / "node_modules" / ".bin" / name).write_text("")


def test_a_prefix_with_exactly_the_pinned_versions_is_reused(tmp_path):
    fake_prefix(tmp_path, hostenv.PINNED)
    assert hostenv.outdated(tmp_path) == []


def test_an_empty_or_other_version_prefix_names_what_to_install(tmp_path):
    assert hostenv.outdated(tmp_path / "none") == hostenv.npm_specs()
    fake_prefix(tmp_path, {**hostenv.PINNED, "gemini": "0.60.0"})
    (tmp_path / "node_modules" / ".bin" / "codex").unlink()
    assert hostenv.outdated(tmp_path) == [
        f"@google/gemini-cli@{hostenv.PINNED['gemini']}",
        f"@openai/codex@{hostenv.PINNED['codex']}",
    ]


NEWER = {"claude": "9.9.9", "gemini": "9.9.8", "codex": "9.9.7"}


def fake_bin(folder, name, text):
    """An executable ``name`` in ``folder`` that prints ``text`` whatever it is asked."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{text}'\n")
    script.chmod(0o755)


def test_a_prefix_of_the_newest_releases_is_checked_against_them(tmp_path):
    fake_prefix(tmp_path, NEWER)
    assert hostenv.outdated(tmp_path, NEWER) == []
    assert hostenv.outdated(tmp_path) == hostenv.npm_specs()  # none of them is pinned
    assert hostenv.npm_specs(NEWER) == [
        "@anthropic-ai/claude-code@9.9.9",
        "@google/gemini-cli@9.9.8",
        "@openai/codex@9.9.7",
    ]


def test_the_newest_releases_are_what_npm_says_latest_is(tmp_path, monkeypatch):
    fake_bin(tmp_path, "npm", "9.9.9")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert hostenv.newest() == dict.fromkeys(hostenv.PINNED, "9.9.9")


def test_a_cli_of_another_version_is_run_only_as_a_newest_release(tmp_path, monkeypatch):
    fake_bin(tmp_path / "node_modules" / ".bin", "claude", "9.9.9 (Claude Code)")
    monkeypatch.setattr(hostenv, "REALCLI_DIR", str(tmp_path))
    monkeypatch.setattr(hostenv, "REQUIRED", True)
    with pytest.raises(pytest.fail.Exception, match="these tests pin"):
        hostenv.needs("claude")
    monkeypatch.setattr(hostenv, "NEWEST", True)
    assert hostenv.needs("claude") == tmp_path / "node_modules" / ".bin" / "claude"

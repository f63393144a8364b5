"""The committed host bundles (the repository as a Claude Code marketplace, a Gemini CLI
extension and a Codex marketplace) are exactly what the renderers give now."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from maestro.install import bundle
from maestro.install.sources import VERBS

ROOT = Path(__file__).resolve().parents[2]
FIX = "run `python -m maestro.install.bundle` from the repository root and commit the result"


@pytest.mark.parametrize("item", bundle.render(), ids=lambda item: item.path)
def test_the_committed_bundle_is_a_fresh_render(item):
    path = ROOT / item.path
    assert path.is_file(), f"{item.path} is missing: {FIX}"
    assert path.read_text(encoding="utf-8") == item.content, f"{item.path} is stale: {FIX}"
    assert os.access(path, os.X_OK) == item.executable, f"{item.path}: its mode is wrong: {FIX}"


def test_no_stale_file_is_left_in_the_bundle():
    assert bundle.stale(ROOT) == [], FIX


def test_sync_writes_a_bundle_then_nothing(tmp_path):
    (tmp_path / "plugins/claude/commands").mkdir(parents=True)
    (tmp_path / "plugins/claude/commands/gone.md").write_text("a verb that no longer exists")
    first = bundle.sync(tmp_path)
    assert "plugins/claude/commands/gone.md" in first
    assert not (tmp_path / "plugins/claude/commands/gone.md").exists()
    assert bundle.stale(tmp_path) == [] and bundle.sync(tmp_path) == []
    assert os.access(tmp_path / "plugins/claude/bin/maestro", os.X_OK)


def test_the_sync_command_refuses_another_folder(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "maestro.install.bundle"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1 and "root of Maestro's repository" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_each_marketplace_names_its_plugin_folder():
    claude = json.loads((ROOT / ".claude-plugin/marketplace.json").read_text())
    codex = json.loads((ROOT / ".agents/plugins/marketplace.json").read_text())
    assert claude["name"] == codex["name"] == "maestro"
    claude_folder = ROOT / claude["plugins"][0]["source"]
    codex_folder = ROOT / codex["plugins"][0]["source"]["path"]
    assert (
        json.loads((claude_folder / ".claude-plugin/plugin.json").read_text())["name"] == "maestro"
    )
    assert json.loads((codex_folder / ".codex-plugin/plugin.json").read_text())["name"] == "maestro"
    assert sorted(p.stem for p in (claude_folder / "commands").iterdir()) == sorted(VERBS)


def test_the_root_is_a_gemini_extension_and_nothing_else_of_gemini_s():
    manifest = json.loads((ROOT / "gemini-extension.json").read_text())
    assert manifest["name"] == "maestro" and (ROOT / manifest["contextFileName"]).is_file()
    commands = sorted((ROOT / "commands").rglob("*"))
    assert [p.relative_to(ROOT).as_posix() for p in commands if p.is_file()] == sorted(
        f"commands/maestro/{verb}.toml" for verb in VERBS
    )
    for path in commands:
        if path.is_file():
            assert tomllib.loads(path.read_text())["prompt"]
    # An extension's skills/, agents/, policies/ and hooks/ load into every session: its
    # agents/ holds the read-only recon agent `plan` explores through, and nothing else.
    assert not any((ROOT / name).exists() for name in ("skills", "policies", "hooks"))
    assert sorted(p.name for p in (ROOT / "agents").iterdir()) == ["maestro-recon.md"]


def test_codex_skills_are_explicit_only():
    for verb in VERBS:
        folder = ROOT / "plugins/codex/skills" / verb
        policy = yaml.safe_load((folder / "agents/openai.yaml").read_text())
        assert policy == {"policy": {"allow_implicit_invocation": False}}
        head = (folder / "SKILL.md").read_text().split("---\n")[1]
        assert yaml.safe_load(head)["name"] == verb


def _shim(tmp_path, path_dirs, home):
    return subprocess.run(
        [str(ROOT / "plugins/claude/bin/maestro"), "status", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": ":".join([*path_dirs, "/usr/bin", "/bin"]), "HOME": str(home)},
    )


def _fake_maestro(folder):
    folder.mkdir(parents=True)
    script = folder / "maestro"
    script.write_text('#!/bin/sh\necho "real maestro: $*"\n')
    script.chmod(0o755)


def test_the_plugin_bin_runs_the_installed_maestro(tmp_path):
    plugin_bin = str(ROOT / "plugins/claude/bin")
    _fake_maestro(tmp_path / "venv/bin")
    found = _shim(tmp_path, [plugin_bin, str(tmp_path / "venv/bin")], tmp_path)
    assert found.stdout == "real maestro: status --json\n", found.stderr
    # Not on PATH (a login shell that lacks it): ~/.local/bin, where pipx and uv put it.
    _fake_maestro(tmp_path / "home/.local/bin")
    found = _shim(tmp_path, [plugin_bin], tmp_path / "home")
    assert found.stdout == "real maestro: status --json\n", found.stderr


def test_the_plugin_bin_without_maestro_says_how_to_install_it(tmp_path):
    # Another copy of the plugin on PATH is skipped too, not run in a loop.
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "maestro").write_bytes((ROOT / "plugins/claude/bin/maestro").read_bytes())
    (copy / "maestro").chmod(0o755)
    found = _shim(tmp_path, [str(ROOT / "plugins/claude/bin"), str(copy)], tmp_path)
    assert found.returncode == 127 and found.stdout == ""
    assert found.stderr.count("\n") == 1 and "installers/install.sh" in found.stderr

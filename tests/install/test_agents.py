"""The recon subagent files install and uninstall like every other file Maestro writes:
hashed in the manifest, removed byte for byte, a user's own file never touched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from maestro.paths import ProjectPaths
from tests.install.trees import dirs, tree

# Where each host lists the agent, per scope (docs/hosts.md, "The recon subagent").
AGENT_FILES = {
    ("gemini", "project"): ".gemini/agents/maestro-recon.md",
    ("gemini", "user"): ".gemini/agents/maestro-recon.md",
    ("codex", "project"): ".codex/agents/maestro-recon.toml",
    ("codex", "user"): ".codex/agents/maestro-recon.toml",  # $CODEX_HOME/agents
}
CASES = list(AGENT_FILES)


def _root(scope: str, project: Path, home: Path) -> Path:
    return project if scope == "project" else home


def _state(root: Path) -> tuple[dict[str, str], set[str]]:
    """Files and folders under ``root`` but Maestro's own state (~/.local/state)."""
    files = {rel: sha for rel, sha in tree(root).items() if not rel.startswith(".local")}
    return files, {rel for rel in dirs(root) if not rel.startswith(".local")}


def _manifest(scope: str, project: Path, home: Path) -> dict:
    path = (
        ProjectPaths(project).install_manifest
        if scope == "project"
        else home / ".local/state/maestro/install-manifest.json"
    )
    return json.loads(path.read_text())


@pytest.mark.parametrize(("host", "scope"), CASES)
def test_the_agent_file_is_hashed_and_removed_byte_for_byte(cli, project, temp_home, host, scope):
    root = _root(scope, project, temp_home)
    before = _state(root)
    assert cli("install", "--host", host, "--scope", scope).code == 0
    agent = root / AGENT_FILES[host, scope]
    assert agent.is_file()
    install = next(i for i in _manifest(scope, project, temp_home)["installs"] if i["host"] == host)
    recorded = {f["path"]: f["sha256"] for f in install["files"]}
    rel = agent.relative_to(project if scope == "project" else Path(install["root"])).as_posix()
    assert recorded[rel] == hashlib.sha256(agent.read_bytes()).hexdigest()
    assert cli("uninstall", "--host", host, "--scope", scope).code == 0
    assert _state(root) == before


@pytest.mark.parametrize(("host", "scope"), CASES)
def test_the_users_own_agents_beside_it_are_left_alone(cli, project, temp_home, host, scope):
    folder = (_root(scope, project, temp_home) / AGENT_FILES[host, scope]).parent
    folder.mkdir(parents=True)
    mine = folder / ("mine.md" if host == "gemini" else "mine.toml")
    mine.write_bytes(b"my own agent\r\n")
    assert cli("install", "--host", host, "--scope", scope).code == 0
    assert cli("uninstall", "--host", host, "--scope", scope).code == 0
    assert sorted(p.name for p in folder.iterdir()) == [mine.name]
    assert mine.read_bytes() == b"my own agent\r\n"


@pytest.mark.parametrize(("host", "scope"), CASES)
def test_an_agent_of_the_same_name_that_maestro_did_not_write_is_a_conflict(
    cli, project, temp_home, host, scope
):
    agent = _root(scope, project, temp_home) / AGENT_FILES[host, scope]
    agent.parent.mkdir(parents=True)
    agent.write_text("someone else's recon\n")
    res = cli("install", "--host", host, "--scope", scope)
    assert res.code == 1 and "conflict" in res.out
    assert agent.read_text() == "someone else's recon\n"


@pytest.mark.parametrize(("host", "scope"), CASES)
def test_an_agent_changed_by_hand_is_kept_on_uninstall(cli, project, temp_home, host, scope):
    agent = _root(scope, project, temp_home) / AGENT_FILES[host, scope]
    assert cli("install", "--host", host, "--scope", scope).code == 0
    agent.write_text(agent.read_text() + "\nmy extra rule\n")
    res = cli("uninstall", "--host", host, "--scope", scope)
    assert res.code == 0 and "skip" in res.out
    assert agent.read_text().endswith("my extra rule\n")


def test_gemini_project_agents_are_left_for_the_user_to_acknowledge(cli, project, temp_home):
    """Gemini CLI lists a project's agents only once the user acknowledged them in its
    own dialog; the install writes no acknowledgement for them."""
    assert cli("install", "--host", "gemini").code == 0
    assert (project / AGENT_FILES["gemini", "project"]).is_file()
    assert not (temp_home / ".gemini/acknowledgments").exists()


def test_claude_gets_no_agent_file(cli, project, temp_home):
    before = _state(temp_home)
    assert cli("install", "--host", "claude").code == 0
    assert cli("install", "--host", "claude", "--scope", "user").code == 0
    assert not (project / ".claude/agents").exists()
    assert not (temp_home / ".claude/agents").exists()
    assert cli("uninstall", "--host", "claude", "--scope", "user").code == 0
    assert _state(temp_home) == before

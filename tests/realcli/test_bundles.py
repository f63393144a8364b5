"""Each pinned host installs the repository as its own bundle, from a local path, the
way its users install any (docs/hosts.md, "The host's own install"), then runs
`/maestro:status` (Codex: `$maestro:status`) from it. The fake model answers the expanded
command by running the bare `maestro status` it names through the host's shell, so a pass
also proves the shell finds Maestro: through the plugin's bin/ in Claude Code, on the
user's PATH (here ~/.local/bin, where uv, pipx and installers/install.sh put it) in the
others.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from maestro.install import invocation

from . import hostenv
from .fake_model import FakeModel
from .hostenv import needs, shell_path
from .test_hosts import STATUS_BODY, run_status

pytestmark = pytest.mark.realcli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def repo(tmp_path):
    """The repository as a clone has it: the files git tracks (and new ones it would)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    copy = tmp_path / "maestro-repo"
    for name in filter(None, listed.split(b"\0")):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            (copy / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / os.fsdecode(name))
    return copy


@pytest.fixture
def local_bin(temp_home):
    """Maestro installed for the user: ~/.local/bin/maestro."""
    folder = temp_home / ".local" / "bin"
    folder.mkdir(parents=True)
    (folder / "maestro").write_text(f'#!/bin/sh\nexec {invocation.resolve()} "$@"\n')
    (folder / "maestro").chmod(0o755)
    return folder


def _ok(out: hostenv.Outcome) -> hostenv.Outcome:
    assert out.code == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return out


def test_claude_installs_the_marketplace_plugin_and_runs_maestro(
    planned, temp_home, repo, local_bin
):
    claude = needs("claude")
    with FakeModel(reply=run_status) as fake:
        env = hostenv.claude_env(temp_home, fake.url, shell_path())  # no ~/.local/bin

        def run(*argv: str) -> hostenv.Outcome:
            return _ok(hostenv.run([str(claude), *argv], cwd=planned, env=env))

        run("plugin", "marketplace", "add", str(repo))
        run("plugin", "install", "maestro@maestro")
        assert "maestro@maestro" in run("plugin", "list").stdout
        out = run("-p", "/maestro:status", "--output-format", "stream-json", "--verbose")
        events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        init = next(e for e in events if e.get("subtype") == "init")
        assert {f"maestro:{verb}" for verb in ("plan", "run", "status")} <= set(
            init["slash_commands"]
        )
        assert fake.seen(STATUS_BODY) and fake.seen('"command": "maestro status"')
        result = events[-1]
        assert "Add user authentication" in result["result"]  # maestro's answer, via bin/
        assert result["permission_denials"] == []  # allowed-tools pre-approved `maestro`


def test_gemini_installs_the_repository_as_its_extension(planned, temp_home, repo, local_bin):
    gemini = needs("gemini")
    with FakeModel(reply=run_status) as fake:
        env = hostenv.gemini_env(temp_home, fake.url, [*shell_path(), str(local_bin)])

        def run(*argv: str, **extra: str) -> hostenv.Outcome:
            return _ok(hostenv.run([str(gemini), *argv], cwd=planned, env={**env, **extra}))

        # --consent answers the question on extensions' risks; the one on trusting the
        # source folder has no flag.
        run("extensions", "install", str(repo), "--consent", GEMINI_CLI_TRUST_WORKSPACE="true")
        listed = run("extensions", "list")
        assert "maestro (" in listed.stdout + listed.stderr
        assert "Agent skills" not in listed.stdout + listed.stderr  # the root holds none
        out = run(
            "-p", "/maestro:status", "-o", "json", "--skip-trust", "-m", "gemini-2.5-flash", "-y"
        )
        assert fake.seen(STATUS_BODY) and fake.seen("/maestro:plan|challenge|run|review|status")
        assert "Add user authentication" in json.loads(out.stdout)["response"]


def test_codex_installs_the_marketplace_plugin_and_runs_maestro(
    planned, temp_home, repo, local_bin
):
    codex = needs("codex")
    # Codex's shell is a login shell: PATH comes from the profile, which (as Debian's and
    # Ubuntu's default ~/.profile does) adds ~/.local/bin.
    (temp_home / ".profile").write_text('PATH="$HOME/.local/bin:$PATH"\n')
    with FakeModel(reply=run_status) as fake:
        env = hostenv.codex_env(temp_home, fake.url, shell_path())
        config = temp_home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
        # With plugins on, Codex also looks for its curated marketplace (git on github.com)
        # and chatgpt.com: through a proxy that is the fake, which refuses, nothing leaves.
        proxy = {"HTTPS_PROXY": fake.url, "https_proxy": fake.url}
        env |= {**proxy, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}

        def run(*argv: str) -> hostenv.Outcome:
            return _ok(hostenv.run([str(codex), *argv], cwd=planned, env=env))

        run("plugin", "marketplace", "add", str(repo))
        run("plugin", "add", "maestro@maestro")
        assert "installed, enabled" in run("plugin", "list").stdout
        out = run(
            "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "$maestro:status"
        )
        assert fake.seen("<name>maestro:status</name>") and fake.seen(STATUS_BODY)
        assert not fake.seen("maestro:plan:")  # explicit-only: no skill listed to the model
        messages = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        texts = [m["item"].get("text", "") for m in messages if m.get("type") == "item.completed"]
        assert any("Add user authentication" in t for t in texts), texts

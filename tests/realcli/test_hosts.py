"""The real host CLIs load what `maestro install` wrote (HOSTS.md section 4).

Runs only with the pinned CLIs installed (see README, "Testing notes"):
    npm install --prefix DIR @anthropic-ai/claude-code@2.1.332 @google/gemini-cli@0.61.0 @openai/codex@0.171.0
    MAESTRO_REALCLI_DIR=DIR python -m pytest -m realcli
Each case gets a fresh HOME and a loopback fake model server; the fake answers the
expanded command by asking the host's own shell tool to run the `maestro status`
command line the installed file names, so a pass also proves that line runs from the
host's shell, whose PATH lacks Maestro's environment.
"""

from __future__ import annotations

import json
import re

import pytest

from maestro.install import invocation

from . import hostenv
from .fake_model import FakeModel, ToolCall
from .hostenv import needs, shell_path

pytestmark = pytest.mark.realcli

STATUS_BODY = "and present it briefly"  # a phrase of commands/status.md


def status_command() -> str:
    return f"{invocation.resolve()} status"


def run_status(api: str, body: object) -> str | ToolCall:
    """Answer the expanded command by running the status command line it names."""
    text = json.dumps(body)
    match = re.search(r"Run `([^`]*status)`", text.replace("\\n", "\n"))
    return (
        ToolCall(match.group(1))
        if match and STATUS_BODY in text
        else "no maestro command in the prompt"
    )


def test_claude_expands_the_installed_command_and_runs_maestro(cli, planned, temp_home):
    claude = needs("claude")
    assert cli("install", "--host", "claude").code == 0
    with FakeModel(reply=run_status) as fake:
        env = hostenv.claude_env(temp_home, fake.url, shell_path())
        out = hostenv.run(
            [str(claude), "-p", "/maestro:status", "--output-format", "json"], cwd=planned, env=env
        )
        assert out.code == 0, out.stderr
        result = json.loads(out.stdout)
        assert fake.seen(STATUS_BODY) and fake.seen(status_command())
        assert (
            "Add user authentication" in result["result"]
        )  # maestro's own answer, through Claude's Bash
        assert result["permission_denials"] == []  # allowed-tools pre-approved the call
        tools = {tool["name"] for tool in fake.model_requests()[0].body["tools"]}
        assert {"Agent", "Read", "Bash"} <= tools  # allowed-tools adds permission, removes no tool
        fake.requests.clear()
        hello = hostenv.run(
            [str(claude), "-p", "hello", "--output-format", "json"], cwd=planned, env=env
        )
        assert hello.code == 0
        assert fake.seen("/maestro:plan|challenge|run|review|status|report")  # the stub
        assert not fake.seen("<!-- Maestro claude")  # Claude hides the markers
        assert not fake.seen("Show the Maestro plan's goal")  # descriptions are not listed


def test_gemini_expands_the_installed_command_and_runs_maestro(cli, planned, temp_home):
    gemini = needs("gemini")
    assert cli("install", "--host", "gemini").code == 0
    with FakeModel(reply=run_status) as fake:
        env = hostenv.gemini_env(temp_home, fake.url, shell_path())
        argv = [
            str(gemini),
            "-p",
            "/maestro:status",
            "-o",
            "json",
            "--skip-trust",
            "-m",
            "gemini-2.5-flash",
            "-y",
        ]
        out = hostenv.run(argv, cwd=planned, env=env)
        assert out.code == 0, out.stderr[-2000:]
        assert fake.seen(STATUS_BODY) and fake.seen(status_command())
        assert "Add user authentication" in json.loads(out.stdout)["response"]
        assert fake.seen("<!-- Maestro gemini v1 -->")  # GEMINI.md stub, markers included
        assert not fake.seen("Show the Maestro plan's goal")  # command descriptions are not listed


def test_codex_injects_the_skill_and_runs_maestro(cli, planned, temp_home):
    codex = needs("codex")
    assert cli("install", "--host", "codex").code == 0
    verb_file = planned / ".agents/skills/maestro/verbs/status.md"

    def reply(api: str, body: object) -> str | ToolCall:
        text = json.dumps(body)
        if "<name>maestro</name>" not in text:
            return "the skill was not injected"
        if STATUS_BODY not in text:
            return ToolCall(f"cat {verb_file}")  # the router says: follow verbs/<verb>.md
        return run_status(api, body)

    with FakeModel(reply=reply) as fake:
        env = hostenv.codex_env(temp_home, fake.url, shell_path())
        argv = [
            str(codex),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "workspace-write",
            "$maestro status",
        ]
        out = hostenv.run(argv, cwd=planned, env=env)
        assert out.code == 0, out.stderr[-2000:]
        assert fake.seen("<name>maestro</name>") and fake.seen("verbs/<verb>.md")
        messages = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        texts = [m["item"].get("text", "") for m in messages if m.get("type") == "item.completed"]
        assert any("Add user authentication" in t for t in texts), texts
        assert fake.seen("$maestro plan|challenge|run|review|status|report")  # AGENTS.md stub


@pytest.mark.parametrize("host", ["claude", "gemini", "codex"])
def test_user_scope_install_is_found_from_the_home_folder(cli, planned, temp_home, host):
    exe = needs(host)
    assert cli("install", "--host", host, "--scope", "user").code == 0
    with FakeModel() as fake:
        if host == "claude":
            env = hostenv.claude_env(temp_home, fake.url, shell_path())
            argv = [str(exe), "-p", "/maestro:status", "--output-format", "json"]
        elif host == "gemini":
            env = hostenv.gemini_env(temp_home, fake.url, shell_path())
            argv = [
                str(exe),
                "-p",
                "/maestro:status",
                "-o",
                "json",
                "--skip-trust",
                "-m",
                "gemini-2.5-flash",
            ]
        else:
            env = hostenv.codex_env(temp_home, fake.url, shell_path())
            argv = [str(exe), "exec", "--json", "--skip-git-repo-check", "$maestro status"]
        out = hostenv.run(argv, cwd=planned, env=env)
        assert out.code == 0, out.stderr[-2000:]
        assert fake.seen(
            "plan|challenge|run|review|status|report. State .ai/MAESTRO.md"
        )  # the user stub
        assert fake.seen("verbs/<verb>.md" if host == "codex" else STATUS_BODY)

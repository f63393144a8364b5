"""Every host is a hub: `/maestro:run` (Codex: `$maestro run`) drives a run to its end
from inside the real host, or the host's mode is refused in one line (HOSTS.md section 5).

Runs only with the pinned CLIs installed (MAESTRO_REALCLI_DIR, see test_hosts.py). The
loopback model plays the hub exactly as the installed command file says: it starts the
run with the command line the file names, then runs each `next` command Maestro prints,
as printed, until an answer has none, then `maestro status --json`. The plan has three
simulated tasks, so nothing else needs a network. Asserted: every task done, no call
denied, no two calls in a row identical (Gemini stops a model after 5), the host's own
answer came back. One more case has a real claude spoke started from a Codex hub whose
login shell resets PATH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from maestro.config import load_settings
from maestro.install import invocation
from maestro.state.store import PlanStore

from . import hostenv
from .fake_model import FakeModel, ToolCall, tool_results
from .hostenv import needs, shell_path
from .test_spokes import write_then_answer

pytestmark = pytest.mark.realcli

PLAN = """\
goal: Three small modules
hub: claude
tasks:
  - {id: 1, title: Write module a, specialist: code, tool: sim, files: [src/a.py],
     criteria: ["src/a.py exists"], validation: "test -f src/a.py"}
  - {id: 2, title: Write module b, specialist: code, tool: sim, files: [src/b.py], depends: [1],
     criteria: ["src/b.py exists"], validation: "test -f src/b.py"}
  - {id: 3, title: Write module c, specialist: code, tool: sim, files: [src/c.py], depends: [1],
     criteria: ["src/c.py exists"], validation: "test -f src/c.py"}
"""
# Each simulated task takes this long, so the hub follows the run over several waits.
SIM_DELAY = {"MAESTRO_SIM_DELAY": "1.5"}
NEXT = re.compile(r'"next":\s*"((?:[^"\\]|\\.)*)"')
START = re.compile(r"Start: `([^`]*run --detach --json)")
FULL_ACCESS = "--sandbox danger-full-access"


def _texts(value: Any) -> list[str]:
    """A tool result and every string inside it, JSON-decoded as deep as it goes (Gemini
    wraps the command's output in a JSON object of its own)."""
    found = [value] if isinstance(value, str) else []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return found
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found += _texts(item)
    return found


def next_command(result: str) -> str | None:
    for text in _texts(result):
        match = NEXT.search(text)
        if match:
            return str(json.loads(f'"{match.group(1)}"'))
    return None


@dataclass
class Hub:
    """The scripted hub model: start, follow every `next`, then status, then answer."""

    start: str | None = None  # the start command line; None: read it from the command file
    prelude: list[str] = field(
        default_factory=list
    )  # commands to run first (Codex: read the verb file)
    commands: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)

    def __call__(self, api: str, body: Any) -> str | ToolCall:
        results = tool_results(api, body)
        if len(results) != len(self.commands):
            return "ok"  # a side request of the host (a title, a check), not the hub's turn
        self.results = results
        command = self._next(body, results[-1] if results else None)
        if command is None:
            return "FINISHED: " + (self.results[-1][-300:] if self.results else "nothing ran")
        self.commands.append(command)
        return ToolCall(command)

    def _next(self, body: Any, result: str | None) -> str | None:
        done = len(self.commands)
        if done < len(self.prelude):
            return self.prelude[done]
        if done == len(self.prelude):
            text = json.dumps(body).replace("\\n", "\n").replace('\\"', '"')
            match = START.search(text)
            return self.start or (match.group(1) if match else None)
        if self.commands[-1].endswith("status --json"):
            return None
        following = next_command(result or "")
        if following is None and any('"ok": false' in text for text in _texts(result or "")):
            return None  # Maestro refused: the hub reports that line, nothing else to run
        return following or f"{invocation.resolve()} status --json"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def hub_project(cli, project):
    """A git project with the three-task plan, committed."""
    (project / "README.md").write_text("three modules\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    assert cli("plan", "--from", "-", "--yes", stdin=PLAN).code == 0
    return project


def statuses(project: Path) -> list[str]:
    return [t.status for t in PlanStore(load_settings(project).paths).load().tasks]


def assert_followed_to_the_end(hub: Hub, project: Path) -> None:
    assert statuses(project) == ["done", "done", "done"], (hub.commands, hub.results[-2:])
    assert hub.commands[-1].endswith("status --json") and any(
        '"done": 3' in t for t in _texts(hub.results[-1])
    )
    follows = hub.commands[len(hub.prelude) + 1 : -1]
    assert len(follows) >= 2 and all(" wait --json --run " in c for c in follows)
    assert all(
        a != b for a, b in zip(hub.commands, hub.commands[1:], strict=False)
    )  # never one call twice in a row
    assert any('"state": "ended"' in t for t in _texts(hub.results[-2]))


def test_claude_code_default_mode_drives_the_run(cli, hub_project, temp_home):
    claude = needs("claude")
    assert cli("install", "--host", "claude").code == 0
    hub = Hub()
    with FakeModel(reply=hub) as fake:
        env = {**hostenv.claude_env(temp_home, fake.url, shell_path()), **SIM_DELAY}
        out = hostenv.run(
            [str(claude), "-p", "/maestro:run", "--output-format", "json"],
            cwd=hub_project,
            env=env,
            timeout=300,
        )
    assert out.code == 0, out.stderr[-2000:]
    result = json.loads(out.stdout)
    assert result["permission_denials"] == [] and not result["is_error"]
    assert_followed_to_the_end(hub, hub_project)
    assert result["result"].startswith("FINISHED")


def test_claude_code_allows_a_bare_maestro_too(cli, hub_project, temp_home):
    """The model types `maestro ...` instead of the path the command file names."""
    claude = needs("claude")
    assert cli("install", "--host", "claude").code == 0
    program = Path(invocation.resolve().split()[0])
    if program.name != "maestro":
        pytest.skip("Maestro is not installed as a `maestro` script here")
    hub = Hub(start="maestro run --detach --json")
    with FakeModel(reply=hub) as fake:
        env = {
            **hostenv.claude_env(temp_home, fake.url, [str(program.parent), *shell_path()]),
            **SIM_DELAY,
        }
        out = hostenv.run(
            [str(claude), "-p", "/maestro:run", "--output-format", "json"],
            cwd=hub_project,
            env=env,
            timeout=300,
        )
    assert out.code == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["permission_denials"] == []
    assert_followed_to_the_end(hub, hub_project)


@pytest.mark.parametrize("mode", ["user-policy", "allow-rule", "yolo"])
def test_gemini_headless_drives_the_run_in_its_documented_modes(cli, hub_project, temp_home, mode):
    """Default mode with the user-scope install (its policy file allows Maestro's
    commands), or a project install with --allowed-tools or -y. Its shell tool injects
    git configuration (an empty diff.external among it): the receipts still measure
    every task."""
    gemini = needs("gemini")
    scope = "user" if mode == "user-policy" else "project"
    assert cli("install", "--host", "gemini", "--scope", scope).code == 0
    flags = {
        "yolo": ["-y"],
        "allow-rule": ["--allowed-tools", f"run_shell_command({invocation.resolve()})"],
    }.get(mode, [])
    hub = Hub()
    with FakeModel(reply=hub) as fake:
        env = {**hostenv.gemini_env(temp_home, fake.url, shell_path()), **SIM_DELAY}
        argv = [
            str(gemini),
            "-p",
            "/maestro:run",
            "-o",
            "json",
            "--skip-trust",
            "-m",
            "gemini-2.5-flash",
            *flags,
        ]
        out = hostenv.run(argv, cwd=hub_project, env=env, timeout=300)
    assert out.code == 0, out.stderr[-2000:]
    assert_followed_to_the_end(hub, hub_project)
    answer = json.loads(out.stdout)
    assert answer["response"].startswith("FINISHED")
    assert answer["stats"]["tools"]["totalFail"] == 0 and answer["stats"]["tools"][
        "totalCalls"
    ] == len(hub.commands)
    receipts = [t.receipt for t in PlanStore(load_settings(hub_project).paths).load().tasks]
    assert all(r and r.diff_sha for r in receipts)


def _codex(cli, project: Path, temp_home: Path, *mode: str) -> tuple[Hub, hostenv.Outcome]:
    codex = needs("codex")
    assert cli("install", "--host", "codex").code == 0
    hub = Hub(prelude=[f"cat {project / '.agents/skills/maestro/verbs/run.md'}"])
    with FakeModel(reply=hub) as fake:
        env = {**hostenv.codex_env(temp_home, fake.url, shell_path()), **SIM_DELAY}
        argv = [str(codex), "exec", "--json", "--skip-git-repo-check", *mode, "$maestro run"]
        out = hostenv.run(argv, cwd=project, env=env, timeout=300)
    assert out.code == 0, out.stderr[-2000:]
    return hub, out


def test_codex_full_access_drives_the_run(cli, hub_project, temp_home):
    hub, _out = _codex(cli, hub_project, temp_home, "--sandbox", "danger-full-access")
    assert_followed_to_the_end(hub, hub_project)


@pytest.mark.parametrize(
    "mode", [[], ["--sandbox", "workspace-write"]], ids=["default", "workspace-write"]
)
def test_codex_sandboxed_modes_are_refused_in_one_line_and_start_nothing(
    cli, hub_project, temp_home, mode
):
    hub, _out = _codex(cli, hub_project, temp_home, *mode)
    assert len(hub.commands) == 2 and hub.commands[1].endswith("run --detach --json")
    refusal = hub.results[1]
    assert "Codex CLI's command sandbox cannot run this" in refusal and FULL_ACCESS in refusal, (
        refusal
    )
    assert "internal error" not in refusal
    assert statuses(hub_project) == ["pending", "pending", "pending"]
    assert not (hub_project / ".ai" / "maestro" / "runs").exists()


SPOKE_PLAN = """\
goal: Greet the world
hub: codex
tasks:
  - {id: 1, title: Write the greeting file, specialist: code, tool: claude, files: [hello.txt],
     criteria: ["hello.txt greets the world"], validation: "grep -q world hello.txt"}
"""


def test_a_codex_hub_whose_login_shell_resets_path_starts_a_real_spoke(
    cli, project, temp_home, monkeypatch
):
    """Codex runs its model's commands with `bash -lc` (HOSTS.md section 5): here the
    profile sets PATH to the system's folders only, so the engine the hub starts has no
    claude on PATH. The user planned and installed from a shell that had it: the run
    starts that claude, and the spoke does the task."""
    codex, claude = needs("codex"), needs("claude")
    (project / "README.md").write_text("greet\n")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    # The user's interactive shell: the CLIs' folder on PATH.
    monkeypatch.setenv("PATH", os.pathsep.join([*shell_path(), os.environ["PATH"]]))
    assert cli("plan", "--from", "-", "--yes", stdin=SPOKE_PLAN).code == 0
    assert cli("install", "--host", "codex").code == 0
    (temp_home / ".profile").write_text("PATH=/usr/bin:/bin\nexport PATH\n")
    hub = Hub(prelude=[f"cat {project / '.agents/skills/maestro/verbs/run.md'}"])
    spoke = write_then_answer("hello.txt")
    with FakeModel(
        reply=lambda api, body: (spoke if api == "anthropic" else hub)(api, body)
    ) as fake:
        env = {
            **hostenv.claude_env(temp_home, fake.url, shell_path()),
            **hostenv.codex_env(temp_home, fake.url, shell_path()),
        }
        argv = [str(codex), "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access"]
        out = hostenv.run([*argv, "$maestro run"], cwd=project, env=env, timeout=300)
    assert out.code == 0, out.stderr[-2000:]
    assert not any("not installed" in t for r in hub.results for t in _texts(r)), hub.results
    assert any("/v1/messages" in r.path for r in fake.requests)  # the spoke started
    assert statuses(project) == ["done"], (hub.commands, hub.results[-2:])
    assert (project / "hello.txt").read_text() == "hello, world\n"
    assert str(claude.parent) not in _login_path(temp_home)


def _login_path(home: Path) -> str:
    """PATH as a login shell under ``home`` has it (what Codex's commands get)."""
    env = {"HOME": str(home), "PATH": os.pathsep.join(shell_path())}
    return subprocess.run(
        ["bash", "-lc", 'printf %s "$PATH"'], env=env, capture_output=True, text=True, check=True
    ).stdout

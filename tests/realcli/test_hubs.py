"""Every host is a hub: `/maestro:run` (Codex: `$maestro run`) drives a run to its end
from inside the real host, or the host's mode is refused in one line (HOSTS.md section 5).

Runs only with the pinned CLIs installed (MAESTRO_REALCLI_DIR, see test_hosts.py). The
loopback model plays the hub exactly as the installed command file says
(``hubscript.Hub``): it starts and follows the run with the command line the file names
(Claude Code: in the background, reading its answer once told it ended; Codex CLI:
polling it), then runs each `next:` command Maestro prints, as printed, with the shell
tool options the file names, until an answer has none, and sums it up. The plan has
three simulated tasks, so nothing else needs a network. Asserted: every task done, no
call denied, no two calls in a row identical (Gemini stops a model after 5), the host's
own answer came back. One more case has a real claude spoke started from a Codex hub
whose login shell resets PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from maestro.config import load_settings
from maestro.install import invocation
from maestro.state.store import PlanStore

from . import hostenv
from .fake_model import FakeModel
from .hostenv import needs, shell_path
from .hubscript import Hub, codex_prelude, texts
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
# Each simulated task takes this long, so the run outlasts a Codex exec's first yield
# only if something is wrong.
SIM_DELAY = {"MAESTRO_SIM_DELAY": "1.5"}
FULL_ACCESS = "--sandbox danger-full-access"


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
    assert hub.final is not None and hub.final.startswith("FINISHED"), hub.commands
    assert hub.start_at is not None
    assert " run --follow" in hub.commands[hub.start_at]
    follows = hub.commands[hub.start_at + 1 :]
    assert all(" wait --run " in c or c.startswith(("<read", "<poll")) for c in follows), follows
    assert all(
        a != b for a, b in zip(hub.commands, hub.commands[1:], strict=False)
    )  # never one call twice in a row
    assert "finished: 3 done" in hub.results[-1] and "next:" not in hub.results[-1]


def test_claude_code_default_mode_drives_the_run(cli, hub_project, temp_home):
    claude = needs("claude")
    assert cli("install", "--host", "claude").code == 0
    hub = Hub("claude")
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
    hub = Hub("claude", start="maestro run --follow")
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
    hub = Hub("gemini")
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
    hub = Hub("codex", prelude=codex_prelude(project))
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
    assert len(hub.commands) == 2 and hub.commands[1].endswith("run --follow")
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
    hub = Hub("codex", prelude=codex_prelude(project))
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
    assert not any("not installed" in t for r in hub.results for t in texts(r)), hub.results
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

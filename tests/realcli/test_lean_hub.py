"""Each host as the hub, following a run the way its installed `/maestro:run` says, is
woken only for what it must act on: an incident-free run costs it a few turns whatever
its size, and a worker's question reaches it and its answer reaches the worker.

The pinned CLIs run against the loopback model; the hub's model is the scripted
``hubscript.Hub`` (it does what the command file says, with the shell tool options the
file names); a real worker is scripted as in test_office.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from maestro.config import load_settings
from maestro.state.store import PlanStore

from . import hostenv
from .fake_model import FakeModel
from .hostenv import needs
from .hubscript import Hub, codex_prelude, host_argv, hub_env, sim_plan
from .test_office import ANSWER, Spoke

pytestmark = pytest.mark.realcli

HOSTS = ["claude", "gemini", "codex"]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(cli, project: Path, plan: str, host: str) -> None:
    (project / "README.md").write_text("small modules\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    assert cli("plan", "--from", "-", "--yes", stdin=plan).code == 0
    assert cli("install", "--host", host).code == 0


def _drive(host: str, project: Path, home: Path, worker: Spoke | None = None, **env: str) -> Hub:
    exe = needs(host)
    hub = Hub(host, prelude=codex_prelude(project) if host == "codex" else [])

    def reply(api: str, body: object) -> object:
        return hub(api, body) if api == hub.api or worker is None else worker(api, body)

    with FakeModel(reply=reply) as fake:
        out = hostenv.run(
            host_argv(host, exe), cwd=project, env=hub_env(home, fake.url, env), timeout=400
        )
    assert out.code == 0, (out.stderr[-2000:], hub.commands, hub.results[-2:])
    assert hub.final and hub.final.startswith("FINISHED"), (hub.commands, hub.results[-2:])
    return hub


def _statuses(project: Path) -> list[str]:
    return [t.status for t in PlanStore(load_settings(project).paths).load().tasks]


@pytest.mark.parametrize("host", HOSTS)
def test_a_twelve_task_run_ends_done_in_a_few_hub_turns(cli, project, temp_home, host):
    _project(cli, project, sim_plan(12), host)
    hub = _drive(host, project, temp_home)
    assert _statuses(project) == ["done"] * 12, (hub.commands, hub.results[-1][-1500:])
    # After the start: one wait that returns at the run's end, then the summary.
    assert hub.turns_after_start <= 3, hub.commands
    assert "finished: 12 done" in hub.results[-1]
    follows = hub.commands[hub.start_at + 1 :]
    assert all(" wait --run " in c or c.startswith("<poll") for c in follows), follows
    assert len(follows) == len(set(follows))  # never one call twice in a row


@pytest.mark.parametrize(("host", "worker"), [("claude", "gemini"), ("gemini", "codex")])
def test_a_workers_question_reaches_the_hub_and_its_answer_the_worker(
    cli, project, temp_home, host, worker, monkeypatch
):
    needs(worker)
    # The plan's check finds the worker's CLI where the hub's shell will.
    monkeypatch.setenv("PATH", os.pathsep.join([*hostenv.shell_path(), os.environ["PATH"]]))
    _project(cli, project, sim_plan(3, worker=worker), host)
    spoke = Spoke()
    hub = _drive(host, project, temp_home, worker=spoke, MAESTRO_AGENT_TIMEOUT="3")
    assert _statuses(project) == ["done"] * 3, (hub.commands, spoke.turns)
    replies = [c for c in hub.commands if " mail reply " in c]
    assert len(replies) == 1, hub.commands
    # The worker's turn after `maestro mail wait` held the hub's answer.
    assert any(ANSWER.split()[-1] in r or "hello, office" in r for r in spoke.turns[2]), spoke.turns
    assert (project / "hello.txt").read_text() == "hello, office\n"
    assert hub.turns_after_start <= 5, hub.commands


def test_claude_codes_shell_tool_marks_its_commands(cli, project, temp_home):
    """`maestro wait` finds its host by CLAUDECODE=1 in the Bash tool's environment."""
    _project(cli, project, sim_plan(1), "claude")
    claude = needs("claude")
    from .fake_model import ToolCall, tool_results

    def reply(api: str, body: object) -> object:
        done = tool_results(api, body)
        return ToolCall("env") if not done else "ENV: " + json.dumps(done[-1])[:20000]

    with FakeModel(reply=reply) as fake:
        out = hostenv.run(
            [
                str(claude),
                "-p",
                "show env",
                "--output-format",
                "json",
                "--allowedTools",
                "Bash(env)",
            ],
            cwd=project,
            env=hub_env(temp_home, fake.url),
            timeout=120,
        )
    assert "CLAUDECODE=1" in json.loads(out.stdout)["result"]

"""Each host as the hub, following a run the way its installed `/maestro:run` says, is
woken only for what it must act on: an incident-free run costs it a few turns whatever
its size and length, and a worker's question reaches it and its answer reaches the
worker.

The pinned CLIs run against the loopback model; the hub's model is the scripted
``hubscript.Hub`` (it does what the command file says, with the shell tool options the
file names); a real worker is scripted as in test_office.py.

A run longer than each host's shell tool lets one command take (Claude Code's foreground
Bash 600 s, Gemini CLI's 300 s of silence, Codex CLI's 300 s poll) takes about 11
minutes: it runs only with MAESTRO_REALCLI_LONG=1, its hosts at once. CI runs the same
mechanism in a run of about 40 s, Gemini's silence limit set to 10 s.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from maestro.config import load_settings
from maestro.state.store import PlanStore

from . import hostenv
from .fake_model import FakeModel
from .hostenv import needs
from .hubscript import Followed, Hub, codex_prelude, follow_run, host_argv, hub_env, sim_plan
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
    # After the start (which follows the run to its end), the summary; Claude Code ends
    # its turn first and reads the answer when told the command ended.
    assert hub.turns_after_start <= 3, hub.commands
    assert "finished: 12 done" in hub.results[-1]
    follows = hub.commands[hub.start_at + 1 :]
    assert all(" wait --run " in c or c.startswith(("<poll", "<read")) for c in follows), follows
    assert len(follows) == len(set(follows))  # never one call twice in a row


# Read at import: the suite clears MAESTRO_* from each test's environment.
LONG = os.environ.get("MAESTRO_REALCLI_LONG") == "1"
EXEC_YIELD_S, POLL_S = 30, 300  # Codex: the run command's first yield; an empty poll's limit


def fewest_turns(host: str, seconds: float, poll_s: float) -> int:
    """The fewest hub turns after the start each host's tools allow an incident-free run
    of ``seconds``: Claude Code ends its turn, reads the answer once told the command
    ended and sums up; Gemini CLI sums up; Codex CLI polls until the run ends, then sums
    up."""
    if host == "claude":
        return 3
    if host == "gemini":
        return 1
    return math.ceil(max(0.0, seconds - EXEC_YIELD_S) / poll_s) + 1


def _follow_at_once(tmp_path: Path, cases: dict[str, dict], tasks: int, delay_s: int):
    """Each case (a host and the settings its person gave it) follows its own run of
    ``tasks`` simulated tasks of ``delay_s`` seconds, three at once, all cases at once."""
    for case in cases.values():
        needs(case["host"])

    def one(name: str) -> Followed:
        case = cases[name]
        return follow_run(
            case["host"],
            tmp_path / name,
            sim_plan(tasks),
            env={"MAESTRO_SIM_DELAY": str(delay_s)},
            silence_s=case.get("silence_s"),
            poll_ms=case.get("poll_ms"),
            timeout=delay_s * math.ceil(tasks / 3) + 300,
        )

    with ThreadPoolExecutor(len(cases)) as pool:
        return dict(zip(cases, pool.map(one, cases), strict=True))


def _assert_slept(name: str, case: dict, run: Followed, tasks: int) -> None:
    hub = run.hub
    assert run.code == 0, (name, run.stderr[-2000:], hub.commands, hub.results[-1:])
    assert hub.final and hub.final.startswith("FINISHED"), (name, hub.commands)
    statuses = [t.status for t in PlanStore(load_settings(run.project).paths).load().tasks]
    assert statuses == ["done"] * tasks, (name, hub.commands, hub.results[-1][-1500:])
    assert f"finished: {tasks} done" in hub.results[-1], (name, hub.results[-1][-1500:])
    poll_s = (case.get("poll_ms") or POLL_S * 1000) / 1000
    most = fewest_turns(case["host"], run.seconds, poll_s)
    assert hub.turns_after_start <= most, (name, run.seconds, hub.commands)
    if case.get("silence_s"):  # a silence limit shorter than the run: kept waiting
        assert "still waiting (" in hub.results[-1], (name, hub.results[-1][-1500:])


SHORT = {
    "claude": {"host": "claude"},
    "gemini": {"host": "gemini", "silence_s": 10},
    "codex": {"host": "codex"},
}


def test_a_run_that_outlasts_a_silence_limit_and_a_first_yield_costs_the_hub_few_turns(
    tmp_path,
):
    """About 40 s, the three hosts at once: Claude Code's hub runs the start in the
    background and is woken when it ends; Gemini CLI's shell (silence limit 10 s here)
    is kept waiting by the wait's lines; Codex CLI's first yield (30 s) is followed by
    one poll that returns when the run ends."""
    runs = _follow_at_once(tmp_path, SHORT, tasks=3, delay_s=40)
    for name, run in runs.items():
        _assert_slept(name, SHORT[name], run, tasks=3)
    assert [runs[h].hub.turns_after_start for h in ("claude", "gemini", "codex")] == [3, 1, 2]


LONG_CASES = {
    "claude": {"host": "claude"},
    "gemini": {"host": "gemini"},
    "codex": {"host": "codex"},
    "codex-hour-polls": {"host": "codex", "poll_ms": 3_600_000},
}


@pytest.mark.skipif(not LONG, reason="about 11 minutes: set MAESTRO_REALCLI_LONG=1")
def test_a_run_longer_than_each_hosts_shell_limit_costs_the_hub_few_turns(tmp_path):
    """Six tasks of 330 s, three at once: a run of about 11 minutes, longer than Claude
    Code's foreground Bash (600 s), Gemini CLI's silence limit (300 s) and Codex CLI's
    poll (300 s; an hour with background_terminal_max_timeout raised)."""
    runs = _follow_at_once(tmp_path, LONG_CASES, tasks=6, delay_s=330)
    for name, run in runs.items():
        assert run.seconds > 600, (name, run.seconds)
        _assert_slept(name, LONG_CASES[name], run, tasks=6)
    turns = {name: run.hub.turns_after_start for name, run in runs.items()}
    assert turns["claude"] == 3 and turns["gemini"] == 1 and turns["codex-hour-polls"] == 2
    assert "still waiting (" in runs["gemini"].hub.results[-1]


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
    # Claude Code's hub reads each answer once told its background command ended, and
    # ends its turn after starting the next: two turns more than a hub whose shell tool
    # answers in the call (the price of its quiet hour costing 3 turns, not 7).
    assert hub.turns_after_start <= (7 if host == "claude" else 5), hub.commands


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

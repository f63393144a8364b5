"""What following a run costs each host as the hub: turns and input tokens.

Each host (the pinned Claude Code, Gemini CLI and Codex CLI, from $MAESTRO_REALCLI_DIR,
against the loopback fake model) runs `/maestro:run` (Codex: `$maestro run`) as
`maestro install` wrote it, in its documented headless hub mode. Its model is the
scripted hub of tests/realcli/hubscript.py, which does what the command file says: start,
run each `next:` line with the shell tool options the file names, answer a worker's
question with its `answer:` line, poll a Codex command still running, sum up.

Per host and run: the hub's turns after the start (its own model requests after the one
that started the run) and its input tokens per task (cl100k over every request the host
sent after the start, the host's side requests included). Runs: 3 and 12 simulated tasks
(1 s each, 3 at once), and 12 tasks of which one is a real worker of another vendor
that asks the hub a question and waits for the answer. Each in text mode (as the command
files say) and in JSON mode (`--json` added to the start: every answer as JSON), side by
side; and with `wake_interval` 0, every event waking the hub as before the digest.

Goals: at most 3 hub turns after the start for an incident-free run that ends within one
wait, at most 5 with one question, and at most 5,000 input tokens per task at 12 tasks.

Run: MAESTRO_REALCLI_DIR=<npm prefix with the pinned CLIs> python bench/hub.py
     [--hosts claude,gemini,codex] [--runs 3,12,12q]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realcli import hostenv
from tests.realcli.fake_model import FakeModel
from tests.realcli.hubscript import (
    Hub,
    codex_prelude,
    host_argv,
    hub_env,
    sim_plan,
)
from tests.realcli.test_office import Spoke

WORKER = {"claude": "gemini", "gemini": "codex", "codex": "claude"}
GOAL_TURNS, GOAL_TURNS_ASKED, GOAL_PER_TASK = 3, 5, 5_000


def maestro(project: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "maestro", *args],
        cwd=project,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"maestro {' '.join(args)} failed: {done.stderr or done.stdout}")


def one_run(host: str, tasks: int, asked: bool, json_mode: bool, interval: str) -> Hub:
    """One run of ``tasks`` from the host's command line to its last answer."""
    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "proj"
        home.mkdir()
        project.mkdir()
        env = {
            **os.environ,
            "HOME": str(home),
            "PYTHONPATH": str(ROOT),
            "PATH": os.pathsep.join([*hostenv.shell_path(), os.environ["PATH"]]),
        }
        env = {k: v for k, v in env.items() if not k.startswith("MAESTRO_")}
        (project / "README.md").write_text("small modules\n")
        for argv in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"],
        ):
            subprocess.run(argv, cwd=project, check=True, env=env)
        worker = WORKER[host] if asked else None
        maestro(project, env, "plan", "--from", "-", "--yes", stdin=sim_plan(tasks, worker))
        maestro(project, env, "install", "--host", host)
        hub = Hub(host, codex_prelude(project) if host == "codex" else [], json_mode=json_mode)
        spoke = Spoke()

        def reply(api: str, body: object) -> object:
            return hub(api, body) if api == hub.api or not asked else spoke(api, body)

        with FakeModel(reply=reply) as fake:
            extra = {"MAESTRO_WAKE_INTERVAL": interval, "MAESTRO_AGENT_TIMEOUT": "3"}
            run_env = {**hub_env(home, fake.url, extra), "PYTHONPATH": str(ROOT)}
            exe = hostenv.executable(host)
            assert exe is not None
            out = hostenv.run(host_argv(host, exe), cwd=project, env=run_env, timeout=600)
        if out.code != 0 or not (hub.final or "").startswith("FINISHED"):
            print(f"  ({host}: the run did not end as the command file says: exit {out.code})")
        last = hub.results[-1] if hub.results else ""
        if "finished:" not in last and '"status":"finished"' not in last.replace('\\"', '"'):
            print(f"  ({host} {tasks}{'q' if asked else ''}: last answer: {last[-300:]})")
        return hub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="claude,gemini,codex")
    parser.add_argument("--runs", default="3,12,12q", help="task counts; q: one asks")
    args = parser.parse_args()
    if hostenv.cli_dir() is None:
        raise SystemExit("set MAESTRO_REALCLI_DIR to an npm prefix holding the pinned CLIs")
    runs = [(int(r.rstrip("q")), r.endswith("q")) for r in args.runs.split(",")]
    print(f"{'host':8} {'run':5} {'mode':12} {'turns':>5} {'input':>9} {'per task':>9}  goal")
    for host in args.hosts.split(","):
        for tasks, asked in runs:
            for label, json_mode, interval in (
                ("text", False, "300"),
                ("json", True, "300"),
                ("text, every", False, "0"),
            ):
                hub = one_run(host, tasks, asked, json_mode, interval)
                turns, spent = hub.turns_after_start, hub.input_after_start
                goal_turns = GOAL_TURNS_ASKED if asked else GOAL_TURNS
                goals = [f"turns <= {goal_turns}: {'met' if turns <= goal_turns else 'MISSED'}"]
                if tasks == 12 and not asked and label == "text":
                    per = spent / tasks
                    goals.append(
                        f"<= {GOAL_PER_TASK:,}/task: {'met' if per <= GOAL_PER_TASK else 'MISSED'}"
                    )
                name = f"{tasks}{'q' if asked else ''}"
                print(
                    f"{host:8} {name:5} {label:12} {turns:>5} {spent:>9,} {spent // tasks:>9,}  "
                    + ("; ".join(goals) if label != "text, every" else "(every event wakes)"),
                    flush=True,
                )


if __name__ == "__main__":
    main()

"""What following a run costs each host as the hub: turns and input tokens.

Each host (the pinned Claude Code, Gemini CLI and Codex CLI, from $MAESTRO_REALCLI_DIR,
against the loopback fake model) runs `/maestro:run` (Codex: `$maestro run`) as
`maestro install` wrote it, in its documented headless hub mode. Its model is the
scripted hub of tests/realcli/hubscript.py, which does what the command file says: start
and follow the run, run each `next:` line with the shell tool options the file names
(Claude Code: in the background, reading the answer once told it ended), answer a
worker's question with its `answer:` line, poll a Codex command still running, sum up.

Per host and run: the hub's turns after the start (its own model requests after the one
that started the run) and its input tokens, in all and per task (cl100k over every
request the host sent after the start, the host's side requests included). Runs: 3 and
12 simulated tasks (1 s each, 3 at once), and 12 tasks of which one is a real worker of
another vendor that asks the hub a question and waits for the answer; each in text mode
(as the command files say) and in JSON mode (`--json` added to the start). With
`--minutes M` each simulated task takes as long as makes the run last about M minutes,
and only text mode is run. The hosts run at once; Codex as installed (its polls return
within 300 s) and, as `codex+`, with background_terminal_max_timeout at an hour.

Goals: at most 3 hub turns after the start for an incident-free run of any length
(Codex: with its polls at an hour), at most 5 with one question (Claude Code 7: it reads
each answer and ends its turn after each start), and at most 5,000 input tokens per
task at 12 tasks.

Run: MAESTRO_REALCLI_DIR=<npm prefix with the pinned CLIs> python bench/hub.py
     [--hosts claude,gemini,codex,codex+] [--runs 3,12,12q] [--minutes M]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realcli import hostenv
from tests.realcli.hubscript import Followed, Hub, codex_prelude, follow_run, sim_plan
from tests.realcli.test_office import Spoke

WORKER = {"claude": "gemini", "gemini": "codex", "codex": "claude"}
HOUR_POLLS_MS = 3_600_000  # `codex+`: Codex's background_terminal_max_timeout at an hour
GOAL_TURNS, GOAL_PER_TASK = 3, 5_000
GOAL_TURNS_ASKED = {"claude": 7}  # others: 5


def one_run(name: str, tasks: int, asked: bool, json_mode: bool, delay_s: float) -> Followed:
    """One run of ``tasks`` from the host's command line to its last answer."""
    host = name.rstrip("+")
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / "proj"
        hub = Hub(host, codex_prelude(project) if host == "codex" else [], json_mode=json_mode)
        spoke = Spoke() if asked else None
        run = follow_run(
            host,
            Path(scratch),
            sim_plan(tasks, WORKER[host] if asked else None),
            hub=hub,
            worker=spoke,
            # Each task's time limit, in minutes (the coder's is 10), well above its delay.
            env={
                "MAESTRO_SIM_DELAY": f"{delay_s:g}",
                "MAESTRO_AGENT_TIMEOUT": f"{max(3, math.ceil(delay_s * 2 / 60))}",
            },
            poll_ms=HOUR_POLLS_MS if name.endswith("+") else None,
            timeout=delay_s * math.ceil(tasks / 3) + 900,
        )
    if run.code != 0 or not (hub.final or "").startswith("FINISHED"):
        print(f"  ({name}: the run did not end as the command file says: exit {run.code})")
    last = hub.results[-1] if hub.results else ""
    if "finished:" not in last and '"status":"finished"' not in last.replace('\\"', '"'):
        print(f"  ({name} {tasks}{'q' if asked else ''}: last answer: {last[-300:]})")
    return run


def row(name: str, tasks: int, asked: bool, label: str, run: Followed) -> str:
    hub = run.hub
    turns, spent = hub.turns_after_start, hub.input_after_start
    goal_turns = GOAL_TURNS_ASKED.get(name, 5) if asked else GOAL_TURNS
    goals = [f"turns <= {goal_turns}: {'met' if turns <= goal_turns else 'MISSED'}"]
    if tasks == 12 and not asked and label == "text":
        per = spent / tasks
        goals.append(f"<= {GOAL_PER_TASK:,}/task: {'met' if per <= GOAL_PER_TASK else 'MISSED'}")
    run_name = f"{tasks}{'q' if asked else ''}"
    return (
        f"{name:8} {run_name:5} {label:5} {run.seconds / 60:7.1f} {turns:>5} {spent:>9,} "
        f"{spent // tasks:>9,}  " + "; ".join(goals)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="claude,gemini,codex,codex+")
    parser.add_argument("--runs", default="3,12,12q", help="task counts; q: one asks")
    parser.add_argument("--minutes", type=float, help="make each run last about this long")
    args = parser.parse_args()
    if hostenv.cli_dir() is None:
        raise SystemExit("set MAESTRO_REALCLI_DIR to an npm prefix holding the pinned CLIs")
    runs = [(int(r.rstrip("q")), r.endswith("q")) for r in args.runs.split(",")]
    modes = [("text", False)] if args.minutes else [("text", False), ("json", True)]
    names = args.hosts.split(",")
    print(
        f"{'host':8} {'run':5} {'mode':5} {'minutes':>7} {'turns':>5} {'input':>9} {'per task':>9}  goal"
    )
    for tasks, asked in runs:
        delay_s = args.minutes * 60 / math.ceil(tasks / 3) if args.minutes else 1.0
        for label, json_mode in modes:
            with ThreadPoolExecutor(len(names)) as pool:
                follow = partial(
                    one_run, tasks=tasks, asked=asked, json_mode=json_mode, delay_s=delay_s
                )
                done = pool.map(follow, names)
                for name, run in zip(names, done, strict=True):
                    print(row(name, tasks, asked, label, run), flush=True)


if __name__ == "__main__":
    main()

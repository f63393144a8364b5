"""What recon costs each host as the hub during `/maestro:plan`: through its subagent, or
by hand.

Each host (the pinned Claude Code, Gemini CLI and Codex CLI, from $MAESTRO_REALCLI_DIR,
against the loopback fake model) runs `/maestro:plan <goal>` (Codex: `$maestro plan`)
as `maestro install` wrote it, in a fixture repository of about 200 files (a web shop
in Python, tests/realcli/planscript.py). Its model is the scripted planner of
planscript.py: recon, then the steps the command names (the skills, the dry run),
until the plan validates. Recon reads the same things both ways: the tree and twelve files the goal
touches, one tool call each. (a) Through the host's subagent (Claude's Explore, Gemini's
`maestro-recon` through `invoke_agent`, Codex's `maestro-recon` role through
`spawn_agent`), which answers a fixed brief of about 250 tokens; (b) by hand, in the hub
itself.

What the recon reads is as large as in real projects of that size: each kind of file in
the fixture (a source module, a test module, a documentation page, the README,
pyproject.toml, a package's __init__.py) is as large as the mean of its kind in five
public Python projects of 125 to 265 files (httpx, flask, requests, httpie and pipx,
their 2026 default branches; each project's mean, the five averaged:
planscript.REFERENCE_TOKENS). The mean, not the median, because the reads cost their
sum; the twelve files come to about 21,600 tokens as bare text. `--median`: each file
cut to the median size of its kind (planscript.REFERENCE_MEDIAN_TOKENS; the twelve come
to about 12,700).

Per host and way: the hub's own requests (its turns), their input tokens summed from
the start to the validated plan, and its context at the end (the last request: what
every later turn would re-read); the subagent's requests and input tokens separately
(they run on the host's cheaper settings: Claude's Explore on Haiku, Gemini's agent on
`flash`, Codex's role at low reasoning effort). Tokens: cl100k over each request as the
host sent it, each text in it counted as the model reads it (a file's lines, not their
JSON escapes) and the JSON around the texts as sent (planscript.request_tokens); the
fake model's own usage figures are fixed.

Goal: the hub's context at the end of planning at least 40% smaller with the subagent.

Run: MAESTRO_REALCLI_DIR=<npm prefix with the pinned CLIs> python bench/recon.py
     [--hosts claude,gemini,codex] [--median]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hub import maestro
from tests.realcli import hostenv
from tests.realcli.fake_model import FakeModel
from tests.realcli.hubscript import hub_env
from tests.realcli.planscript import DRY_RUN_OK, Planner, fixture_repo
from tests.realcli.test_recon import plan_argv

GOAL_SMALLER = 0.40
# Claude's subagent is built in; Gemini's and Codex's are listed at once from the user
# scope (a project's only after the user's acknowledgement or trust).
SCOPE = {"claude": "project", "gemini": "user", "codex": "user"}
SUBAGENT = {
    "claude": "Explore (Agent tool)",
    "gemini": "maestro-recon (invoke_agent)",
    "codex": "maestro-recon (spawn_agent)",
}


WAYS = (("subagent", True), ("by hand", False))


def one_plan(host: str, subagent: bool, median: bool) -> Planner:
    """One `/maestro:plan` from the host's command line to the validated plan."""
    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "proj"
        home.mkdir()
        project.mkdir()
        fixture_repo(project, median)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MAESTRO_")},
            "HOME": str(home),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "CODEX_HOME": str(home / ".codex"),
            "PYTHONPATH": str(ROOT),
        }
        maestro(project, env, "install", "--host", host, "--scope", SCOPE[host])
        planner = Planner(host, project, subagent=subagent)
        with FakeModel(reply=planner) as fake:
            exe = hostenv.executable(host)
            assert exe is not None
            run_env = {**hub_env(home, fake.url), "PYTHONPATH": str(ROOT)}
            out = hostenv.run(plan_argv(host, exe), cwd=project, env=run_env, timeout=600)
        if out.code != 0 or not any(DRY_RUN_OK in r for r in planner.results):
            last = planner.results[-1][-300:] if planner.results else out.stderr[-300:]
            print(f"  ({host}: the plan did not validate: exit {out.code}; {last})")
        return planner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="claude,gemini,codex")
    parser.add_argument(
        "--median", action="store_true", help="files of the median size of their kind"
    )
    args = parser.parse_args()
    if hostenv.cli_dir() is None:
        raise SystemExit("set MAESTRO_REALCLI_DIR to an npm prefix holding the pinned CLIs")
    with tempfile.TemporaryDirectory() as scratch:
        files = fixture_repo(Path(scratch))
    size = "median" if args.median else "mean"
    print(
        f"/maestro:plan in a fixture repository of {files} files (each of the {size} size of"
        " its kind); cl100k tokens per request."
    )
    print(
        f"{'host':7} {'recon':9} {'hub turns':>9} {'hub input':>10} {'context at end':>14}"
        f" {'added':>7} {'sub turns':>9} {'sub input':>10}"
    )
    for host in args.hosts.split(","):
        rows = {label: one_plan(host, subagent, args.median) for label, subagent in WAYS}
        for label, planner in rows.items():
            hub, sub = planner.of("hub"), planner.of("sub")
            print(
                f"{host:7} {label:9} {len(hub):>9} {sum(hub):>10,} {planner.hub_context:>14,}"
                f" {planner.hub_context - hub[0]:>7,} {len(sub):>9} {sum(sub):>10,}",
                flush=True,
            )
        via, alone = rows["subagent"], rows["by hand"]
        smaller = 1 - via.hub_context / alone.hub_context
        added = 1 - (via.hub_context - via.of("hub")[0]) / (alone.hub_context - alone.of("hub")[0])
        spent = 1 - sum(via.of("hub")) / sum(alone.of("hub"))
        verdict = "met" if smaller >= GOAL_SMALLER else "MISSED"
        print(
            f"{'':7} {SUBAGENT[host]}: the hub's context at the end {smaller:.0%} smaller"
            f" (goal >= {GOAL_SMALLER:.0%}: {verdict}); what planning added to it {added:.0%}"
            f" smaller; the hub's input {spent:.0%} smaller",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""`maestro demo`: a six-task goal, planned and run end to end, offline, its work simulated.

A temporary git project gets a goal (a tiny Python text-utilities package: its package
file, two functions in their own modules, their tests, a usage page and a review) as six
tasks in a diamond of dependencies. The plan goes through `maestro plan --from` exactly
as a hub's would, then the engine runs it with the simulated spoke, up to three tasks at
once, and `maestro status` shows the result. No account, no network.

The work itself is simulated, and the demo says so: the sim spoke writes stand-in files
(each marked as one, not the goal's real code) and answers in the real CLIs' result
format; the plan check, scheduling, worktrees, gates, receipts, log and report are the
engine's own. Without ``keep`` the project is removed at the end with everything in it
(the report is not written): nothing is left in the temporary folder.
"""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from maestro import sandbox
from maestro.config import load_settings
from maestro.engine.run import Engine
from maestro.engine.runcontext import RunOptions
from maestro.errors import MaestroError
from maestro.git import run_git
from maestro.paths import ProjectPaths
from maestro.report import write_report
from maestro.spokes.base import refuse_if_inside_spoke

if TYPE_CHECKING:
    from maestro.engine.run import RunSummary

GOAL = "Add a tiny text-utilities package (textkit) with slugify and word counting, tested and documented"
SIMULATED = (
    "simulated: no AI CLI is called. The built-in sim spoke stands in for them: it writes "
    "stand-in files, each marked as one (not the goal's real code), and answers in their "
    "result format; the plan check, scheduling, gates, receipts and log are Maestro's own."
)
# Where no sandbox can start (a Linux without bubblewrap, a Mac without srt) the demo still
# runs: its plan and checks are the bundled ones above, and nothing in it comes from a model.
UNCONFINED = (
    "unconfined: {why}. The demo's own plan runs anyway; a run of yours is refused here "
    "until you {fix}."
)
SIM_DELAY_S = 0.6  # long enough to see three tasks running at once, short enough for a demo


def plan_yaml(python: str) -> str:
    py = shlex.quote(python)
    return f"""\
version: 1
goal: {GOAL}
hub: sim
tasks:
  - id: 1
    title: Create the textkit package
    specialist: code
    tool: sim
    files: [textkit/__init__.py]
    criteria: ["python -c 'import textkit' exits 0"]
    validation: {py} -c "import textkit"
  - id: 2
    title: Implement slugify in textkit/slug.py
    specialist: code
    tool: sim
    depends: [1]
    files: [textkit/slug.py]
    criteria: ["textkit/slug.py compiles with py_compile"]
    validation: {py} -m py_compile textkit/slug.py
  - id: 3
    title: Implement word counting in textkit/count.py
    specialist: code
    tool: sim
    depends: [1]
    files: [textkit/count.py]
    criteria: ["textkit/count.py compiles with py_compile"]
    validation: {py} -m py_compile textkit/count.py
  - id: 4
    title: Write tests for slugify and word counting
    specialist: test
    tool: sim
    depends: [2, 3]
    files: [tests/test_textkit.py]
    criteria: ["every test function in tests/test_textkit.py passes"]
    validation: {py} -c "import runpy; ns = runpy.run_path('tests/test_textkit.py'); [f() for n, f in sorted(ns.items()) if n.startswith('test_')]"
  - id: 5
    title: Document textkit usage in docs/usage.md
    specialist: code
    agent: technical-writer
    tool: sim
    depends: [2, 3]
    files: [docs/usage.md]
    criteria: ["docs/usage.md exists and is not empty"]
    validation: test -s docs/usage.md
  - id: 6
    title: Review the textkit package
    specialist: review
    tool: sim
    depends: [4, 5]
    criteria: ["the review lists each defect found in textkit with its file"]
"""


def _git(root: Path, *args: str) -> None:
    out = run_git(
        "-c",
        "user.name=Maestro demo",
        "-c",
        "user.email=demo@maestro.invalid",
        *args,
        cwd=root,
        timeout_s=60,
    )
    if out.exit_code != 0:
        raise MaestroError(
            f"`git {args[0]}` failed in the demo project: {out.stderr.strip()[:200]}",
            "check that git works: `git --version`.",
        )


def create_project(root: Path) -> Path:
    """A fresh git project with a README and .gitignore, committed; the plan input beside."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(
        "# textkit\n\nSmall text utilities (a Maestro demo project).\n", encoding="utf-8"
    )
    (root / ".gitignore").write_text("__pycache__/\n*.pyc\n", encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "Start the textkit project")
    plan_input = root.parent / "plan.yaml"
    plan_input.write_text(plan_yaml(sys.executable), encoding="utf-8")
    return plan_input


@dataclass
class DemoOutcome:
    project: Path
    kept: bool
    summary: RunSummary
    status_text: str
    report: Path | None  # None: not written, the project it would be in is removed


def demo_env(env: dict[str, str]) -> dict[str, str]:
    """The environment the demo's commands run with: the caller's, without its MAESTRO_*
    settings, with a fast, visible pace."""
    clean = {k: v for k, v in env.items() if not k.startswith("MAESTRO_")}
    clean.update(
        {
            "MAESTRO_STAGGER_DELAY": "0.1",
            "MAESTRO_MAX_CONCURRENT": "3",
            "MAESTRO_LOG": "summary",
            "MAESTRO_RETRY_BACKOFF": "0",
        }
    )
    return clean


# command(root, env, *argv) -> its text: a maestro command run for the demo project. The
# CLI passes its own (the demo goes through `plan --from` and `status` as a person would);
# the engine does not import the CLI.
Command = Callable[..., str]


def run_demo(
    env: dict[str, str], out: TextIO, *, keep: bool, as_json: bool, command: Command
) -> DemoOutcome:
    refuse_if_inside_spoke(env)
    base = Path(tempfile.mkdtemp(prefix="maestro-demo-"))
    root = base / "textkit"
    try:
        plan_input = create_project(root)
        run_env = {**demo_env(env), "MAESTRO_PROJECT_DIR": str(root)}
        confined, why = sandbox.probe(run_env)
        if confined is None:  # the plan is Maestro's own, not a model's: it runs, and says so
            run_env["MAESTRO_SANDBOX"] = "0"
        settings = load_settings(root, run_env)
        if not as_json:
            kept = "kept: --keep" if keep else "a temporary git repository, removed at the end"
            out.write(f"demo project: {root} ({kept})\ngoal: {GOAL}\n{SIMULATED}\n")
            if confined is None:
                out.write(f"{UNCONFINED.format(why=why, fix=sandbox.FIXES[sandbox.BACKEND])}\n")
            out.write("\n")
        command(root, run_env, "plan", "--from", str(plan_input), "--yes")
        engine = Engine(
            settings,
            env=run_env,
            options=RunOptions(),
            out=out,
            quiet=as_json,
            sim_delay_s=SIM_DELAY_S,
            backoff_s=0.0,
        )
        summary = engine.run()
        status_text = command(root, run_env, "status")
        report = write_report(settings.paths) if keep else None
        return DemoOutcome(root, keep, summary, status_text, report)
    finally:
        if not keep:
            shutil.rmtree(ProjectPaths(root).private_dir, ignore_errors=True)
            shutil.rmtree(base, ignore_errors=True)

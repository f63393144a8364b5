"""`maestro demo`: plan and run a six-task goal offline, its work simulated by the sim spoke."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from maestro.cli import main
from maestro.cli.context import Context, Result
from maestro.cli.run import render_summary
from maestro.demo import run_demo
from maestro.errors import MaestroError

EXAMPLES = """\
  maestro demo              plan and run a 6-task goal in a temporary git project, then remove it
  maestro demo --keep       keep the project and say where it is
  maestro demo --json

Offline, no account, simulated: every task goes to the built-in sim spoke, which writes
stand-in files (each marked as one, not the goal's real code) and answers in the real
result format, so the plan check, gates, receipts, log and report are those of a real
run. Without --keep nothing is left behind, report included. Takes a few seconds."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary project and print its path"
    )


def _command(root: Path, env: dict[str, str], *argv: str) -> str:
    """Run a maestro command in-process for the demo project and return its text."""

    buffer = io.StringIO()
    code = main(
        list(argv), Context(cwd=root, env=env, stdout=buffer, stderr=buffer, stdin=io.StringIO())
    )
    if code != 0:
        raise MaestroError(
            f"`maestro {' '.join(argv[:2])}` failed in the demo project: {buffer.getvalue().strip()[:300]}",
            "report this with the output above.",
        )
    return buffer.getvalue()


def run(args: argparse.Namespace, ctx: Context) -> Result:
    outcome = run_demo(ctx.env, ctx.stdout, keep=args.keep, as_json=ctx.json, command=_command)
    status = outcome.status_text.rstrip()
    if not outcome.kept:  # its next steps are about a project that is gone now
        status = status.split("\nNext:")[0].rstrip()
    lines = ["", render_summary(outcome.summary), "", status, ""]
    if outcome.report is not None:
        lines += [
            f"report: {outcome.report}",
            f"project kept at {outcome.project} (try `cd {outcome.project} && maestro status`)",
        ]
    else:
        lines.append(
            "the temporary project was removed, with everything in it; "
            "`maestro demo --keep` keeps it and its report."
        )
    data = {
        "project": str(outcome.project),
        "kept": outcome.kept,
        "run": outcome.summary.to_dict(),
        "report": str(outcome.report) if outcome.report is not None else None,
    }
    return Result("demo", data, "\n".join(lines), exit_code=outcome.summary.exit_code)

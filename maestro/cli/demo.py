"""`maestro demo`: run a small real goal offline with the simulated spoke."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result

EXAMPLES = """\
  maestro demo              plan and run a 6-task goal in a temporary git project, then remove it
  maestro demo --keep       keep the project and say where it is
  maestro demo --json

Offline, no account: every task goes to the built-in sim spoke, which writes plausible
files and answers in the real result format, so the gates, receipts, log and report are
the same as for a real run. Takes a few seconds."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep", action="store_true", help="keep the temporary project and print its path")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from maestro.cli.run import render_summary
    from maestro.engine.demo import run_demo

    outcome = run_demo(ctx.env, ctx.stdout, keep=args.keep, as_json=ctx.json)
    status = outcome.status_text.rstrip()
    if not outcome.kept:  # its next steps are about a project that is gone now
        status = status.split("\nNext:")[0].rstrip()
    lines = ["", render_summary(outcome.summary), "", status, "", f"report: {outcome.report}"]
    if outcome.kept:
        lines.append(f"project kept at {outcome.project} (try `cd {outcome.project} && maestro status`)")
    else:
        lines.append("the temporary project was removed; `maestro demo --keep` keeps it.")
    data = {
        "project": str(outcome.project),
        "kept": outcome.kept,
        "run": outcome.summary.to_dict(),
        "report": str(outcome.report),
    }
    return Result("demo", data, "\n".join(lines), exit_code=outcome.summary.exit_code)

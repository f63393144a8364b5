"""`maestro report`: the walkthrough of a run, from the execution log and the plan."""

from __future__ import annotations

import argparse
from pathlib import Path

from maestro.cli.context import Context, Result
from maestro.errors import MaestroError
from maestro.report import load_report, render_markdown, report_data, save_report

EXAMPLES = """\
  maestro report                    print the walkthrough (Markdown with Mermaid diagrams)
  maestro report --output report.md write it to a file
  maestro report --brief            summary, failures and recommendations only
  maestro report --json             the figures, for a hub"""

REPORT_HEAD = "# Maestro report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", metavar="FILE", help="write the Markdown report to FILE")
    parser.add_argument(
        "--brief", action="store_true", help="summary, failures and recommendations only"
    )


def _target(ctx: Context, output: str) -> Path:
    path = Path(output).expanduser()
    path = path if path.is_absolute() else ctx.cwd / path
    if path.is_dir():
        raise MaestroError(
            f"--output {output} is a folder.", "name a file, e.g. --output report.md."
        )
    if path.exists():
        try:
            first = path.read_text(encoding="utf-8").split("\n", 1)[0].strip()
        except (OSError, UnicodeDecodeError):
            first = ""
        if first != REPORT_HEAD:
            raise MaestroError(
                f"{path} exists and is not a Maestro report: it is not overwritten.",
                "choose another --output file, or move that one away first.",
            )
    return path


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.output:
        target = _target(ctx, args.output)
        report = load_report(ctx.paths, ctx.settings)
        path = save_report(report, target, brief=args.brief)
        data = report_data(report) | {"output": str(path)}
        lines = [f"Report written to {path}"]
        lines += [f"note: {note}" for note in report.missing]
        return Result("report", data, "\n".join(lines))
    report = load_report(ctx.paths, ctx.settings)
    markdown = render_markdown(report, brief=args.brief)
    return Result("report", report_data(report) | {"markdown": markdown}, markdown)

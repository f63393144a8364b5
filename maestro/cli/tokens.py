"""`maestro tokens`: the tokens Maestro adds to each host, against the notes' budgets."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result
from maestro.cli.install import where
from maestro.install import footprint, invocation
from maestro.install.host import RenderOptions

EXAMPLES = """\
  maestro tokens                 the per-host table
  maestro tokens --check         exit 1 if the stub or a command is over budget
  maestro tokens --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when anything is over its budget"
    )


def run(args: argparse.Namespace, ctx: Context) -> Result:
    opts = RenderOptions(invocation=invocation.resolve(), state_dir=where(ctx).state_dir)
    measured = footprint.measure(opts)
    code = 1 if args.check and measured.problems() else 0
    return Result("tokens", footprint.to_data(measured), footprint.to_text(measured), code)

"""`maestro uninstall`: remove what install wrote, restoring edited files exactly."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result
from maestro.cli.install import add_arguments as _install_arguments
from maestro.cli.install import request, where
from maestro.install import operations

EXAMPLES = """\
  maestro uninstall --host claude                this project's Claude Code commands and stub
  maestro uninstall --host all --scope user      everything installed in your home folder
  maestro uninstall --host codex --dry-run       show what would be removed; change nothing"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _install_arguments(parser)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    # The files to remove come from the manifest, so no executable needs resolving.
    report = operations.uninstall(request(args), where(ctx), "maestro")
    return Result("uninstall", report.to_data(), operations.to_text(report), report.exit_code)

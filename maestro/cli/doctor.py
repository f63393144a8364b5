"""`maestro doctor`: host CLIs and versions, Maestro's installs, known pitfalls with fixes."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result
from maestro.install import doctor

EXAMPLES = """\
  maestro doctor
  maestro doctor --json          for a hub or a script: every check with its level and fix"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options beyond --json


def run(args: argparse.Namespace, ctx: Context) -> Result:
    paths = ctx.paths
    checks = doctor.examine(doctor.situation(paths, ctx.env))
    checks.append(doctor.sandbox_check(ctx.settings, ctx.env))
    checks.append(doctor.forge_check(paths, ctx.settings, dict(ctx.env)))
    checks.append(doctor.price_check(ctx.settings))
    data = doctor.to_data(checks)
    return Result("doctor", data, doctor.to_text(checks), 1 if data["failed"] else 0)

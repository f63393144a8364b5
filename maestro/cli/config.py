"""`maestro config`: each effective setting and where it came from."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result
from maestro.tables import aligned

EXAMPLES = """\
  maestro config
  MAESTRO_MAX_CONCURRENT=6 maestro config --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options beyond --json


def _shown(value: object) -> str:
    return ",".join(value) if isinstance(value, list) else ("-" if value is None else str(value))


def run(args: argparse.Namespace, ctx: Context) -> Result:
    settings = ctx.settings
    rows = settings.as_rows()
    lines = [f"project: {settings.paths.root}", f"config file: {settings.config_file}", ""]
    lines += aligned(
        ("SETTING", "SOURCE", "VALUE"),
        [[row["env"], row["source"], _shown(row["value"])] for row in rows],
    )
    data = {"project": str(settings.paths.root), "settings": rows, "tables": settings.tables}
    return Result("config", data, "\n".join(lines))

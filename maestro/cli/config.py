"""`maestro config`: each effective setting and where it came from."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result

EXAMPLES = """\
  maestro config
  MAESTRO_MAX_CONCURRENT=6 maestro config --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options beyond --json


def run(args: argparse.Namespace, ctx: Context) -> Result:
    settings = ctx.settings
    rows = settings.as_rows()
    width = max(len(r["env"]) for r in rows)
    lines = [f"project: {settings.paths.root}", f"config file: {settings.config_file}", ""]
    for row in rows:
        value = row["value"]
        shown = (
            ",".join(value) if isinstance(value, list) else ("-" if value is None else str(value))
        )
        lines.append(f"{row['env']:<{width}}  {shown:<12}  ({row['source']})")
    data = {"project": str(settings.paths.root), "settings": rows, "tables": settings.tables}
    return Result("config", data, "\n".join(lines))

"""`maestro install`: the slash commands (or Codex skill) and the stub into a host."""

from __future__ import annotations

import argparse
from pathlib import Path

from maestro.cli.context import Context, Result
from maestro.install import invocation, operations
from maestro.install.host import SCOPES, hosts
from maestro.install.operations import Request, Where
from maestro.spokes.registry import detect_available

EXAMPLES = """\
  maestro install --host claude                  commands and stub into this project
  maestro install --host all --scope user        into your home folder, for every project
  maestro install --host codex --dry-run         show what would change; write nothing
The host's own plugin or extension comes from Maestro's repository (docs/hosts.md):
  claude plugin marketplace add REPO && claude plugin install maestro@maestro
  gemini extensions install REPO
  codex plugin marketplace add REPO && codex plugin add maestro@maestro"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", required=True, choices=[*hosts(), "all"], help="the host CLI (all: every one)"
    )
    parser.add_argument(
        "--scope", choices=SCOPES, default="project", help="project (default) or user"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would change; write nothing"
    )


def where(ctx: Context) -> Where:
    paths = ctx.paths
    # The files name the state folder as the project sees it; an absolute one (rare)
    # would put a machine's path into them, so they keep the default name then.
    folder = paths.state_dir_name if not Path(paths.state_dir_name).is_absolute() else ".ai"
    return Where(paths.root, paths.install_manifest, ctx.env, folder)


def request(args: argparse.Namespace) -> Request:
    names = list(hosts()) if args.host == "all" else [args.host]
    return Request(names, args.scope, args.dry_run)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    req = request(args)
    report = operations.install(req, where(ctx), invocation.resolve())
    if not req.dry_run:
        # The user's own shell: record where its spoke CLIs are, for a hub whose shell
        # has another PATH (Codex's login shell).
        detect_available(ctx.env)
    return Result("install", report.to_data(), operations.to_text(report), report.exit_code)

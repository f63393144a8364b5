"""Sub-verbs of a command (`maestro mail send`, `maestro session list`), each taking the
same `--json` as its command, wherever the flag is written."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def verb_adder(
    parser: argparse.ArgumentParser,
) -> Callable[[str, str, str], argparse.ArgumentParser]:
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)

    def verb(name: str, summary: str, example: str) -> argparse.ArgumentParser:
        """A verb; ``example``: its arguments in one real use, shown by its --help."""
        child = verbs.add_parser(
            name,
            help=summary,
            description=summary,
            epilog=f"example:\n  {parser.prog} {name} {example}".rstrip(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        # SUPPRESS: `maestro mail --json inbox` keeps the command's own --json.
        child.add_argument(
            "--json",
            action="store_true",
            default=argparse.SUPPRESS,
            help="print a versioned JSON envelope",
        )
        return child

    return verb

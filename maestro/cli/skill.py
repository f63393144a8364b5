"""`maestro skill [NAME]`: print one of Maestro's on-demand skills.

The skills (decompose, route, validate-result, recover) hold decision logic a hub needs
only at certain steps. They are not installed as host skills, whose descriptions every
session would pay for: the command files tell the hub to run this when a step needs one.
"""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result
from maestro.errors import NotFound
from maestro.install import invocation, text
from maestro.install.sources import ON_DEMAND_SKILLS, load_skill
from maestro.tables import aligned
from maestro.tokens import count_tokens

EXAMPLES = """\
  maestro skill                        list the skills with their size in tokens
  maestro skill maestro-decompose      print one for the hub to follow
  maestro skill recover --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="the skill (the maestro- prefix may be left out)")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if not args.name:
        rows = [
            (s.name, s.description, count_tokens(s.body)) for s in map(load_skill, ON_DEMAND_SKILLS)
        ]
        lines = aligned(
            ("SKILL", "TOKENS", "DESCRIPTION"),
            [[name, f"{tokens:,}", description] for name, description, tokens in rows],
        )
        listing = {"skills": [{"name": n, "description": d, "tokens": t} for n, d, t in rows]}
        return Result("skill", listing, "\n".join(lines))
    name = args.name if args.name.startswith("maestro-") else f"maestro-{args.name}"
    if name not in ON_DEMAND_SKILLS:
        raise NotFound(
            f"there is no Maestro skill {args.name!r}.",
            f"use one of: {', '.join(ON_DEMAND_SKILLS)}.",
        )
    skill = load_skill(name)
    body = text.pin_invocation(skill.body, invocation.resolve())
    data = {
        "name": skill.name,
        "description": skill.description,
        "body": body,
        "tokens": count_tokens(body),
    }
    return Result("skill", data, body)

"""Picking a CLI of another vendor: the challenger of a plan, the reviewer of a task.

Different models have different blind spots, so the second opinion comes from another
vendor than the first: claude's plan goes to gemini, gemini's to codex, codex's to gemini,
each with the remaining one as the fallback (each CLI's ``opinion_rank`` in
``maestro.roster``). With only one CLI installed the second opinion
comes from the same vendor, and the caller says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from maestro import roster
from maestro.errors import SpokeError


@dataclass
class Choice:
    tools: list[str]
    notes: list[str] = field(default_factory=list)


def other_vendors(first: str | None, available: Iterable[str]) -> list[str]:
    """Installed real CLIs other than ``first``, best first."""
    installed = set(available)
    return [cli.name for cli in _by_opinion() if cli.name in installed and cli.name != first]


def _by_opinion() -> list[roster.Cli]:
    """The vendors' CLIs, the one asked first for a second opinion first (the roster's
    ``opinion_rank``; registration order breaks ties)."""
    return sorted(roster.real(), key=lambda cli: cli.opinion_rank)


def choose(
    first: str | None,
    available: Iterable[str],
    *,
    role: str,
    tool: str | None = None,
    every: bool = False,
) -> Choice:
    """The CLI(s) to ask for a second opinion on work by ``first`` (a plan's hub, a
    task's author). ``role`` names the job in messages ("challenger", "reviewer")."""
    real = list(roster.REAL)
    installed = [name for name in real if name in set(available)]
    of = f"the {'plan' if role == 'challenger' else 'task'}'s author ({first})" if first else None
    if tool is not None:
        facts = roster.get(tool)
        if facts is not None and not facts.real:
            # The sim spoke simulates task dispatches; it has no opinion to give, and its
            # answer would only fail the format check round after round.
            raise SpokeError(
                f"the {tool} spoke only simulates task dispatches; it cannot act as the {role}.",
                f"name a real CLI with --tool ({', '.join(real)}).",
            )
        if facts is None:
            raise SpokeError(
                f"unknown CLI {tool!r} for the {role}.",
                f"use one of: {', '.join(real)}.",
            )
        if tool not in installed:
            raise SpokeError(
                f"the {tool} CLI is not installed, so it cannot be the {role}.",
                f"install it with `{facts.install_hint}`, or pick another with --tool"
                + (f" ({', '.join(installed)} installed)." if installed else "."),
            )
        notes = (
            [f"{tool} is the same vendor as {of}: it may share its blind spots."]
            if tool == first and of
            else []
        )
        return Choice([tool], notes)
    if not installed:
        raise SpokeError(
            f"no spoke CLI is installed to act as the {role} ({roster.or_list(real)}).",
            f"install one, e.g. `{_by_opinion()[0].install_hint}`, then run this again.",
        )
    others = other_vendors(first, installed)
    if others:
        return Choice(others if every else others[:1])
    only = installed[0]
    return Choice(
        [only],
        [
            (
                f"only {only} is installed, so the {role} is the same vendor as {of or 'the work'}: "
                f"install another CLI (e.g. `{_suggest(only)}`) for a cross-vendor opinion."
            )
        ],
    )


def _suggest(only: str) -> str:
    """The install command of the CLI that would give ``only``'s work its second opinion."""
    return next(
        (cli.install_hint for cli in _by_opinion() if cli.name != only), "npm install -g <cli>"
    )

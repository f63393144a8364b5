"""Picking a CLI of another vendor: the challenger of a plan, the reviewer of a task.

Different models have different blind spots, so the second opinion comes from another
vendor than the first: claude's plan goes to gemini, gemini's to codex, codex's to gemini,
each with the remaining one as the fallback. With only one CLI installed the second opinion
comes from the same vendor, and the caller says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from maestro.errors import SpokeError

REAL_CLIS = ("claude", "gemini", "codex")
PREFERENCE: dict[str | None, tuple[str, ...]] = {
    "claude": ("gemini", "codex"),
    "gemini": ("codex", "claude"),
    "codex": ("gemini", "claude"),
}
_ANY = ("gemini", "codex", "claude")
INSTALL = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "gemini": "npm install -g @google/gemini-cli",
    "codex": "npm install -g @openai/codex",
}


@dataclass
class Choice:
    tools: list[str]
    notes: list[str] = field(default_factory=list)


def other_vendors(first: str | None, available: Iterable[str]) -> list[str]:
    """Installed real CLIs other than ``first``, best first."""
    installed = set(available)
    return [name for name in PREFERENCE.get(first, _ANY) if name in installed and name != first]


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
    installed = [name for name in REAL_CLIS if name in set(available)]
    of = f"the {'plan' if role == 'challenger' else 'task'}'s author ({first})" if first else None
    if tool is not None:
        if tool == "sim":
            # The sim spoke simulates task dispatches; it has no opinion to give, and its
            # answer would only fail the format check round after round.
            raise SpokeError(
                f"the sim spoke only simulates task dispatches; it cannot act as the {role}.",
                f"name a real CLI with --tool ({', '.join(REAL_CLIS)}).",
            )
        if tool not in REAL_CLIS:
            raise SpokeError(
                f"unknown CLI {tool!r} for the {role}.",
                f"use one of: {', '.join(REAL_CLIS)}.",
            )
        if tool not in installed:
            raise SpokeError(
                f"the {tool} CLI is not installed, so it cannot be the {role}.",
                f"install it with `{INSTALL[tool]}`, or pick another with --tool"
                + (f" ({', '.join(installed)} installed)." if installed else "."),
            )
        notes = [f"{tool} is the same vendor as {of}: it may share its blind spots."] if tool == first and of else []
        return Choice([tool], notes)
    if not installed:
        raise SpokeError(
            f"no spoke CLI is installed to act as the {role} (claude, gemini or codex).",
            "install one, e.g. `" + INSTALL["gemini"] + "`, then run this again.",
        )
    others = other_vendors(first, installed)
    if others:
        return Choice(others if every else others[:1])
    only = installed[0]
    return Choice(
        [only],
        [
            (f"only {only} is installed, so the {role} is the same vendor as {of or 'the work'}: "
             f"install another CLI (e.g. `{INSTALL[PREFERENCE.get(only, _ANY)[0]]}`) for a cross-vendor opinion.")
        ],
    )

"""The canonical sources, in ``maestro/_bundled``: ``commands/<verb>.md``,
``skills/<name>/SKILL.md`` and the hubs' own subagents, ``agents/hub/<name>.md`` (name,
description, instructions; each host's renderer adds its own settings).

A command source is Markdown with frontmatter (``description``, ``argument-hint``, where
``{clis}`` stands for the roster's vendors' CLIs, ``claude|gemini|codex``) and a
body written once for every host. The body may use:

- ``$ARGUMENTS``: the user's arguments (each host's own placeholder is put in its place);
- ``$HUB``: the host's CLI name (``claude``, ``gemini``, ``codex``);
- ``/maestro:<verb>``: another Maestro command (Codex gets ``$maestro <verb>``);
- ``maestro <subcommand>``: a Maestro CLI call (pinned to the installed executable);
- lines starting with a host tag such as ``[claude] `` or ``[gemini,codex] ``: kept,
  without the tag, only for those hosts.
"""

from __future__ import annotations

from dataclasses import dataclass

from maestro import resources, roster
from maestro.errors import InstallError
from maestro.frontmatter import FrontmatterError, split

VERBS = ("plan", "challenge", "run", "review", "status", "report")
# Token budgets of the rendered command bodies (design notes, "Token Budget").
BUDGETS = {"plan": 800, "challenge": 400, "run": 500, "review": 300, "status": 200, "report": 300}
STUB_BUDGET = 50
ON_DEMAND_SKILLS = (
    "maestro-decompose",
    "maestro-route",
    "maestro-validate-result",
    "maestro-recover",
)
ROUTER_SKILL = "maestro"  # Codex has no custom commands: `$maestro <verb>` is one skill
RECON_AGENT = "maestro-recon"  # the read-only subagent `plan` explores through (docs/hosts.md)


@dataclass(frozen=True)
class CommandSource:
    verb: str
    description: str
    argument_hint: str | None
    body: str


@dataclass(frozen=True)
class SkillSource:
    name: str
    description: str
    body: str


def split_frontmatter(text: str, origin: str) -> tuple[dict[str, str], str]:
    """(frontmatter, body) of a source file; the body starts after the closing ``---``."""
    try:
        meta, body = split(text)
    except FrontmatterError as error:
        if error.kind == "missing":
            raise InstallError(
                f"{origin} has no frontmatter.", "start it with a '---' block holding description:."
            ) from None
        if error.kind == "unclosed":
            raise InstallError(
                f"{origin}: its frontmatter is not closed.", "end the block with a '---' line."
            ) from None
        raise InstallError(
            f"{origin}: its frontmatter is not valid YAML (line {error.line}: {error.detail}).",
            "fix the YAML.",
        ) from None
    if not isinstance(meta, dict) or not isinstance(meta.get("description"), str):
        raise InstallError(
            f"{origin}: its frontmatter has no description.", "add description: <one line>."
        )
    return {str(k): str(v) for k, v in meta.items()}, body


def load_command(verb: str) -> CommandSource:
    origin = f"commands/{verb}.md"
    meta, body = split_frontmatter(resources.read_text("commands", f"{verb}.md"), origin)
    hint = meta.get("argument-hint")  # {clis}: the roster's vendors' CLIs
    hint = hint.replace("{clis}", "|".join(roster.REAL)) if hint else hint
    return CommandSource(verb, meta["description"], hint, body)


def load_commands() -> list[CommandSource]:
    return [load_command(verb) for verb in VERBS]


def _load_named(name: str, kind: str, *parts: str) -> SkillSource:
    origin = "/".join((kind, *parts))
    meta, body = split_frontmatter(resources.read_text(kind, *parts), origin)
    return SkillSource(meta.get("name", name), meta["description"], body)


def load_skill(name: str) -> SkillSource:
    return _load_named(name, "skills", name, "SKILL.md")


def load_agent(name: str) -> SkillSource:
    """A hub subagent: like a skill, a name, a description and a body."""
    return _load_named(name, "agents", "hub", f"{name}.md")

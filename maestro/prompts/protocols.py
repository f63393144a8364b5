"""The protocol files in ``maestro/_bundled/protocols/``, filled in for the spoke CLI that will read them.

Persona frontmatter names tools the Gemini way; a spoke on another CLI sees its own tool
names, so a rule like "write files only with your write tool" names the real tool.
"""

from __future__ import annotations

import re

from maestro import roster
from maestro.agents.tiers import WEB_TOOLS, can_shell, can_write
from maestro.resources import read_text

# What each ability is called on each CLI is the roster's ``vocabulary`` (maestro.roster).
# The persona's own tool names, for spokes without a vocabulary of their own (sim).
DEFAULT_VOCABULARY = {
    "read": "read_file, glob and search_file_content",
    "write": "write_file and replace",
    "shell": "run_shell_command",
    "web": "google_web_search",
    "no_shell": "run shell commands (run_shell_command)",
}

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def vocabulary(cli: str | None) -> dict[str, str]:
    facts = roster.get(cli)
    return dict(facts.vocabulary) if facts is not None and facts.vocabulary else DEFAULT_VOCABULARY


def render(name: str, values: dict[str, str]) -> str:
    """Read ``protocols/<name>`` and fill its ``{{key}}`` placeholders."""

    text = read_text("protocols", name)

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"protocols/{name} uses {{{{{key}}}}}, which has no value")
        return values[key]

    return _PLACEHOLDER.sub(fill, text).strip()


def filled(name: str, cli: str | None) -> str:
    """``protocols/<name>`` naming the CLI's own write and shell tools."""
    words = vocabulary(cli)
    return render(name, {"write_tools": words["write"], "shell_tool": words["shell"]})


def tool_restrictions(tier: str, tools: list[str], cli: str | None) -> str:
    words = vocabulary(cli)
    allowed = [f"read and search files ({words['read']})"]
    denied = []
    if can_write(tier):
        allowed.append(f"create and edit files ({words['write']})")
    else:
        denied.append("create, modify or delete any file")
    if can_shell(tier):
        allowed.append(f"run shell commands ({words['shell']})")
    else:
        denied.append(words["no_shell"])
    if set(tools) & set(WEB_TOOLS):
        allowed.append(f"search the web ({words['web']})")
    else:
        denied.append(f"search or fetch from the web ({words['web']})")
    return render(
        "tool-restrictions.md",
        {
            "tier": tier,
            "allowed": "\n".join(f"- {line}" for line in allowed),
            "denied": "\n".join(f"- {line}" for line in denied),
        },
    )

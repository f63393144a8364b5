"""Tool-permission tiers: what an agent may do, derived from the tools it lists.

Tool names are the ones persona frontmatter uses (Gemini CLI's names in the design
notes). A tier is a property of the tool set, never declared separately, so the tier
an agent is dispatched with cannot drift from the tools it was given.
"""

from __future__ import annotations

from collections.abc import Iterable

READ_TOOLS = ("read_file", "glob", "search_file_content")
WRITE_TOOLS = ("write_file", "replace")
SHELL_TOOLS = ("run_shell_command",)
WEB_TOOLS = ("google_web_search",)
TOOLS = READ_TOOLS + WRITE_TOOLS + SHELL_TOOLS + WEB_TOOLS

TIERS = ("read-only", "read+shell", "read+write", "full")
TIER_TOOLS: dict[str, tuple[str, ...]] = {
    "read-only": READ_TOOLS,
    "read+shell": READ_TOOLS + SHELL_TOOLS,
    "read+write": READ_TOOLS + WRITE_TOOLS,
    "full": READ_TOOLS + WRITE_TOOLS + SHELL_TOOLS,
}

# The notes' roster table: the tier each bundled persona must keep. A project agent
# that replaces one of these may narrow its tools, never widen them.
ROSTER: dict[str, str] = {
    "architect": "read-only",
    "api-designer": "read-only",
    "code-reviewer": "read-only",
    "debugger": "read+shell",
    "performance-engineer": "read+shell",
    "security-engineer": "read+shell",
    "refactor": "read+write",
    "technical-writer": "read+write",
    "coder": "full",
    "data-engineer": "full",
    "devops-engineer": "full",
    "tester": "full",
}

# Web search is for research-style analysis only: an agent that can reach the web may
# not also write files or run commands.
WEB_SEARCH_AGENTS = ("architect",)


def tier_of(tools: Iterable[str]) -> str:
    names = set(tools)
    writes = bool(names & set(WRITE_TOOLS))
    shell = bool(names & set(SHELL_TOOLS))
    if writes and shell:
        return "full"
    if writes:
        return "read+write"
    if shell:
        return "read+shell"
    return "read-only"


def can_write(tier: str) -> bool:
    return tier in ("read+write", "full")


def can_shell(tier: str) -> bool:
    return tier in ("read+shell", "full")


def tier_allows(outer: str, inner: str) -> bool:
    """True when every tool of tier ``inner`` is also in tier ``outer``."""
    return set(TIER_TOOLS[inner]) <= set(TIER_TOOLS[outer])

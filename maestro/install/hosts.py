"""One class per host CLI: where its files go and how each canonical source looks there.

HOSTS.md section 3 is the source of these facts (verified against the real CLIs):

- Claude Code: ``.claude/commands/maestro/<verb>.md`` is ``/maestro:<verb>``; CLAUDE.md;
  HTML comments in CLAUDE.md are not shown to the model; a command's description is
  listed to the model every session unless ``disable-model-invocation`` is set.
- Gemini CLI: ``.gemini/commands/maestro/<verb>.toml`` is ``/maestro:<verb>``; GEMINI.md;
  command descriptions are not listed to the model; ``.agents/skills`` are, and so are
  the subagents of ``~/.gemini/agents`` (a project's ``.gemini/agents`` once the user
  acknowledged them).
- Codex CLI: no custom commands; ``$maestro <verb>`` injects the ``maestro`` skill from
  ``.agents/skills`` or ``$CODEX_HOME/skills``; AGENTS.md; subagent roles in
  ``$CODEX_HOME/agents`` (a trusted project's ``.codex/agents``).
"""

from __future__ import annotations

from collections.abc import Mapping

from maestro.errors import InstallError
from maestro.install.host import Host, Sandbox
from maestro.install.host_claude import ClaudeHost
from maestro.install.host_codex import CodexHost
from maestro.install.host_gemini import GeminiHost

HOSTS: dict[str, Host] = {h.name: h for h in (ClaudeHost(), GeminiHost(), CodexHost())}


def hub_sandbox(env: Mapping[str, str]) -> Sandbox | None:
    """The sandbox of the host whose shell tool runs this process, if any."""
    return next((box for box in (h.sandbox(env) for h in HOSTS.values()) if box is not None), None)


def get_host(name: str) -> Host:
    try:
        return HOSTS[name]
    except KeyError:
        raise InstallError(
            f"unknown host {name!r}.", f"use one of: {', '.join(HOSTS)}, all."
        ) from None

"""The least-privilege check of the roster (the notes' validate-agent-permissions).

Rules:
- every agent's tools form exactly one declared tier (web search may be added only to a
  read-only agent named in WEB_SEARCH_AGENTS, or to a read-only project agent);
- the bundled roster is the notes' table: all twelve agents, each in its tier;
- a project agent that replaces a bundled one stays within that agent's tier;
- analysis agents (the read-only roster) never hold write or shell tools.
"""

from __future__ import annotations

from dataclasses import dataclass

from maestro import roster
from maestro.agents.catalog import Agent
from maestro.agents.tiers import (
    ROSTER,
    SHELL_TOOLS,
    TIER_TOOLS,
    WEB_SEARCH_AGENTS,
    WEB_TOOLS,
    WRITE_TOOLS,
    tier_allows,
)


@dataclass(frozen=True)
class PermissionFinding:
    agent: str
    source: str
    problem: str

    def line(self) -> str:
        return f"{self.source}: {self.agent}: {self.problem}"


def _tier_shape(agent: Agent) -> list[str]:
    tools = set(agent.tools)
    tier = agent.tier
    expected = set(TIER_TOOLS[tier])
    problems = []
    extra = sorted(tools - expected - set(WEB_TOOLS))
    missing = sorted(expected - tools)
    if missing or extra:
        # Half a tier (say `replace` without `write_file`) is not a tier anyone declared.
        problems.append(
            f"tools {sorted(tools)} match no declared tier; {tier} is exactly {list(TIER_TOOLS[tier])}"
            + (f" (missing {missing})" if missing else "")
        )
    if tools & set(WEB_TOOLS):
        if tier != "read-only":
            problems.append(
                f"google_web_search is only for read-only agents, and this one is {tier}"
            )
        elif agent.origin == "bundled" and agent.name not in WEB_SEARCH_AGENTS:
            problems.append(f"google_web_search is reserved for {', '.join(WEB_SEARCH_AGENTS)}")
    return problems


def check_permissions(
    agents: dict[str, Agent], bundled: dict[str, Agent]
) -> list[PermissionFinding]:
    findings: list[PermissionFinding] = []

    def add(agent: Agent, problem: str) -> None:
        findings.append(PermissionFinding(agent.name, agent.source, problem))

    for name, expected in ROSTER.items():
        if name not in bundled:
            findings.append(
                PermissionFinding(
                    name, "agents/", f"missing from the bundled roster (tier {expected})"
                )
            )
    for agent in bundled.values():
        if agent.name not in ROSTER:
            add(agent, "bundled agent has no declared tier in the roster table")
        elif agent.tier != ROSTER[agent.name]:
            add(agent, f"is {agent.tier} but the roster declares {ROSTER[agent.name]}")
    project = [agent for agent in agents.values() if agent.origin == "project"]
    for agent in [*bundled.values(), *project]:
        for problem in _tier_shape(agent):
            add(agent, problem)
        declared = ROSTER.get(agent.name)
        if agent.origin == "project" and declared and not tier_allows(declared, agent.tier):
            add(
                agent,
                f"replaces a {declared} agent but is {agent.tier}: a project agent may narrow tools, never widen them",
            )
        if declared == "read-only" and set(agent.tools) & set(WRITE_TOOLS + SHELL_TOOLS):
            add(agent, "is an analysis agent and may not hold write or shell tools")
    return findings


@dataclass(frozen=True)
class TierGap:
    """A tier some agents have that a spoke CLI cannot enforce with its own flags."""

    tool: str
    tier: str
    agents: tuple[str, ...]
    why: str

    def line(self) -> str:
        return f"note: {self.tier} ({', '.join(self.agents)}) on {self.tool}: {self.why}."


def tier_gaps(agents: dict[str, Agent]) -> list[TierGap]:
    """Per spoke CLI, each tier of the roster that the CLI's flags cannot enforce (the
    roster's ``unenforced_tiers``): there only the delegation prompt holds the line."""
    by_tier: dict[str, list[str]] = {}
    for agent in agents.values():
        by_tier.setdefault(agent.tier, []).append(agent.name)
    return [
        TierGap(name, tier, tuple(sorted(by_tier[tier])), why)
        for name, cli in roster.CLIS.items()
        for tier, why in cli.unenforced_tiers.items()
        if by_tier.get(tier)
    ]

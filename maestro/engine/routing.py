"""Which CLI runs a task.

1. ``maestro run --tool CLI`` (this run only; also how a task is reassigned);
2. the task's own ``Tool`` (the plan's explicit choice, design decision DR-6);
3. otherwise the routing rule: the specialist's preferred CLI among those installed,
   skipping the hub (the CLI the plan was made in) whenever another one is installed, so
   the work gets a second vendor's eyes:

   - code, test: codex, claude, gemini (codex's workspace-write sandbox is the strongest
     enforcement for writing work);
   - review, research: gemini, claude, codex (read-only by default headless, and a large
     context for reading a codebase).

   Least privilege comes first: a CLI whose flags cannot enforce the task's tool tier
   goes behind every CLI that can (codex in read+write: its workspace-write sandbox runs
   any shell command; claude and gemini in read+shell: a shell command can write). The
   plan's own Tool or ``--tool`` still wins.

``sim`` is never chosen by the rule: only by ``--tool sim``, a task's ``Tool: sim``, or
the demo.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from maestro import roster
from maestro.errors import MaestroError, SpokeError


def preference(specialist: str | None) -> list[str]:
    """The vendors' CLIs in the specialist's order (each CLI's ``route_rank`` in
    ``maestro.roster``; a specialist a CLI does not rank counts as code)."""
    key = specialist or "code"
    return [
        cli.name
        for cli in sorted(
            roster.real(), key=lambda cli: cli.route_rank.get(key, cli.route_rank.get("code", 99))
        )
    ]


def install_hint() -> str:
    """What to do when no spoke CLI is installed."""
    hints = roster.or_list([cli.install_hint for cli in roster.real()])
    return f"install a spoke CLI ({hints}), or simulate the run with `maestro run --tool sim`."


def route(
    specialist: str | None, installed: Container[str], hub: str | None, tier: str | None = None
) -> str:
    """The rule above, for a task without a Tool; ``tier`` is its agent's tool tier."""
    from maestro.spokes.registry import get_spoke

    candidates = [cli for cli in preference(specialist) if cli in installed]
    if not candidates:
        raise SpokeError(
            f"no spoke CLI is installed ({roster.or_list(list(roster.REAL))}).", install_hint()
        )
    # Stable: within each group the specialist's order stands.
    ranked = sorted(
        candidates,
        key=lambda cli: (tier is not None and not get_spoke(cli).enforces(tier), cli == hub),
    )
    return ranked[0]


def task_tier(catalog: Any, task: Any) -> str | None:
    """The tool tier of the agent a task would run as; None when it names no known agent
    (the AAVSR check before its dispatch says so)."""
    try:
        return str(catalog.for_task(task).tier) if catalog is not None else None
    except MaestroError:
        return None


def choose(
    task_tool: str | None,
    specialist: str | None,
    installed: Container[str],
    hub: str | None,
    override: str | None = None,
    tier: str | None = None,
) -> str:
    if override:
        return override
    if task_tool:
        return task_tool
    return route(specialist, installed, hub, tier)

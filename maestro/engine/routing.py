"""Which CLI runs a task.

1. ``maestro run --tool CLI`` (this run only; also how a task is reassigned);
2. the task's own ``Tool`` (the plan's explicit choice, design decision DR-6);
3. otherwise the routing rule (``maestro.roster.route``, since the plan checks ask it too):
   the specialist's preferred CLI among those installed, skipping the hub (the CLI the plan was made in) whenever another one is installed, so
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
from typing import TYPE_CHECKING

from maestro import roster
from maestro.errors import MaestroError
from maestro.state.model import Task

if TYPE_CHECKING:
    from maestro.agents.catalog import Catalog


def task_tier(catalog: Catalog | None, task: Task) -> str | None:
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
    return roster.route(specialist, installed, hub, tier)

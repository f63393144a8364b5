"""A plan read from an older format brought up to the current one, step by step: fields
read under an older label are marked stale in the layout, so they are written back in
the current form."""

from __future__ import annotations

from maestro import roster
from maestro.errors import PlanError
from maestro.state.markdown.layout import FieldPiece
from maestro.state.model import FORMAT_VERSION, TOOLS, Plan


def upgrade(plan: Plan, version: int, path: str) -> Plan:
    """Bring a plan read from an older format up to FORMAT_VERSION, one step at a time.

    Fields read under an older label are marked stale in the layout, so they are written
    back in the current form; the writer adds the version marker.
    """
    while version < FORMAT_VERSION:
        _UPGRADES[version](plan, path)
        version += 1
    plan.format_version = FORMAT_VERSION
    return plan


def _upgrade_0(plan: Plan, path: str) -> None:
    """Format 0, the design notes' file: no marker, the tool as free text under Assigned."""

    by_display = {cli.display.lower(): cli.name for cli in roster.CLIS.values() if cli.real}
    for task in plan.tasks:
        if task.tool is None:
            continue
        name = task.tool.strip().lower()
        name = by_display.get(name, name)
        if name in ("", "-", "none", "hub"):
            task.tool = None
        elif name in TOOLS:
            task.tool = name
        else:
            line = next(
                (
                    p.line
                    for p in task.layout.pieces
                    if isinstance(p, FieldPiece) and p.name == "tool"
                ),
                task.layout.line,
            )
            raise PlanError(
                f'Task {task.id} is assigned to "{task.tool}", which is not a known tool.',
                f"write `- **Tool:** <name>` with one of {', '.join(TOOLS)}.",
                file=path,
                line=line,
            )


_UPGRADES = {0: _upgrade_0}

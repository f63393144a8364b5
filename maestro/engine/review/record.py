"""One execution-log row per challenger or reviewer dispatch, with tokens and cost.

A row is written when the dispatch has ended, so its Time is the end: the report places
the dispatch on its timeline from ``time - duration`` to ``time``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maestro import clock

if TYPE_CHECKING:
    from maestro.config import Settings
    from maestro.spokes.contract import SpokeResult


def log_row(
    settings: Settings,
    *,
    action: str,
    tool: str | None,
    role: str,
    result: SpokeResult | None,
    ok: bool,
    notes: str,
    task: str | None = None,
    goal: str | None = None,
) -> None:
    """Append a row (nothing at log level off). ``result`` is the SpokeResult, or None when
    no CLI was called (``tool`` None: the row is not a dispatch and not in the Totals)."""
    from maestro.logfile import ExecutionLog, LogRow

    log = ExecutionLog(settings.paths, settings.log)
    if not log.enabled:
        return
    if goal is not None and not log.read().sessions:
        log.start_session(goal, hub=settings.hub)
    log.append(
        LogRow(
            time=clock.iso(),
            actor="Hub",
            action=action,
            target=role,
            tokens=result.usage.total if result is not None else None,
            duration_s=result.duration_s if result is not None else None,
            outcome="✅" if ok else "",
            notes=notes,
            tool=tool,
            failed=not ok,
            cost=result.cost if result is not None else None,
            cost_estimated=bool(result is not None and result.cost_estimated),
            task=task,
        )
    )

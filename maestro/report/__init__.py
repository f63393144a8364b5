"""`maestro report`: the walkthrough of a run, built from the execution log and the plan.

``write_report(paths)`` is what the demo calls; ``load_report`` and ``render_markdown``
serve the command, which may print instead of writing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro.config import load_settings
from maestro.engine.caps import standing
from maestro.engine.pullrequest import pull_request
from maestro.engine.spend import Tally
from maestro.errors import NotFound
from maestro.formatting import shown_path
from maestro.fsutil import atomic_write
from maestro.logfile import ExecutionLog
from maestro.paths import ProjectPaths
from maestro.report.build import Report, build_report
from maestro.report.walkthrough import render_markdown
from maestro.state.store import PlanStore

if TYPE_CHECKING:
    from maestro.config import Settings

__all__ = [
    "Report",
    "build_report",
    "default_output",
    "load_report",
    "render_markdown",
    "report_data",
    "save_report",
    "write_report",
]


def default_output(paths: ProjectPaths) -> Path:
    return paths.machine_dir / "report.md"


def _shown(paths: ProjectPaths, path: Path) -> str:
    return f"`{shown_path(path, paths.root)}`"


def load_report(paths: ProjectPaths, settings: Settings | None = None) -> Report:
    """Read the plan and the log of the project at ``paths`` and build its report."""

    if settings is None:
        settings = load_settings(
            paths.root,
            {"MAESTRO_PROJECT_DIR": str(paths.root), "MAESTRO_STATE_DIR": paths.state_dir_name},
        )
    store = PlanStore(paths)
    plan = store.load() if store.exists() else None
    log = ExecutionLog(paths, "summary").read() if paths.log.is_file() else None
    if plan is None and not (log and log.sessions):
        raise NotFound(
            f"there is nothing to report: no plan at {paths.plan} and no log at {paths.log}.",
            "write a plan with `maestro plan --from FILE` and run it with `maestro run`; "
            "try `maestro demo` to see a report.",
        )
    sources = [
        _shown(paths, p)
        for p, there in ((paths.plan, plan is not None), (paths.log, bool(log and log.sessions)))
        if there
    ]
    return build_report(
        plan,
        log,
        budgets=settings.table("budgets"),
        max_concurrent=settings.max_concurrent,
        sources=sources,
        pull_request=pull_request(paths, plan.goal) if plan is not None else None,
        spend=standing(settings, {t.id: Tally.of_task(t) for t in plan.tasks}) if plan else None,
    )


def save_report(report: Report, target: Path, *, brief: bool = False) -> Path:
    atomic_write(target, render_markdown(report, brief=brief))
    return target


def write_report(paths: ProjectPaths) -> Path:
    """Write the Markdown report to ``.ai/maestro/report.md`` and return its path."""
    return save_report(load_report(paths), default_output(paths))


def _iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def report_data(report: Report) -> dict[str, Any]:
    """The report's figures for ``--json``."""
    timing = report.timing
    return {
        "goal": report.plan.goal,
        "generated": report.generated,
        "sources": [s.strip("`") for s in report.sources],
        "has_plan": report.has_plan,
        "has_log": report.has_log,
        "missing": report.missing,
        "counts": report.plan.counts(),
        "tokens": report.tokens,
        "usage": vars(report.usage) if report.usage else None,
        "cost": round(report.money.cost, 6) if report.money.known else None,
        "cost_estimated": report.money.estimated,
        "spend": report.spend,
        "timing": {
            "start": _iso(timing.start),
            "end": _iso(timing.end),
            "wall_s": timing.wall_s,
            "busy_s": timing.busy_s,
            "task_span_s": timing.task_span_s,
            "critical_path": timing.critical_path,
            "critical_s": timing.critical_s,
        },
        "tasks": [
            {
                "id": f.task.id,
                "title": f.task.title,
                "tool": f.task.tool,
                "status": f.task.status,
                "review": f.task.review,
                "attempts": f.task.attempts,
                "usage": vars(f.usage),
                "cost": f.money.cost if f.money.known else None,
                "cost_estimated": f.money.estimated,
                "review_tokens": f.review_tokens,
                "started": _iso(f.started),
                "finished": _iso(f.finished),
                "duration_s": f.duration_s,
                "waited_s": f.waited_s,
                "queued_s": f.queued_s,
            }
            for f in report.figures
        ],
        "clis": [
            {
                "tool": c.tool,
                "dispatches": c.dispatches,
                "tokens": c.tokens,
                "failures": c.failures,
                "retries": c.retries,
                "cost": c.money.cost if c.money.known else None,
                "cost_estimated": c.money.estimated,
            }
            for c in report.clis
        ],
        "budgets": [
            {
                "what": c.what,
                "tool": c.tool,
                "tokens": c.tokens,
                "level": c.level,
                "average": c.average,
                "budget": c.limits.budget,
                "yellow": c.limits.yellow,
                "abort": c.limits.abort,
            }
            for c in report.checks
        ],
        "resolutions": report.resolutions,
        "recommendations": report.recommendations,
        "diagrams": {
            "flowchart": report.flowchart,
            "gantt": report.gantt,
            "flowchart_note": report.flowchart_note,
            "gantt_note": report.gantt_note,
        },
    }

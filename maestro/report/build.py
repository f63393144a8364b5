"""Everything a report says, gathered once; Markdown and JSON are two views of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from maestro import clock
from maestro.engine.budgets import Limits, limits_for
from maestro.logfile import ParsedLog
from maestro.report import collect, diagrams, story
from maestro.state.model import Plan, Usage


@dataclass
class Report:
    plan: Plan
    has_plan: bool
    has_log: bool
    sources: list[str]
    generated: str
    sessions: int
    rows: int
    figures: list[collect.TaskFigures]
    clis: list[collect.CliFigures]
    checks: list[collect.BudgetCheck]
    timing: collect.Timing
    usage: Usage | None  # None when only the log's totals are known
    tokens: int
    money: collect.Money
    log_steps: list[tuple[str, list[str]]]
    plan_steps: list[str]
    resolutions: list[str]
    recommendations: list[str]
    flowchart: str
    gantt: str | None
    flowchart_note: str | None = None  # set when the graph is drawn coarser than task by task
    gantt_note: str | None = None
    budgets: dict[str, Limits] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    pull_request: dict[str, Any] | None = None  # `maestro run --pr`'s (cli/status.pull_request)
    spend: dict[str, Any] | None = None  # the latest run's against its caps (engine/caps.standing)


def build_report(
    plan: Plan | None,
    log: ParsedLog | None,
    *,
    budgets: Mapping[str, Any] | None = None,
    max_concurrent: int | None = None,
    sources: list[str] | None = None,
    pull_request: dict[str, Any] | None = None,
    spend: dict[str, Any] | None = None,
) -> Report:
    """``plan`` from PlanStore.load() (None: no plan file), ``log`` from ExecutionLog.read()
    (None or empty: logging was off)."""
    budgets = budgets or {}
    log = log or ParsedLog()
    has_plan = plan is not None
    has_log = bool(log.sessions)
    missing = _missing(has_plan, has_log)
    if plan is None:
        plan = Plan(goal=log.sessions[-1].goal if has_log else "-")
    dispatches = collect.place_rows(log)
    figures = collect.task_figures(plan)
    clis = collect.cli_figures(plan, dispatches)
    checks = collect.budget_checks(plan, dispatches, budgets)
    timing = collect.timing(plan, figures, dispatches)
    usage, tokens, money = _spend(plan, has_plan, dispatches)
    graph_text, graph_note = diagrams.dependency_graph(plan.tasks)
    gantt_text, gantt_note = diagrams.timeline(plan.tasks, figures, dispatches)
    tools = sorted({c.tool for c in clis if c.tool})
    return Report(
        plan=plan,
        has_plan=has_plan,
        has_log=has_log,
        sources=sources or [],
        generated=clock.stamp(),
        sessions=len(log.sessions),
        rows=len(log.rows()),
        figures=figures,
        clis=clis,
        checks=checks,
        timing=timing,
        usage=usage,
        tokens=tokens,
        money=money,
        log_steps=story.narrative(log),
        plan_steps=story.plan_narrative(plan, figures),
        resolutions=story.resolutions(plan, dispatches),
        recommendations=story.recommendations(
            plan, figures, clis, checks, dispatches, has_log=has_log, max_concurrent=max_concurrent
        ),
        flowchart=graph_text,
        gantt=gantt_text,
        flowchart_note=graph_note,
        gantt_note=gantt_note,
        budgets={tool: limits_for(tool, budgets) for tool in tools},
        missing=missing,
        pull_request=pull_request,
        spend=spend,
    )


def _missing(has_plan: bool, has_log: bool) -> list[str]:
    """What the report cannot tell, and why."""
    missing = []
    if not has_plan:
        missing.append(
            "No plan file: task states, reviews and challenges are unknown; the report is built "
            "from the log alone."
        )
    if not has_log:
        missing.append(
            "No execution log (logging was off, MAESTRO_LOG=off): the narrative, timeline and budget "
            "checks below come from the plan's own fields (each task's start, finish, attempts and "
            "totals), so single dispatches, failed attempts and per-dispatch tokens are not shown."
        )
    return missing


def _spend(
    plan: Plan, has_plan: bool, dispatches: list[collect.Dispatch]
) -> tuple[Usage | None, int, collect.Money]:
    """(usage, tokens, money): the plan's records; without a plan file, the log's rows
    (which hold no usage split)."""
    if has_plan or not dispatches:
        usage, money = collect.total_money(plan)
        return usage, usage.total, money
    money = collect.Money()
    for item in dispatches:
        money.add(item.row.cost, item.row.cost_estimated)
    return None, sum(d.row.tokens or 0 for d in dispatches), money

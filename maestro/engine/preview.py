"""`maestro run --dry-run`: what each ready task would be sent, and to whom.

Per ready task: the CLI the routing picks, the agent, the argv exactly as the spoke
adapter builds it with the prompt text elided, and the prompt's token count (cl100k).
Nothing is dispatched and nothing is written.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from maestro import graph, planning
from maestro.engine.attempt import make_request
from maestro.engine.budgets import limits_for
from maestro.engine.dispatch import Dispatch
from maestro.engine.routing import choose, task_tier
from maestro.engine.run import select_tasks
from maestro.engine.runcontext import RunOptions
from maestro.engine.rundir import RunLock
from maestro.prompts.delegation import build_delegation
from maestro.sandbox import BWRAP, Rules
from maestro.tokens import count_tokens

if TYPE_CHECKING:
    from maestro.agents.catalog import Catalog
    from maestro.config import Settings
    from maestro.spokes.base import Spoke
    from maestro.state.model import Plan

# An argv element this long, or spanning lines, is prompt text (or a system prompt).
_ELIDE_AT = 120


def elide(argv: list[str]) -> list[str]:
    shown = []
    for arg in argv:
        if len(arg) > _ELIDE_AT or "\n" in arg:
            shown.append(f"<{count_tokens(arg):,} tokens elided>")
        else:
            shown.append(arg)
    return shown


def preview(
    plan: Plan,
    *,
    settings: Settings,
    options: RunOptions,
    installed: Collection[str],
    spoke_for: Callable[[str], Spoke],
    catalog: Catalog,
) -> list[dict[str, Any]]:
    """One row per task that would start (JSON-ready: ``maestro run --dry-run --json``)."""

    paths = settings.paths
    if RunLock(paths).holder() is None:  # no engine alive: `maestro run` recovers these first
        plan = replace(
            plan,
            tasks=[
                replace(t, status="pending") if t.status == "running" else t for t in plan.tasks
            ],
        )
    hub = settings.hub or (plan.source.hub if plan.source else None)
    if options.task_id:
        candidates = select_tasks(plan, options.task_id)
    else:
        candidates = graph.ready(plan.tasks)
    findings = planning.aavsr(plan, catalog=catalog, available=installed, paths=paths)
    unlandable = planning.unlandable(plan, paths)
    rows = []
    for original in candidates:
        task = replace(original)
        if options.task_id == task.id and options.agent:
            task.agent = options.agent
        tool = choose(
            task.tool, task.specialist, installed, hub, options.tool, task_tier(catalog, task)
        )
        task.tool = tool
        agent = catalog.for_task(task)
        resolved = catalog.resolve(agent.name, tool)
        spoke = spoke_for(tool)
        view = replace(plan, tasks=[task if t.id == task.id else t for t in plan.tasks])
        extra = (
            f"Clarification from the user for this task:\n{options.clarify}"
            if options.clarify
            else None
        )
        delegation = build_delegation(
            view,
            task,
            resolved,
            project_root=paths.root,
            tool=tool,
            enforced_by_cli=spoke.enforces(resolved.tier),
            extra_context=extra,
        )
        # Dispatched as a run would, with nothing recorded.
        asked = Dispatch(
            paths,
            {},
            cli=tool,
            kind="",
            subject="",
            message="",
            tier=resolved.tier,
            task=task.id,
            keep_session=True,
            recorded=False,
            # The argv as a confined run gives it (bwrap itself is not tried here).
            sandbox=Rules(BWRAP) if settings.sandbox else None,
        )
        request = make_request(
            asked,
            spoke,
            task,
            delegation,
            resolved,
            root=paths.root,
            abort_tokens=limits_for(tool, settings.table("budgets")).abort,
            scratch_dir=paths.runs_dir / "dry-run" / f"task-{task.id}",
        )
        argv = spoke.build_argv(request)
        errors = [
            f"{f.check}: {f.why}" for f in findings if f.task == task.id and f.level == "error"
        ]
        rows.append(
            {
                "task": task.id,
                "title": task.title,
                "tool": tool,
                "installed": tool in installed,
                "agent": agent.name,
                "tier": resolved.tier,
                "model": resolved.model,
                "timeout_s": request.timeout_s,
                "argv": elide(argv),
                "prompt_tokens": count_tokens(delegation.prompt),
                "system_tokens": count_tokens(delegation.system),
                "aavsr_errors": errors,
                "warnings": [f"{f.why} Fix: {f.remedy}" for f in unlandable if f.task == task.id],
            }
        )
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "dry run: no task is ready to run (nothing pending with its dependencies done)."
    lines = [f"dry run: {len(rows)} ready task(s); nothing dispatched."]
    for row in rows:
        total = row["prompt_tokens"] + row["system_tokens"]
        lines.append(
            f"\nTask {row['task']}: {row['title']}\n"
            f"  cli: {row['tool']}{'' if row['installed'] else ' (NOT INSTALLED)'}   agent: {row['agent']} "
            f"({row['tier']})   model: {row['model'] or 'CLI default'}   timeout: {row['timeout_s']:g}s\n"
            f"  prompt: {row['prompt_tokens']:,} tokens + system {row['system_tokens']:,} = {total:,} tokens\n"
            f"  argv: {' '.join(_quote(a) for a in row['argv'])}"
        )
        for error in row["aavsr_errors"]:
            lines.append(f"  AAVSR error (would block the dispatch): {error}")
        for warning in row["warnings"]:
            lines.append(f"  warning: {warning}")
    return "\n".join(lines)


def _quote(arg: str) -> str:
    return arg if arg.startswith("<") and arg.endswith(" elided>") else shlex.quote(arg)

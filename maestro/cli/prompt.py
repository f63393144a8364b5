"""`maestro prompt TASK_ID [--tool CLI]`: exactly what the task's spoke would receive."""

from __future__ import annotations

import argparse
from typing import Any

from maestro import roster
from maestro.agents.catalog import load_catalog
from maestro.cli.context import Context, Result
from maestro.cli.status import load_plan
from maestro.engine.routing import task_tier
from maestro.errors import SpokeError
from maestro.prompts.delegation import build_delegation
from maestro.spokes.registry import detect_available, get_spoke
from maestro.tokens import count_tokens

EXAMPLES = """\
  maestro prompt 3
  maestro prompt 3 --tool gemini
  maestro prompt 2.1 --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", help="the task's id, as in '### Task 3:'")
    parser.add_argument(
        "--tool", choices=roster.NAMES, help="the spoke CLI (default: the task's Tool)"
    )


def enforced_by(tool: str, tier: str) -> tuple[bool, str]:
    """Whether the spoke CLI enforces ``tier`` itself, and why we think so."""

    if get_spoke(tool).enforces(tier):
        return True, f"{tool} enforces {tier} with its own flags"
    return False, f"{tool} cannot enforce {tier}: the prompt carries the restrictions"


def _routed(ctx: Context, plan: Any, task: Any, catalog: Any) -> str:
    """The CLI `maestro run` would pick for a task without a Tool."""

    hub = ctx.settings.hub or (plan.source.hub if plan.source else None)
    try:
        return roster.route(
            task.specialist, detect_available(ctx.env), hub, task_tier(catalog, task)
        )
    except SpokeError as error:
        # A prompt can be shown for any CLI, installed or not.
        raise SpokeError(
            error.message,
            f"name the CLI: `maestro prompt {task.id} --tool {roster.REAL[0]}` "
            f"(or {', '.join(roster.REAL[1:])}).",
        ) from None


def run(args: argparse.Namespace, ctx: Context) -> Result:
    plan = load_plan(ctx)
    task = plan.task(args.task_id)
    catalog = load_catalog(ctx.settings)
    tool = args.tool or task.tool or _routed(ctx, plan, task, catalog)
    agent = catalog.resolve(catalog.for_task(task).name, tool)
    enforced, why = enforced_by(tool, agent.tier)
    delegation = build_delegation(
        plan, task, agent, project_root=ctx.paths.root, tool=tool, enforced_by_cli=enforced
    )
    tokens = {"system": count_tokens(delegation.system), "prompt": count_tokens(delegation.prompt)}
    tokens["total"] = tokens["system"] + tokens["prompt"]
    model = agent.model or "the CLI's default"
    text = "\n".join(
        [
            f"Task {task.id} -> {agent.name} ({agent.tier}) on {tool}; model: {model}; {why}.",
            f"=== system prompt ({tokens['system']} tokens) ===",
            delegation.system.rstrip("\n"),
            f"=== task prompt ({tokens['prompt']} tokens) ===",
            delegation.prompt.rstrip("\n"),
            f"=== total: {tokens['total']} tokens (cl100k) ===",
        ]
    )
    data = {
        "task": task.id,
        "agent": agent.name,
        "tier": agent.tier,
        "tool": tool,
        "model": agent.model,
        "max_turns": agent.max_turns,
        "timeout_mins": agent.timeout_mins,
        "enforced_by_cli": enforced,
        "system": delegation.system,
        "prompt": delegation.prompt,
        "tokens": tokens,
    }
    return Result("prompt", data, text)

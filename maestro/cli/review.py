"""`maestro review`: another vendor's CLI reviews a finished task, read-only."""

from __future__ import annotations

import argparse
from typing import Any

from maestro import roster
from maestro.challenge import load_plan
from maestro.cli.context import Context, Result
from maestro.engine.preflight import refuse_doomed
from maestro.formatting import money_text
from maestro.review import review_task

EXAMPLES = """\
  maestro review 2                  review Task 2; ask before accepting an approval
  maestro review 2 --auto           accept an approval without asking (hubs, scripts)
  maestro review --tool gemini      every finished, unreviewed task, by gemini"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "task_id",
        nargs="?",
        metavar="TASK_ID",
        help="the task to review (default: every done task not yet approved)",
    )
    parser.add_argument(
        "--tool",
        metavar="CLI",
        choices=roster.NAMES,
        help="the reviewer (default: another vendor than the task's author)",
    )
    parser.add_argument(
        "--auto", action="store_true", help="accept an approved task without asking"
    )


def outcome_data(outcome: Any) -> dict[str, Any]:
    return {
        "task": outcome.task,
        "outcome": outcome.outcome,
        "message": outcome.message,
        "fix": outcome.fix,
        "reviewer": outcome.reviewer,
        "notes": outcome.notes,
        "validation": outcome.validation,
        "reviews": [
            {
                "id": r.id,
                "round": r.round,
                "reviewer": r.reviewer,
                "verdict": r.verdict,
                "outcome": r.outcome,
                "findings": [{"severity": f.severity, "text": f.text} for f in r.findings],
                "tokens": r.usage.total,
                "cost": r.cost,
                "cost_estimated": r.cost_estimated,
            }
            for r in outcome.reviews
        ],
    }


def outcome_text(outcome: Any) -> list[str]:
    lines = [f"note: {note}" for note in outcome.notes]
    for r in outcome.reviews:
        cost = "" if r.cost is None else ", " + money_text(r.cost, r.cost_estimated)
        verdict = r.verdict or "no valid verdict (format failure)"
        lines.append(
            f"Task {r.task} round {r.round} ({r.id}) by {r.reviewer}: {verdict} "
            f"[{r.usage.total:,} tokens{cost}] -> {r.outcome or 'awaiting acceptance'}"
        )
        lines.extend(f"  - {f.severity or 'note'}: {f.text}" for f in r.findings)
    if outcome.validation and not outcome.validation["passed"]:
        tail = outcome.validation["output"].splitlines()[-10:]
        lines.extend(["validation output (last lines):", *(f"  {line}" for line in tail)])
    lines.append(outcome.message)
    if outcome.fix:
        lines.append(f"Fix: {outcome.fix}")
    return lines


def _targets(ctx: Context, task_id: str | None) -> list[str]:
    plan = load_plan(ctx.paths)
    if task_id is not None:
        plan.task(task_id)  # NotFound with the known ids
        return [task_id]
    return [t.id for t in plan.tasks if t.status == "done" and t.review != "approved"]


def run(args: argparse.Namespace, ctx: Context) -> Result:
    targets = _targets(ctx, args.task_id)
    if not targets:
        text = "Nothing to review: no done task is waiting for a review."
        return Result("review", {"outcomes": []}, text)

    refuse_doomed(ctx.paths, ctx.env)  # reviewers are real CLIs: they need the network
    outcomes = [review_task(ctx, task_id, tool=args.tool, auto=args.auto) for task_id in targets]
    lines: list[str] = []
    for outcome in outcomes:
        lines.extend(outcome_text(outcome))
    code = 0 if all(o.exit_code == 0 for o in outcomes) else 1
    return Result(
        "review",
        {"outcomes": [outcome_data(o) for o in outcomes]},
        "\n".join(lines),
        exit_code=code,
    )

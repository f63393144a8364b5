"""`maestro challenge`: another vendor's CLI challenges the plan, read-only."""

from __future__ import annotations

import argparse
from typing import Any

from maestro import roster
from maestro.challenge import run_challenge
from maestro.cli.context import Context, Result
from maestro.engine.preflight import refuse_doomed
from maestro.formatting import money_text
from maestro.state.model import CHALLENGE_CATEGORIES

EXAMPLES = """\
  maestro challenge                 one challenger: another vendor than the plan's hub
  maestro challenge --tool codex    ask codex
  maestro challenge --all --json    every other installed CLI at once, for a hub"""


def next_steps(env: dict[str, str]) -> list[str]:
    """A hub pipes its revised plan in; a person keeps it in a file."""
    source = "-" if roster.hub_of(env) else "<file>"
    return [
        f"revise the plan with the findings and load it with `maestro plan --from {source}`",
        "or proceed as planned with `maestro run`",
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--tool",
        metavar="CLI",
        choices=roster.NAMES,
        help="the challenger (default: another vendor than the plan's hub)",
    )
    group.add_argument(
        "--all",
        action="store_true",
        dest="every",
        help="ask every other installed CLI, in parallel",
    )


def _money(cost: float | None, estimated: bool) -> str:
    text = money_text(cost, estimated, unknown="cost unknown")
    return text + (" (estimate)" if estimated and cost is not None else "")


def finding_text(finding: Any) -> str:
    """'Task 2: text', unless the text already starts by naming its task."""
    if finding.task and not finding.text.startswith(f"Task {finding.task}"):
        return f"Task {finding.task}: {finding.text}"
    return str(finding.text)


def answer_data(answer: Any) -> dict[str, Any]:
    result = answer.result
    challenge = answer.challenge
    data: dict[str, Any] = {
        "tool": answer.tool,
        "ok": answer.ok,
        "error": answer.error,
        "challenge": challenge.id if challenge else None,
        "parsed": challenge.parsed if challenge else None,
        "findings": {
            key: [{"task": f.task, "text": f.text} for f in items]
            for key, items in (challenge.findings.items() if challenge else [])
        },
        "raw": challenge.raw if challenge else None,
        "tokens": result.usage.total if result else 0,
        "usage": vars(result.usage) if result else None,
        "cost": result.cost if result else None,
        "cost_estimated": bool(result and result.cost_estimated),
        "duration_s": round(result.duration_s, 3) if result else None,
    }
    return data


def _answer_text(answer: Any) -> list[str]:
    result = answer.result
    if not answer.ok:
        return [f"{answer.tool}: failed: {answer.error}"]
    challenge = answer.challenge
    head = (
        f"{answer.tool} ({challenge.id}, {result.usage.total:,} tokens, "
        f"{_money(result.cost, result.cost_estimated)}, {result.duration_s:.0f}s):"
    )
    if not challenge.parsed:
        return [
            head,
            (
                "  the answer did not follow the format; it is kept verbatim under "
                f"## Challenges ({challenge.id}) for the hub to read."
            ),
        ]
    if not challenge.findings:
        return [head, "  no findings in any category."]
    lines = [head]
    for key, title in CHALLENGE_CATEGORIES:
        items = challenge.findings.get(key, [])
        if items:
            lines.append(f"  {title}:")
            lines.extend(f"    - {finding_text(f)}" for f in items)
    return lines


def run(args: argparse.Namespace, ctx: Context) -> Result:
    refuse_doomed(ctx.paths, ctx.env)  # challengers are real CLIs: they need the network
    outcome = run_challenge(ctx, tool=args.tool, every=args.every)
    lines: list[str] = [f"note: {note}" for note in outcome.notes]
    for answer in outcome.answers:
        lines.extend(_answer_text(answer))
    if outcome.ok:
        lines.append("")
        lines.append("Next: " + "; ".join(next_steps(ctx.env)) + ".")
    else:
        lines.append(
            "No challenger answered. Fix the error above and run `maestro challenge` again."
        )
    data = {
        "hub": outcome.hub,
        "notes": outcome.notes,
        "prompt_tokens": outcome.prompt_tokens,
        "answers": [answer_data(a) for a in outcome.answers],
        "next": next_steps(ctx.env) if outcome.ok else [],
    }
    return Result("challenge", data, "\n".join(lines), exit_code=0 if outcome.ok else 1)

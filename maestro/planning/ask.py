"""`maestro plan "goal" --hub CLI`: the question a headless CLI gets for the decomposition,
and the plan read from its answer (``cli/plan.py`` sends it through ``engine.dispatch``).

The CLI gets the goal, the decomposition skill, the agents it may name, the installed
CLIs and the plan-input schema, runs read-only (it may look at the project, not change
it), and must answer with the plan as one JSON block. The answer then goes through the
same checks as `--from`. An answer that fails them is kept in the machine folder so the
person can fix it and pipe it in, instead of paying for it again.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from maestro import clock
from maestro.errors import MaestroError, PlanError, SpokeError
from maestro.formatting import shown_path
from maestro.frontmatter import split
from maestro.fsutil import atomic_write
from maestro.planning.loading import load
from maestro.planning.planschema import SCHEMA
from maestro.resources import read_text
from maestro.spokes.contract import SpokeResult
from maestro.state.model import Plan

SYSTEM = (
    "You are the planning hub of Maestro, which dispatches atomic tasks to the Claude, "
    "Gemini and Codex CLIs. Decompose the user's goal into a plan. You may read the "
    "project to ground the plan; do not change any file. Answer with the plan only: one "
    "```json fenced block holding one JSON object that follows the schema you are given."
)
_FENCE = re.compile(r"```[ \t]*(json|ya?ml)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass
class Answer:
    plan: Plan
    tool: str
    tokens: int
    cost: float | None
    cost_estimated: bool
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "tokens": self.tokens,
            "cost": self.cost,
            "cost_estimated": self.cost_estimated,
            "duration_s": round(self.duration_s, 1),
        }


def _skill() -> str:
    """The bundled decomposition skill's body."""
    _, text = split(read_text("skills", "maestro-decompose", "SKILL.md"))
    return text.strip()


def _agents(catalog: Any) -> list[str]:
    lines = []
    for name in catalog.names():
        try:
            agent = catalog.get(name)
        except MaestroError:  # disabled
            continue
        lines.append(f"- {name} ({agent.tier}): {' '.join(agent.description.split())}")
    return lines


def build_prompt(goal: str, *, catalog: Any, installed: list[str]) -> str:
    parts = [f"Goal: {goal}", "", _skill()]
    agents = _agents(catalog)
    if agents:
        parts += [
            "",
            "Agents a task may name in `agent` (tier in brackets decides what it may do):",
            *agents,
        ]
    if installed:
        parts += ["", f"CLIs installed for `tool`: {', '.join(installed)}."]
    parts += [
        "",
        (
            "Answer with the plan only, as one ```json block holding an object that follows this "
            "JSON Schema (paths in `files` relative to the project root):"
        ),
        "```json",
        json.dumps(SCHEMA, indent=1),
        "```",
    ]
    return "\n".join(parts)


def extract(text: str) -> str:
    """The plan inside the answer: the last fenced json/yaml block, else the whole text."""
    blocks = _FENCE.findall(text)
    return blocks[-1][1] if blocks else text


def _fix_for(kind: str | None, tool: str) -> str:
    if kind == "auth":
        return f"log in to {tool} once interactively, then run this again."
    if kind in ("rate_limit", "server", "network", "timeout"):
        return "try again in a while, or ask another CLI with --hub."
    return "ask another CLI with --hub, or write the plan yourself and pipe it: `maestro plan --from -`."


def answer(goal: str, tool: str, result: SpokeResult, settings: Any) -> Answer:
    """The plan in ``tool``'s answer, through the same checks as ``--from``; an answer
    that fails them is kept for the person to fix and pipe in."""
    if not result.success:
        raise SpokeError(
            f"{tool} could not plan the goal ({result.error_kind or 'failed'}): "
            f"{' '.join((result.error or 'no detail').split())[:300]}",
            _fix_for(result.error_kind, tool),
        )
    try:
        plan = load(extract(result.text), name=f"{tool}'s plan")
    except PlanError as exc:
        kept = _keep(settings, tool, result.text)
        raise PlanError(
            exc.message,
            f"{exc.fix.rstrip('.') if exc.fix else 'correct it'} in {kept}, then run "
            f"`maestro plan --from {kept}`; or ask again.",
            line=exc.line,
        ) from None
    plan.goal = goal  # the person's words, not the model's paraphrase
    plan.source = None  # the hub is the CLI asked, whatever the answer claims
    return Answer(
        plan, tool, result.usage.total, result.cost, result.cost_estimated, result.duration_s
    )


def _keep(settings: Any, tool: str, text: str) -> str:
    paths = settings.paths
    path = paths.machine_dir / "plans" / f"{clock.folder_stamp()}-{tool}.txt"
    atomic_write(path, extract(text))
    return shown_path(path, paths.root)

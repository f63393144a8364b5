"""The challenge prompt: the plan summary, the recon context, the answer format."""

from __future__ import annotations

from maestro.challenge.answer import FENCE_INFO
from maestro.state.model import CHALLENGE_CATEGORIES, Plan, Task

SYSTEM = """\
You are a senior engineer from another team, asked to challenge a plan before any work
starts. Different models have different blind spots: find the ones of the model that
wrote this plan. You are read-only. Do not create, edit or delete files and do not run
commands that change anything; read the project's files to check the plan against the
code. Be specific and brief: name the task, the file and the fact. Do not rewrite the
plan and do not do the work."""

EXAMPLES = {
    "assumptions": "Task 2: the plan assumes JWT, but `src/auth/session.py` uses session cookies",
    "missing_dependencies": "Task 3: needs the middleware of Task 2, but does not depend on it",
    "scope": "Task 4: changes three modules and their tests; split it by module",
    "alternatives": "Task 1: extend the existing `utils/retry.py` instead of a new helper",
}


def task_summary(task: Task) -> str:
    lines = [f"### Task {task.id}: {task.title}"]
    facts = [
        f"Specialist: {task.specialist or '-'}",
        f"Tool: {task.tool or '-'}",
        f"Depends: {', '.join(task.depends) or 'none'}",
        f"Status: {task.status}",
    ]
    lines.append("- " + " | ".join(facts))
    if task.files:
        lines.append("- Files: " + ", ".join(f"`{f}`" for f in task.files))
    if task.criteria:
        lines.append("- Criteria:")
        lines.extend(f"  - {criterion}" for criterion in task.criteria)
    if task.validation:
        lines.append(f"- Validation: `{task.validation}`")
    return "\n".join(lines)


def plan_summary(plan: Plan) -> str:
    parts = [f"Goal: {plan.goal.strip()}", ""]
    parts.extend(task_summary(task) for task in plan.tasks)
    return "\n".join(parts)


def answer_format() -> str:
    lines = [f"```{FENCE_INFO}"]
    for key, title in CHALLENGE_CATEGORIES:
        lines.append(f"## {title}")
        lines.append(f"- {EXAMPLES[key]}")
    lines.append("```")
    return "\n".join(lines)


def build_prompt(plan: Plan, recon_text: str) -> str:
    categories = "\n".join(f"- {title}" for _, title in CHALLENGE_CATEGORIES)
    return f"""\
# The plan to challenge

{plan_summary(plan)}

# The project (recon)

{recon_text}

# What to do

Check the plan against this codebase and report, in these four categories:
{categories}

Assumption issues: what the plan takes for granted that the code contradicts. Missing
dependencies: work or ordering a task needs that the plan does not provide. Scope concerns:
tasks too large, too vague, or overlapping. Alternative approaches: a simpler or safer way
the code already offers.

# Answer format

End your answer with this block, the four headings exactly as written, one bullet per
finding. Start a bullet with `Task N:` when it concerns one task. Write `- None` under a
heading with nothing to report.

{answer_format()}
"""

"""The review prompt: the task, its criteria, its receipt and its diff, as text.

The reviewer is told it is not the editor: it reports, the author fixes. Later rounds see
the earlier findings, so a reviewer can say what was settled instead of starting over.
"""

from __future__ import annotations

from maestro.review.verdict import FORMAT_SPEC
from maestro.state.model import Review, Task

SYSTEM = """\
You review another model's work on one task before it is accepted: author and reviewer
are different, as in a human code review. You are read-only. Do not create, edit or delete
files and do not run commands that change anything; read files and run read-only checks
if you need to. You are not the editor: report findings precisely (file, line, what is
wrong, what to do) and let the author fix them. Judge against the task's criteria and
the project's existing patterns, not against your own preferences."""

VERDICT_GUIDE = """\
- approve: the change meets every criterion; at most minor points or notes remain.
- request-changes: specific, actionable changes are needed before it can be accepted.
- flag: a problem the author should not simply patch: a security issue, data loss,
  changes far outside the task's scope, or an approach that cannot work. A person decides.

Severities: critical (breaks something or is unsafe), major (a criterion is not met, or a
real bug), minor (worth fixing, not blocking), note (for information)."""


def _receipt(task: Task) -> list[str]:
    receipt = task.receipt
    if receipt is None:
        return ["(no receipt: the task was not run by `maestro run`)"]
    lines = [
        f"- Diff stat: {receipt.diff_stat or '-'}",
        f"- Files changed: {', '.join(receipt.files_changed) or '-'}",
    ]
    if receipt.validation:
        lines.append(
            f"- Validation at the end of the run: `{receipt.validation}` exited {receipt.validation_exit}"
        )
    if receipt.commit:
        lines.append(f"- Commit of the working tree: {receipt.commit[:12]}")
    return lines


def _earlier(rounds: list[Review]) -> list[str]:
    lines = []
    for review in rounds:
        if review.verdict is None:
            continue
        lines.append(f"Round {review.round} ({review.reviewer}): {review.verdict}")
        lines.extend(f"- {f.severity or 'note'}: {f.text}" for f in review.findings)
    if not lines:
        return []
    return [
        "# Earlier review rounds",
        "",
        *lines,
        "",
        (
            "The author has revised the work since. Say which of these findings are settled. Repeat a "
            "critical or major finding only if it is still there; raise a new one only for a real problem "
            "that the earlier rounds missed, not for a preference."
        ),
        "",
    ]


def build_prompt(task: Task, diff_text: str, validation_note: str, earlier: list[Review]) -> str:
    criteria = [f"- {c}" for c in task.criteria] or [
        "- (none written: judge the title and the result)"
    ]
    parts = [
        f"# Task {task.id}: {task.title}",
        "",
        f"Author: {task.tool or '-'} | Specialist: {task.specialist or '-'} | Files: "
        + (", ".join(f"`{f}`" for f in task.files) or "-"),
        "",
        "## Success criteria",
        *criteria,
        "",
        "## Deterministic checks (run by Maestro before this review)",
        validation_note,
        "",
        "## Receipt",
        *_receipt(task),
        "",
        "## What the author reported",
        task.result or "(nothing)",
        "",
        *_earlier(earlier),
        "## The diff of the task's files",
        "```diff",
        diff_text.rstrip() or "(empty: no change in the task's files)",
        "```",
        "",
        "# Your review",
        "",
        "Check each criterion against the diff and the files, look for bugs, missing tests, unsafe",
        "code and edits outside the task's files. Then give one verdict:",
        VERDICT_GUIDE,
        "",
        FORMAT_SPEC,
    ]
    return "\n".join(parts) + "\n"


def revision_context(review: Review) -> str:
    """What the author's next dispatch is told: the findings to address."""
    # "Review findings" starts the text: the engine keeps it in the prompts of later retries.
    lines = [
        (
            f"Review findings to address (reviewer {review.reviewer}, round {review.round}): the reviewer "
            "requested changes to your work on this task. Address each finding below, keep the rest of "
            "the work as it is, and report again:"
        )
    ]
    lines.extend(f"- {f.severity or 'note'}: {f.text}" for f in review.findings)
    return "\n".join(lines)

"""The two blocks a spoke ends with, as one source of truth.

The delegation prompt shows them (Output Format) and ``results.py`` parses them back,
both from these names, so the template and the parser cannot drift apart.
"""

from __future__ import annotations

SUBMISSION_SECTIONS = ("Status", "Summary", "Changes", "Verification", "Issues")
SUBMISSION_STATUSES = ("success", "partial", "failed", "blocked")

TASK_REPORT = "Task Report"
DOWNSTREAM = "Downstream Context"
TASK_REPORT_FIELDS = (
    "Status",
    "Objective Achieved",
    "Files Created",
    "Files Modified",
    "Files Deleted",
    "Decisions Made",
    "Validation",
    "Validation Output",
    "Errors",
    "Scope Deviations",
)
REPORT_STATUSES = ("success", "partial", "failure")
VALIDATION_RESULTS = ("pass", "fail", "skipped")
DOWNSTREAM_FIELDS = (
    "Key Interfaces Introduced",
    "Patterns Established",
    "Integration Points",
    "Assumptions",
    "Warnings",
)

_SUBMISSION_HINTS = {
    "Status": " | ".join(SUBMISSION_STATUSES),
    "Summary": "[one or two sentences: what now exists, or what you found]",
    "Changes": "- [absolute path]: [created | modified | deleted], [what changed]\n(or: - none)",
    "Verification": "- [x] [criterion]: [how you checked it]\n- [ ] [criterion]: [why it is not met]",
    "Issues": "[blockers, risks, findings, recommendations; or: None]",
}
_REPORT_HINTS = {
    "Status": " | ".join(REPORT_STATUSES),
    "Objective Achieved": "[the task in one sentence, and whether it is done]",
    "Files Created": "[absolute paths, each with its purpose; or none]",
    "Files Modified": "[absolute paths, each with what changed; or none]",
    "Files Deleted": "[absolute paths, each with why; or none]",
    "Decisions Made": "[choices the task left open, and what you chose; or none]",
    "Validation": " | ".join(VALIDATION_RESULTS),
    "Validation Output": "[the validation command's final output; or N/A]",
    "Errors": "[what went wrong and whether it is resolved; or none]",
    "Scope Deviations": "[work left undone or found outside the task; or none]",
}
_DOWNSTREAM_HINTS = {
    "Key Interfaces Introduced": "[signatures and where they live; or none]",
    "Patterns Established": "[conventions later work should follow; or none]",
    "Integration Points": "[files, functions, endpoints where later work connects; or none]",
    "Assumptions": "[things later work should verify; or none]",
    "Warnings": "[gotchas, edge cases, fragile areas; or none]",
}


def output_format() -> str:
    submission = "\n\n".join(
        f"## {name}\n{_SUBMISSION_HINTS[name]}" for name in SUBMISSION_SECTIONS
    )
    report = "\n".join(f"- {name}: {_REPORT_HINTS[name]}" for name in TASK_REPORT_FIELDS)
    downstream = "\n".join(f"- {name}: {_DOWNSTREAM_HINTS[name]}" for name in DOWNSTREAM_FIELDS)
    return (
        "End your final message with the Result Submission and then the Handoff Report, "
        "with these headings exactly, every field filled in:\n\n"
        f"{submission}\n\n### {TASK_REPORT}\n{report}\n\n### {DOWNSTREAM}\n{downstream}"
    )

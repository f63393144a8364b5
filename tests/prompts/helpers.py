"""Helpers the prompt tests import; the fixtures that use them are in conftest.py."""

from __future__ import annotations

from pathlib import Path

from maestro.commands import BY_NAME, CommandSpec
from maestro.state.model import Plan, Task

ROOT = Path("/work/project")  # snapshots need a fixed root; it is never touched


# A frozen command list for snapshots, one command per capability kind, so adding a
# command to the real registry does not rewrite every snapshot. Tests without snapshots
# use the live registry.
PINNED_COMMANDS = (
    CommandSpec(
        "plan",
        "m",
        "Validate a plan and write it.",
        "maestro plan --from <file|-> [--yes]",
        "plan",
        "can_edit_tasks",
        hub_only=True,
    ),
    CommandSpec(
        "run",
        "m",
        "Dispatch ready tasks.",
        "maestro run [<taskId>] [--detach]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "wait",
        "m",
        "Block until the run reports.",
        "maestro wait [--timeout <s>]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "review",
        "m",
        "Review a finished task.",
        "maestro review [<taskId>]",
        "run",
        "can_spawn_sessions",
        hub_only=True,
    ),
    CommandSpec(
        "status",
        "m",
        "Show the plan's state.",
        "maestro status [--json]",
        "plan",
        "can_report_session_level",
    ),
    CommandSpec(
        "report",
        "m",
        "Write the walkthrough.",
        "maestro report [--output <file>]",
        "plan",
        "can_report_session_level",
    ),
    CommandSpec(
        "prompt",
        "m",
        "Print a task's prompt.",
        "maestro prompt <taskId> [--tool <cli>]",
        "plan",
        "can_report_task_level",
    ),
    CommandSpec("agents", "m", "List the agents.", "maestro agents list|show <name>", "plan", None),
    CommandSpec(
        "doctor", "m", "Check the hosts.", "maestro doctor [--json]", "setup", "can_configure"
    ),
    # The office's own entries, for their forms per mode.
    BY_NAME["session"],
    BY_NAME["mail"],
    BY_NAME["task"],
)


def sample_plan() -> Plan:
    """Five tasks: a design, two builds on it (one with no recorded context), tests and docs."""
    return Plan(
        goal="Add rate limiting to the public API",
        tasks=[
            Task(
                "1",
                "Design the rate-limit component",
                status="done",
                specialist="research",
                agent="architect",
                downstream_context=(
                    "- Key Interfaces Introduced: `RateLimiter.allow(key: str) -> bool` in src/limits/limiter.py\n"
                    "- Patterns Established: token bucket per API key\n"
                    "- Integration Points: src/api/middleware.py wraps every route\n"
                    "- Assumptions: Redis is available in production\n"
                    "- Warnings: clock skew between workers"
                ),
            ),
            Task("2", "Add the Redis client wrapper", status="done", specialist="code"),
            Task(
                "3",
                "Implement the limiter & middleware <per key>",
                specialist="code",
                depends=["1", "2"],
                files=["src/limits/limiter.py", "src/api/middleware.py"],
                criteria=["Requests over the limit get HTTP 429", "Limits are read from settings"],
                validation="pytest -q tests/limits",
                risk="high",
            ),
            Task(
                "4",
                "Test the limiter",
                specialist="test",
                depends=["3"],
                files=["tests/limits/test_limiter.py"],
            ),
            Task(
                "5",
                "Document the limits",
                agent="technical-writer",
                depends=["3"],
                files=["docs/limits.md"],
            ),
        ],
    )

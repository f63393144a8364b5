"""Identity and workflow phases for each mode and strategy.

Each of the four modes has its own text; a coordinated mode's reporting duty is written
into its phases rather than left as "if you have a coordinator" conditionals. Commands
are named by their verb only: their exact syntax is in the prompt's commands section.
"""

from __future__ import annotations

from maestro.prompts.manifest import family, is_coordinated

IDENTITY = {
    "worker": (
        "You are an autonomous Maestro agent working alone. Nobody coordinates you: take "
        "your assigned tasks from start to finish, keep their state accurate, and report "
        "the outcome yourself."
    ),
    "coordinator": (
        "You are a Maestro coordinator. You do not implement. You break the goal into "
        "atomic tasks, dispatch them to spoke agents, follow them, recover from failures, "
        "verify the results and close the goal."
    ),
    "coordinated-worker": (
        "You are a worker on a coordinated team. Your coordinator gave you this work and "
        "is waiting for your report: carry out the assigned tasks within their scope and "
        "report back when you finish, when you are blocked, and when something fails."
    ),
    "coordinated-coordinator": (
        "You are a sub-coordinator in a hierarchy. You run your own sub-team the way a "
        "coordinator does, and you answer to a parent coordinator: send it your "
        "progress, your blockers and your final outcome."
    ),
}

Phase = tuple[str, str]


def _worker(strategy: str, coordinated: bool) -> list[Phase]:
    directive = " Read your coordinator's directive first: it overrides defaults." if coordinated else ""
    blocker = (
        " When blocked, stop and report the blocker to your coordinator with what you tried; do not wait for an answer."
        if coordinated
        else " When blocked, record the blocker with what you tried and move on to what you can still do."
    )
    close = (
        "Finish with the Result Submission and Handoff Report: they are your report to your coordinator."
        if coordinated
        else "Finish with the Result Submission and Handoff Report, the record of what you did."
    )
    if strategy == "queue":
        return [
            ("init", "Your tasks form a queue in the order given. Read each one's criteria and reference context." + directive),
            (
                "execute",
                "Take the first unfinished task and work on it alone until it is complete or failed; record "
                "that outcome before taking the next. Never hold two tasks open at once." + blocker,
            ),
            ("complete", "When the queue is empty, report every task's outcome. " + close),
        ]
    if strategy == "tree":
        return [
            ("init", "Read the task tree you own: every task, its dependencies and its criteria." + directive),
            ("plan", "Order the tasks so each comes after the tasks it depends on."),
            (
                "execute",
                "Work through them in that order and report each task's outcome as it finishes. A task whose "
                "dependency failed is blocked: report it, do not attempt it." + blocker,
            ),
            ("complete", "Close with a session-level summary of what finished, failed or is blocked. " + close),
        ]
    return [
        ("init", "Read your task, its success criteria and the reference tasks' context." + directive),
        ("execute", "Do the task within its files, checking each criterion as you meet it." + blocker),
        ("complete", close),
    ]


_DECOMPOSE = {
    "default": "List the tasks in the order they should run.",
    "intelligent-batching": (
        "Group tasks that neither depend on each other nor share a file into batches, and make "
        "each task of a batch depend on the earlier batch tasks it needs, so a batch runs in parallel."
    ),
    "dag": (
        "Express every ordering constraint as a dependency and nothing else: the graph, not the "
        "list order, decides what runs when, and independent branches run in parallel."
    ),
}


def _coordinator(strategy: str, coordinated: bool) -> list[Phase]:
    phases = [
        ("analyze", "Read the goal and the current state with `maestro status`; read enough code to know its shape."),
        (
            "decompose",
            "Split the goal into atomic tasks: one outcome each, testable criteria, the files each owns, "
            "an agent, and dependencies. " + _DECOMPOSE[strategy] + " Write the plan with `maestro plan`.",
        ),
        ("spawn", "Start the run with `maestro run --detach`; Maestro dispatches each task once its dependencies are done."),
        (
            "monitor",
            (
                "Follow the run with `maestro wait`: it blocks until a task finishes, fails or is blocked. "
                "React to each event, then wait again. Do not poll."
            ),
        ),
        (
            "recover",
            (
                "For a failed or blocked task choose one: clarify and retry it (`maestro run` with its id), "
                "reassign it to another agent or CLI by re-planning, mark it blocked and continue, or stop."
            ),
        ),
        ("verify", "Have another vendor review finished work with `maestro review`, and check each criterion against the result."),
        ("complete", "Close with `maestro report`: the outcome, the cost, and what remains."),
    ]
    if coordinated:
        phases.append(
            (
                "report_to_parent",
                (
                    "Report to your parent coordinator at each milestone, at once when blocked, and with "
                    "the final outcome from the report."
                ),
            )
        )
    return phases


def phases(mode: str, strategy: str) -> list[Phase]:
    if family(mode) == "coordinate":
        return _coordinator(strategy, is_coordinated(mode))
    return _worker(strategy, is_coordinated(mode))

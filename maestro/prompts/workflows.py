"""Identity and workflow phases for each mode.

Each of the four modes has its own text; a coordinated mode's reporting duty is written
into its phases rather than left as "if you have a coordinator" conditionals. Commands
are named by their verb only: their exact syntax is in the prompt's commands section.
"""

from __future__ import annotations

from maestro.prompts.sessionmanifest import family, is_coordinated

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


def _reporting(coordinated: bool, office: bool) -> tuple[str, str, str, str]:
    """What a worker adds to its phases to keep in touch: (init, before each step,
    when blocked, at the end). With the office it uses the mail commands; without
    (no shell, or no session), its final answer is its only report."""
    if office:
        to = "your coordinator" if coordinated else "the person who started you"
        ask = (
            " For a question only your coordinator can answer, ask it with `maestro mail send --to-coordinator "
            "--type query` and wait for the answer with `maestro mail wait`; if none comes, decide and record why."
            if coordinated
            else ""
        )
        return (
            " Read the directive, then check your inbox with `maestro mail inbox --unread`."
            + (" The directive overrides defaults." if coordinated else ""),
            " Before each step check your inbox with `maestro mail inbox --unread`: a directive changes your plan, a "
            "critical one at once. After each milestone report it to " + to + " with "
            '`maestro task report progress "<message>"`.',
            ' When blocked, report it at once with `maestro task report blocked "<what blocks you, what you tried>"`.'
            + ask,
            'Report the outcome with `maestro task report complete "<message>"`, then finish',
        )
    directive = (
        " Read your coordinator's directive first: it overrides defaults." if coordinated else ""
    )
    blocker = (
        " When blocked, stop and report the blocker to your coordinator with what you tried; do not wait for an answer."
        if coordinated
        else " When blocked, record the blocker with what you tried and move on to what you can still do."
    )
    return directive, "", blocker, "Finish"


def _worker(coordinated: bool, office: bool) -> list[Phase]:
    directive, step, blocker, finish = _reporting(coordinated, office)
    close = (
        f"{finish} with the Result Submission and Handoff Report: they are your report to your coordinator."
        if coordinated
        else f"{finish} with the Result Submission and Handoff Report, the record of what you did."
    )
    return [
        (
            "init",
            "Read your task, its success criteria and the reference tasks' context." + directive,
        ),
        (
            "execute",
            "Do the task within its files, checking each criterion as you meet it."
            + step
            + blocker,
        ),
        ("complete", close),
    ]


_DECOMPOSE = "List the tasks in the order they should run."


def _sub_coordinator(office: bool) -> list[Phase]:
    """A coordinating task's spoke: it splits its one task into subtasks that the run
    dispatches as its workers. It never plans or runs: the hub does (Maestro refuses a
    run started inside a spoke)."""
    wait = (
        "Follow them with `maestro mail wait`: it returns when one of your workers reports, asks or is "
        "blocked. React, then wait again, until each subtask has reported complete. Do not poll."
        if office
        else "Follow them through `maestro status`."
    )
    return [
        (
            "analyze",
            (
                "Read your task, its files and criteria, the reference tasks' context, and enough code to know its shape."
                " Read your coordinator's directive first: it overrides defaults."
            ),
        ),
        (
            "decompose",
            "Split your task into atomic subtasks: one outcome each, testable criteria, files within your task's, "
            "and the subtasks each waits for. " + _DECOMPOSE,
        ),
        (
            "spawn",
            (
                "Create each with `maestro task spawn`, a subtask after the ones it depends on; Maestro dispatches "
                "each as your worker once its dependencies are done. You cannot start a run yourself."
            ),
        ),
        ("monitor", wait),
        *(
            [
                (
                    "answer",
                    (
                        "Answer a worker's question with the `maestro mail reply` line it ends with, and redirect a "
                        "worker with `maestro mail send --to <id> --type directive`."
                    ),
                )
            ]
            if office
            else []
        ),
        (
            "recover",
            (
                "For a failed or blocked subtask: unblock it with an answer or a directive, spawn a corrected "
                "subtask, or report the blocker to your parent coordinator."
            ),
        ),
        (
            "verify",
            "Check each subtask's result against its criteria (`maestro status`), and your task's criteria against the whole.",
        ),
        (
            "complete",
            "Your task ends when its subtasks have: finish with the Result Submission and Handoff Report, covering them.",
        ),
    ]


def _coordinator(coordinated: bool, office: bool) -> list[Phase]:
    if coordinated:
        phases = _sub_coordinator(office)
        report = (
            ' with `maestro task report progress|blocked|complete "<message>"`' if office else ""
        )
        phases.insert(
            -1,
            (
                "report_to_parent",
                "Report to your parent coordinator"
                + report
                + " at each milestone, at once when blocked, and with the final outcome.",
            ),
        )
        return phases
    phases = [
        (
            "analyze",
            "Read the goal and the current state with `maestro status`; read enough code to know its shape.",
        ),
        (
            "decompose",
            "Split the goal into atomic tasks: one outcome each, testable criteria, the files each owns, "
            "an agent, and dependencies. " + _DECOMPOSE + " Write the plan with `maestro plan`.",
        ),
        (
            "spawn",
            "Start the run with `maestro run --detach`; Maestro dispatches each task once its dependencies are done.",
        ),
        (
            "monitor",
            (
                "Follow the run with `maestro wait`: it blocks until a task finishes, fails or is blocked, or a "
                "worker asks a question. React to each event, then wait again. Do not poll."
            ),
        ),
        (
            "recover",
            (
                "For a failed or blocked task choose one: clarify and retry it (`maestro run` with its id), "
                "reassign it to another agent or CLI by re-planning, mark it blocked and continue, or stop."
            ),
        ),
        (
            "verify",
            "Have another vendor review finished work with `maestro review`, and check each criterion against the result.",
        ),
        ("complete", "Close with `maestro report`: the outcome, the cost, and what remains."),
    ]
    if office:
        phases.insert(
            4,
            (
                "answer",
                (
                    "Your workers' questions and blockers come as mail: answer each with the `maestro mail reply` line "
                    "it ends with, redirect a worker with `maestro mail send --to <id> --type directive`, and between "
                    "runs wait for mail with `maestro mail wait`, never a polling loop."
                ),
            ),
        )
    return phases


def phases(mode: str, *, office: bool = False) -> list[Phase]:
    """``office``: the session can use the mail commands (a session id and a shell)."""
    if family(mode) == "coordinate":
        return _coordinator(is_coordinated(mode), office)
    return _worker(is_coordinated(mode), office)

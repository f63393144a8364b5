"""Identity and workflow phases of a dispatched spoke's mode.

A spoke is always a coordinated mode (a coordinated worker, or a coordinated coordinator
for a task with ``Mode: coordinate``): the two modes a person's session has, ``worker``
and ``coordinator``, are never given a prompt. The reporting duty is written into the
phases. Commands are named by their verb only: their exact syntax is in the prompt's
commands section.
"""

from __future__ import annotations

from maestro.prompts.sessionmanifest import family

IDENTITY = {
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


def _reporting(office: bool) -> tuple[str, str, str, str]:
    """What a worker adds to its phases to keep in touch: (init, before each step,
    when blocked, at the end). With the office it uses the mail commands; without
    (no shell, or no session), its final answer is its only report."""
    if office:
        return (
            (
                " Read the directive, then check your inbox with `maestro mail inbox --unread`."
                " The directive overrides defaults."
            ),
            (
                " Before each step check your inbox with `maestro mail inbox --unread`: a directive changes your plan, a "
                "critical one at once. After each milestone report it to your coordinator with "
                '`maestro task report progress "<message>"`.'
            ),
            (
                ' When blocked, report it at once with `maestro task report blocked "<what blocks you, what you tried>"`.'
                " For a question only your coordinator can answer, ask it with `maestro mail send --to-coordinator "
                "--type query` and wait for the answer with `maestro mail wait`; if none comes, decide and record why."
            ),
            'Report the outcome with `maestro task report complete "<message>"`, then finish',
        )
    return (
        " Read your coordinator's directive first: it overrides defaults.",
        "",
        " When blocked, stop and report the blocker to your coordinator with what you tried; do not wait for an answer.",
        "Finish",
    )


def _worker(office: bool) -> list[Phase]:
    directive, step, blocker, finish = _reporting(office)
    close = f"{finish} with the Result Submission and Handoff Report: they are your report to your coordinator."
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


def _coordinator(office: bool) -> list[Phase]:
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
            (
                "Split your task into atomic subtasks: one outcome each, testable criteria, files within your task's, "
                "and the subtasks each waits for. List the tasks in the order they should run."
            ),
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
            "report_to_parent",
            "Report to your parent coordinator"
            + (
                ' with `maestro task report progress|blocked|complete "<message>"`'
                if office
                else ""
            )
            + " at each milestone, at once when blocked, and with the final outcome.",
        ),
        (
            "complete",
            "Your task ends when its subtasks have: finish with the Result Submission and Handoff Report, covering them.",
        ),
    ]


def phases(mode: str, *, office: bool = False) -> list[Phase]:
    """``office``: the session can use the mail commands (a session id and a shell)."""
    return _coordinator(office) if family(mode) == "coordinate" else _worker(office)

"""The retry ladder (design notes, "Failure Handling"), decided in code.

1. Immediate retry: a transient failure (rate limit, 5xx, network, a timeout without a
   complete result) is retried at once, after an exponential backoff.
2. Context expansion: a failed quality gate (and a turn limit or an unexplained error) is
   retried with the failure and the relevant files' contents added to the prompt.
3. Task decomposition: when retries are used up, the task is marked blocked, "needs
   decomposition": it is too big or too vague for one dispatch.
4. Escalate to the user: a `decision` event with the notes' four options.

``max_retries`` (retries after the first attempt) caps the ladder. Some failures skip
it: a scope violation fails at once (retrying would edit the same files again); auth, a
flag the CLI rejects, an untrusted folder and a fault of the sandbox fail at once with
their fix (retrying cannot help); a dispatch stopped over its token abort threshold
blocks at once, and so does a task that fails an AAVSR check right before its dispatch
(it is never sent).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from maestro import roster

# Kinds of failure, by what the ladder does with them.
TRANSIENT = "transient"
GATE = "gate"
SCOPE = "scope"
FATAL = "fatal"
OVER_BUDGET = "over_budget"
PRECONDITION = "precondition"  # AAVSR refused the dispatch
STOPPED = "stopped"  # `maestro session stop`: a person or a coordinator ended the attempt
SUBTASKS = "subtasks"  # a coordinating task whose subtasks are not all done

NEEDS_DECOMPOSITION = "needs decomposition"

_FATAL_FIX: dict[str, str | None] = {
    "auth": "log in to {tool} (run `{tool}` once in a terminal) or set its API key, then `maestro run` again.",
    "bad_flag": "the installed {tool} rejected Maestro's command line; check its version with `maestro doctor` and upgrade it.",
    "untrusted_folder": "trust this folder in {tool}{trust}, then `maestro run` again.",
    "sandbox": None,  # its error names its fix (sandbox.fault)
}


@dataclass(frozen=True)
class Failure:
    kind: str  # TRANSIENT | GATE | SCOPE | FATAL | OVER_BUDGET
    reason: str  # one line, for the plan, the log and events
    fix: str | None = None
    context: str | None = None  # what to tell the next attempt (context expansion)


@dataclass(frozen=True)
class Step:
    action: str  # retry | retry_with_context | fail | block
    reason: str
    delay_s: float = 0.0


def spoke_failure(result: object, tool: str) -> Failure | None:
    """Classify an unsuccessful spoke result; None when the spoke call succeeded."""
    if getattr(result, "success", False):
        return None
    kind = getattr(result, "error_kind", None) or "other"
    error = " ".join(str(getattr(result, "error", "") or "no error text").split())
    if kind in _FATAL_FIX:
        cli = roster.get(tool)
        trust = f" ({cli.trust_hint})" if cli and cli.trust_hint else ""
        fix = _FATAL_FIX[kind]
        fix = fix.format(tool=tool, trust=trust) if fix else None
        return Failure(FATAL, f"{tool}: {kind.replace('_', ' ')}: {error}", fix)
    if kind == "over_budget" or getattr(result, "aborted_over_budget", False):
        return Failure(OVER_BUDGET, f"{tool}: stopped over its token abort threshold: {error}")
    if getattr(result, "transient", False):
        return Failure(TRANSIENT, f"{tool}: {kind.replace('_', ' ')}: {error}")
    if kind == "turn_limit":
        return Failure(
            GATE,
            f"{tool}: turn limit reached before the task was finished",
            context="The previous attempt ran out of turns before finishing. Make the smallest "
            "change that meets the criteria first, then verify; do not explore beyond the task's files.",
        )
    return Failure(
        GATE,
        f"{tool}: {kind.replace('_', ' ')}: {error}",
        context=f"The previous attempt failed: {error}",
    )


def next_step(
    failure: Failure, *, attempts: int, max_retries: int, transient_retries: int, backoff_s: float
) -> Step:
    """What to do after ``attempts`` attempts (this run) ended in ``failure``."""
    if failure.kind == FATAL:
        return Step("fail", failure.reason)
    if failure.kind == SCOPE:
        return Step("fail", failure.reason)
    if failure.kind == OVER_BUDGET:
        return Step("block", f"{NEEDS_DECOMPOSITION}: {failure.reason}")
    if failure.kind == STOPPED:
        return Step("block", failure.reason)  # never retried: someone chose to end it
    if failure.kind == SUBTASKS:
        return Step("block", failure.reason)  # never retried: it would spawn them again
    if failure.kind == PRECONDITION:
        return Step("block", f"not dispatched: {failure.reason}")
    retries_left = attempts <= max_retries
    if failure.kind == TRANSIENT:
        if retries_left:
            return Step("retry", failure.reason, backoff_s * (2**transient_retries))
        return Step("fail", f"{failure.reason} (still failing after {attempts} attempts)")
    if retries_left:
        return Step("retry_with_context", failure.reason)
    return Step("block", f"{NEEDS_DECOMPOSITION}: {failure.reason} (after {attempts} attempts)")


def decision_options(task_id: str, available: Collection[str]) -> list[dict[str, str]]:
    """The notes' four options for a task that failed or is blocked, as commands; a
    reassignment names only the vendors' CLIs installed here (``available``)."""
    tools = [name for name in roster.REAL if name in available]
    choice = tools[0] if len(tools) == 1 else f"<{'|'.join(tools)}>"
    reassign = f" --tool {choice}" if tools else ""
    return [
        {
            "option": "1",
            "label": "Provide clarification and retry",
            "command": f'maestro run {task_id} --clarify "<what the task needs to know>"',
        },
        {
            "option": "2",
            "label": "Reassign to a different specialist" + (" or CLI" if tools else ""),
            "command": f"maestro run {task_id}{reassign} [--agent <name>]",
        },
        {"option": "3", "label": "Mark as blocked and continue", "command": "maestro run"},
        {"option": "4", "label": "Abort orchestration", "command": "maestro run --abort"},
    ]


def decision_text(options: list[dict[str, str]]) -> str:
    return "Options: " + "; ".join(
        f"{o['option']}) {o['label'].lower()}: `{o['command']}`" for o in options
    )

"""One attempt at a task: its evidence, the spoke request, and the context a retry gets
(ladder rung 2). The gates applied to its answer are in gates.py.

``ctx`` below is the run's ``context.RunContext``: settings, paths, store, workspaces, run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro.agents.tiers import WEB_TOOLS
from maestro.engine import ladder
from maestro.filespec import is_glob
from maestro.state.model import Receipt, Task

if TYPE_CHECKING:  # the pipeline imports this module: types only
    from maestro.agents.catalog import ResolvedAgent
    from maestro.engine.dispatch import Dispatch
    from maestro.engine.landing import Landing
    from maestro.engine.runcontext import RunContext
    from maestro.engine.worktree import Measured
    from maestro.prompts.delegation import Delegation
    from maestro.prompts.results import ParsedResult
    from maestro.spokes.base import Spoke
    from maestro.spokes.contract import DispatchRequest, SpokeResult

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skipped"


@dataclass
class GateResult:
    """One gate's verdict on an answer (gates.py applies them)."""

    gate: str  # format | criteria | scope | integration
    level: str  # pass | warn | fail | skipped
    detail: str = ""
    paths: list[str] = field(default_factory=list)  # scope: the out-of-scope paths
    fix: str = ""  # what to do, when the gate knows better than its usual advice

    @property
    def failed(self) -> bool:
        return self.level == FAIL

    def line(self) -> str:
        return f"{self.gate}: {self.level}" + (f" ({self.detail})" if self.detail else "")


# Retry context: how much of each relevant file the next prompt gets.
_FILE_CHARS = 6_000
_CONTEXT_CHARS = 24_000


@dataclass
class Attempt:
    """The evidence of one attempt."""

    tool: str
    agent: str = ""
    result: SpokeResult | None = None
    parsed: ParsedResult | None = None
    gates: list[GateResult] = field(default_factory=list)
    failure: ladder.Failure | None = None
    validation_exit: int | None = None
    validation_output: str = ""
    level: str = "ok"  # the dispatch's budget level: ok | over | yellow | red
    timeout_s: float = 600.0  # the agent's timeout; also bounds the validation command
    validation: str | None = None  # the task's validation command
    receipt: Receipt | None = None  # what the task changed so far, measured after the spoke
    charged: bool = False  # its tokens and cost are in the plan
    skipped: str | None = None  # the task was not ours to run (changed by hand)
    # The run began stopping while the spoke waited for the stagger: it never started.
    held_back: str | None = None
    measured: Measured | None = None  # its exact change, read from its worktree
    landing: Landing | None = None  # how an accepted change reached the user's tree
    kept: Path | None = None  # its worktree, kept by --keep-worktrees

    @property
    def accepted(self) -> bool:
        """Its spoke answered and every gate passed."""
        return self.result is not None and self.failure is None and not self.held_back


def make_request(
    dispatch: Dispatch,
    spoke: Spoke,
    task: Task,
    delegation: Delegation,
    resolved: ResolvedAgent,
    *,
    root: Path,
    resume_session: str | None = None,
    **more: Any,
) -> DispatchRequest:
    """A task's request: the agent's model, turns and timeout, the task's declared files
    (folders and globs are for ownership, not deliverables); ``more``: the run's."""
    return dispatch.request(
        prompt=delegation.prompt,
        system_prompt=delegation.system,
        cwd=root,
        title=task.title,
        timeout_s=float(resolved.timeout_mins) * 60.0,
        max_turns=resolved.max_turns,
        model=resolved.model,
        web_search=bool(set(resolved.tools) & set(WEB_TOOLS)),
        files=[root / f for f in task.files if not is_glob(f) and not f.endswith("/")],
        criteria=list(task.criteria),
        resume_session=resume_session if spoke.supports_resume else None,
        **more,
    )


def receipt_note(receipt: Receipt, *, measured: bool = True) -> str:
    """The receipt in one log cell: what changed, the validation exit, the diff's hash."""
    parts = []
    if not measured:
        parts.append("changes not measured (not a git repository)")
    elif receipt.files_changed:
        shown = ", ".join(receipt.files_changed[:5]) + (
            f" +{len(receipt.files_changed) - 5} more" if len(receipt.files_changed) > 5 else ""
        )
        parts.append(f"changed {shown} ({receipt.diff_stat})")
    else:
        parts.append("no file changed")
    if receipt.validation is not None:
        ran = receipt.validation_exit is not None
        parts.append(f"validation exit {receipt.validation_exit}" if ran else "validation not run")
    if receipt.diff_sha:
        parts.append(f"diff sha256 {receipt.diff_sha[:12]}")
    return "receipt: " + ", ".join(parts)  # the commit is in the plan's receipt


def expanded_context(ctx: RunContext, task_id: str, attempt: Attempt, previous: str | None) -> str:
    """Ladder rung 2: the failure, the validation output, and the task's files now."""
    task = ctx.store.load().task(task_id)
    root: Path = ctx.paths.root
    # What the user or a reviewer said stays in every later attempt's prompt.
    parts = (
        [previous] if previous and previous.startswith(("Clarification", "Review findings")) else []
    )
    parts.append(
        "What failed:\n"
        + (
            attempt.failure.context
            if attempt.failure and attempt.failure.context
            else attempt.failure.reason
            if attempt.failure
            else "unknown"
        )
    )
    output = attempt.validation_output
    if output:
        parts.append(f"Output of `{task.validation}` (last lines):\n" + output[-3_000:])
    budget = _CONTEXT_CHARS
    patch = attempt.measured.patch if attempt.measured is not None else ""
    if patch:
        cut = patch[: budget // 2]
        budget -= len(cut)
        more = "" if len(cut) == len(patch) else f"\n[... {len(patch) - len(cut)} more characters]"
        parts.append(
            "Your previous attempt's changes, as a diff (they were thrown away: this attempt "
            f"starts again from a clean copy of the project):\n```diff\n{cut}{more}\n```"
        )
    for name in task.files:
        path = root / name
        if not path.is_file() or budget <= 0:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        cut = text[: min(_FILE_CHARS, budget)]
        budget -= len(cut)
        more = "" if len(cut) == len(text) else f"\n[... {len(text) - len(cut)} more characters]"
        parts.append(f"Current content of {name}:\n```\n{cut}{more}\n```")
    return "\n\n".join(parts)

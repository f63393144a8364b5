"""`maestro review`: another vendor reviews a finished task before it is accepted.

Per round: the task's validation command must pass (no reviewer tokens are spent on work
that fails its own check); the diff of the task's files must differ from the last one a
reviewer judged; a CLI of another vendor than the author reviews it read-only; the verdict
comes only from the answer's final ``maestro-review`` block; the round policy
(``rounds.py``) decides what follows. "request-changes" sends the findings back to the
author through the run engine's dispatch path (its session resumed where the CLI can), and
the task is reviewed again, up to ``settings.review_rounds`` rounds.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from maestro import clock, sandbox
from maestro.challenge import next_id
from maestro.challenge.vendors import choose
from maestro.engine.dispatch import Dispatch, command_log, log_row, timeout_s
from maestro.engine.gates import run_validation
from maestro.engine.keptstreams import recorded, stream_file
from maestro.engine.readonly import ReadOnlyWorktree
from maestro.engine.run import Engine
from maestro.engine.runcontext import CommandContext, RunOptions
from maestro.errors import MaestroError
from maestro.review import diff as task_diff
from maestro.review.outcome import (
    ReviewOutcome,
    ValidationCheck,
    accept,
    apply,
    described,
    unchanged,
)
from maestro.review.reviewprompt import SYSTEM, build_prompt, revision_context
from maestro.review.rounds import RoundDecision, current_cycle, decide
from maestro.review.verdict import ParsedReview, parse_review
from maestro.spokes.registry import detect_available, resumption
from maestro.state.model import Review, Task
from maestro.state.store import PlanStore

if TYPE_CHECKING:
    from maestro.config import Settings
    from maestro.spokes.contract import SpokeResult

# revise(task_id, context, resume_session) -> the task's status after the revision.
Revise = Callable[[str, str, str | None], str]
VALIDATION_TAIL = 2_000


def _check(ctx: CommandContext, task: Task, root: Path) -> ValidationCheck | None:
    """Run the task's validation command in ``root`` (None when it has none)."""
    if not task.validation:
        return None

    settings = ctx.settings
    ran = run_validation(
        task.validation,
        root=root,
        env=ctx.env,
        timeout_s=max(60.0, timeout_s(settings)),
        confined=sandbox.rules(settings, ctx.env),
        state=settings.paths.state_dir,
        passes=settings.sandbox_env,
    )
    return {
        "command": task.validation,
        "exit": ran.exit_code,
        "timed_out": ran.timed_out,
        "passed": ran.passed,
        "output": ran.output[-VALIDATION_TAIL:],
    }


def _validation_note(check: ValidationCheck | None) -> str:
    if check is None:
        return "The task has no validation command; nothing was run."
    return f"`{check['command']}` exited 0: it passes."


def _reviewable(task: Task) -> None:
    if task.status == "done" or (
        task.status == "blocked" and task.review in ("flagged", "needs-human")
    ):
        return
    raise MaestroError(
        f"Task {task.id} is {task.status}: only finished work can be reviewed.",
        f"run it first with `maestro run {task.id}`.",
    )


def engine_revise(ctx: CommandContext, *, pr: bool = False) -> Revise:
    """A revision outside a run: the run engine runs the one task with the findings (a
    review's, a failing check's, a comment's); with ``pr``, on the pull request's branch."""

    def revise(task_id: str, context: str, session: str | None) -> str:
        with PlanStore(ctx.paths).edit() as plan:
            task = plan.task(task_id)
            before, task.status = task.status, "pending"
        options = RunOptions(task_id=task_id, revision=context, resume_session=session, pr=pr)
        out = io.StringIO() if ctx.json else ctx.stdout
        try:
            Engine(ctx.settings, env=dict(ctx.env), options=options, out=out, quiet=True).run()
        except MaestroError:
            # Refused before it dispatched (a run in progress, a branch it cannot use): the
            # task is as it was, not left pending.
            with PlanStore(ctx.paths).edit() as plan:
                task = plan.task(task_id)
                if task.status == "pending":
                    task.status = before
            raise
        return str(PlanStore(ctx.paths).load().task(task_id).status)

    return revise


def review_task(
    ctx: CommandContext,
    task_id: str,
    *,
    tool: str | None = None,
    auto: bool = True,
    revise: Revise | None = None,
) -> ReviewOutcome:
    """Review Task ``task_id`` until the round policy ends it (see the module doc).

    ``revise`` re-dispatches the task to its author with the findings; the run engine
    passes its own, outside a run the engine is started for the one task.
    """
    revise = revise or engine_revise(ctx)
    made: list[Review] = []
    retry_note = ""
    while True:
        outcome = _round(ctx, task_id, tool=tool, auto=auto, made=made, retry_note=retry_note)
        if outcome.outcome != "revising" and outcome.outcome != "format-retry":
            outcome.reviews = made
            return outcome
        if outcome.outcome == "format-retry":
            retry_note = outcome.message
            continue
        retry_note = ""
        last = made[-1]
        task = PlanStore(ctx.paths).load().task(task_id)
        session, how = resumption(task, ctx.settings, ctx.env)
        ctx.emit(
            f"Task {task_id}: sending {len(last.findings)} finding(s) back to {task.tool} ({how})..."
        )
        status = revise(task_id, revision_context(last), session)
        if session and PlanStore(ctx.paths).load().task(task_id).session != session:
            # A resumed claude session keeps its id: this revision ended in a fresh one.
            ctx.emit(
                f"Task {task_id}: {task.tool} did not resume its session after all: the "
                "revision ran in a fresh one (the log says why)."
            )
        if status != "done":
            return ReviewOutcome(
                task_id,
                "revision-failed",
                f"Task {task_id}'s revision ended {status}; see `maestro status`.",
                last.reviewer,
                made,
                fix=f"see the options in `maestro status`, then "
                f"`maestro review {task_id}` once it is done.",
            )


def review_in_run(
    ctx: CommandContext, task_id: str, *, revise: Revise | None = None
) -> ReviewOutcome:
    """``maestro run --review``'s hook: like ``review_task(auto=True)``, but a review that
    cannot happen (no reviewer CLI, a git error) leaves the task blocked, needing a human,
    with the reason, instead of ending the task's job with an error while the plan says done."""
    try:
        return review_task(ctx, task_id, auto=True, revise=revise)
    except MaestroError as error:
        with PlanStore(ctx.paths).edit() as plan:
            task = plan.task(task_id)
            apply(task, "needs-human")
            task.result = f"{task.result or 'done'} (not reviewed: {error.message})"
        log_row(
            command_log(ctx.settings),
            action="Review",
            tool=None,
            target="review",
            result=None,
            ok=False,
            task=task_id,
            notes=f"not reviewed: {error}",
        )
        return ReviewOutcome(
            task_id,
            "needs-human",
            f"Task {task_id} was not reviewed: {error.message}",
            fix=error.fix,
        )


def _round(
    ctx: CommandContext,
    task_id: str,
    *,
    tool: str | None,
    auto: bool,
    made: list[Review],
    retry_note: str,
) -> ReviewOutcome:
    """One review round: the task's check, a reviewer's verdict on its diff, the decision
    recorded in the plan and the log. All in a worktree of the task's change (or of the
    working tree as it is): the check runs there, the reviewer reads there, and whatever
    it writes stays there."""
    settings = ctx.settings
    plans = PlanStore(settings.paths)
    plan = plans.load()
    task = plan.task(task_id)
    _reviewable(task)
    change = task.receipt.change if task.receipt else None
    reader = ReadOnlyWorktree(settings.paths, settings, f"review-{task_id}", change)
    with reader as inside:  # the project folder in the reader's worktree (None: in place)
        root = inside or settings.paths.root
        check = _check(ctx, task, root)
        if check is not None and not check["passed"]:
            return _validation_failed(settings, plan.goal, task, check)
        exact = task_diff.change_diff(settings.paths.root, task)
        diff_text = exact if exact is not None else task_diff.task_diff(settings.paths.root, task)
        sha = task_diff.diff_sha(diff_text)
        judged = [r for r in plan.reviews if r.task == task_id and r.verdict is not None]
        if judged and judged[-1].diff_sha == sha:
            return unchanged(ctx, task, judged[-1], auto, made)
        choice = choose(task.tool, detect_available(ctx.env), role="reviewer", tool=tool)
        reviewer = choice.tools[0]
        cycle = current_cycle(plan.reviews, task_id)
        round_no = len(cycle) + 1
        prompt = build_prompt(task, task_diff.clip(diff_text), _validation_note(check), cycle)
        if retry_note:
            prompt += f"\nYour previous answer could not be read: {retry_note}. End with the block exactly as shown.\n"
        ctx.emit(f"Task {task_id}: review round {round_no} by {reviewer} (read-only)...")
        result, stream = _dispatch(
            ctx, reviewer, task_id, prompt, title=task.title, round_no=round_no, cwd=root
        )
        if not result.success:
            log_row(
                command_log(settings, plan.goal),
                action="Review",
                tool=reviewer,
                target="review",
                result=result,
                ok=False,
                task=task_id,
                notes=result.error or "failed",
            )
            return ReviewOutcome(
                task_id,
                "reviewer-failed",
                f"the reviewer {reviewer} failed: {result.error}",
                reviewer,
                notes=choice.notes,
                validation=check,
                fix="fix the cause above, or pick another reviewer with --tool.",
            )
        asked = _Asked(task, plan.goal, reviewer, round_no, cycle, sha, check, choice.notes, reader)
        outcome = _judged(ctx, plans, asked, result, auto=auto, made=made)
        recorded(stream, made[-1].id)
        return outcome


@dataclass
class _Asked:
    """A round whose reviewer has answered: what was reviewed, by whom, after which
    rounds of the cycle."""

    task: Task
    goal: str
    reviewer: str
    round_no: int
    cycle: list[Review]
    sha: str  # the diff the reviewer saw
    check: ValidationCheck | None  # the task's validation, passed
    notes: list[str]  # how the reviewer was chosen
    reader: ReadOnlyWorktree  # where it read


def _judged(
    ctx: CommandContext,
    plans: PlanStore,
    asked: _Asked,
    result: SpokeResult,
    *,
    auto: bool,
    made: list[Review],
) -> ReviewOutcome:
    """The reviewer's answer read, decided, recorded in the plan and the log."""
    settings = ctx.settings
    task, task_id, reviewer, round_no = asked.task, asked.task.id, asked.reviewer, asked.round_no
    goal, cycle, sha, check = asked.goal, asked.cycle, asked.sha, asked.check
    parsed = parse_review(result.text, task_id)
    # A reviewer reports; one that changed the task's files is not a verdict on the work.
    # In its worktree its writes stay there and go with it; in place they are in the tree.
    if asked.reader.root is not None:
        edited = bool(asked.reader.edited())
    else:
        edited = task_diff.diff_sha(task_diff.task_diff(settings.paths.root, task)) != sha
    decision = _decide(parsed, edited, round_no, settings.review_rounds, cycle)
    awaiting = decision.outcome == "accepted" and not auto
    review = Review(
        id="",
        task=task_id,
        reviewer=reviewer,
        round=round_no,
        time=clock.iso(),
        verdict=parsed.verdict,
        findings=parsed.findings,
        usage=result.usage,
        cost=result.cost,
        cost_estimated=result.cost_estimated,
        diff_sha=sha,
        outcome=None if awaiting else decision.outcome,
    )
    with plans.edit() as editable:
        review.id = next_id("R", [r.id for r in editable.reviews])
        editable.reviews.append(review)
        apply(editable.task(task_id), None if awaiting else decision.outcome)
    made.append(review)
    summary = parsed.verdict or "format failure: " + "; ".join(parsed.problems)
    log_row(
        command_log(settings, goal),
        action="Review",
        tool=reviewer,
        target="review",
        result=result,
        ok=parsed.verdict is not None,
        task=task_id,
        notes=f"{review.id} round {round_no}: {summary} -> {review.outcome or 'awaiting acceptance'}",
    )
    base = ReviewOutcome(
        task_id, decision.outcome, decision.reason, reviewer, notes=asked.notes, validation=check
    )
    if decision.outcome == "format-failure":
        # Recorded, never accepted; the next round asks again (the cap bounds the cost).
        base.outcome = "format-retry"
        base.message = "; ".join(parsed.problems)
    elif awaiting:
        return accept(ctx, task_id, review, base)
    return described(base, review)


def _validation_failed(
    settings: Settings, goal: str, task: Task, check: ValidationCheck
) -> ReviewOutcome:
    """The task's own check fails: no reviewer is asked, and the log says why."""
    log_row(
        command_log(settings, goal),
        action="Review",
        tool=None,
        target="validation",
        result=None,
        ok=False,
        task=task.id,
        notes=f"`{task.validation}` exited {check['exit']}: no review",
    )
    return ReviewOutcome(
        task.id,
        "validation-failed",
        f"Task {task.id}'s validation `{task.validation}` exited {check['exit']}"
        f"{' (timed out)' if check['timed_out'] else ''}: no reviewer was asked.",
        validation=check,
        fix=f'fix the work (e.g. `maestro run {task.id} --clarify "..."` after setting it '
        "pending) until the check passes, then review again.",
    )


def _dispatch(
    ctx: CommandContext,
    reviewer: str,
    task_id: str,
    prompt: str,
    *,
    title: str,
    round_no: int,
    cwd: Path,
) -> tuple[SpokeResult, Path]:
    """The reviewer's answer: read-only, in ``cwd`` (its worktree), under the agents'
    timeout, as a session of its own (``review-t<task>-<random>``); and the file its
    streamed lines are kept in (engine/keptstreams.py)."""
    settings = ctx.settings
    with Dispatch(
        settings.paths,
        ctx.env,
        cli=reviewer,
        kind=f"review-t{task_id}",
        subject=f"Review Task {task_id}: {title}",
        message=f"Review round {round_no}: judge the change against its criteria.",
        task=task_id,
    ) as dispatch:
        about = {"task": task_id, "round": round_no, "cli": reviewer}
        stream = stream_file(settings.paths, "reviews", dispatch.session.id, **about)
        result = dispatch.ask(
            settings,
            stream=stream,
            prompt=prompt,
            system_prompt=SYSTEM,
            cwd=cwd,
            title=f"Review Task {task_id}",
            progress=ctx.emit,
        )
        return result, stream


def _decide(
    parsed: ParsedReview, edited: bool, round_no: int, max_rounds: int, cycle: list[Review]
) -> RoundDecision:
    """The round's decision from the verdict, its findings and the rounds before it."""
    if edited:
        parsed.verdict = None
        parsed.problems.append(
            "the reviewer changed the task's files; a reviewer reports, it does not edit"
        )
    decision = decide(
        parsed.verdict,
        parsed.findings,
        round_no=round_no,
        max_rounds=max_rounds,
        earlier=[f for r in cycle for f in r.findings],
    )
    if edited:
        # Its edits are now in the work: no later round may judge them as the author's.
        return RoundDecision(
            "needs-human",
            "the reviewer changed the task's files while reviewing; "
            "check them with `git diff` before accepting anything",
        )
    return decision

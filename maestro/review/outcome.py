"""What a review round's decision does to the plan, and what the person is told."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from maestro.engine.runcontext import CommandContext
from maestro.state.model import Review, Task
from maestro.state.store import PlanStore


class ValidationCheck(TypedDict):
    """The task's validation command, run before a reviewer is asked (JSON as it is)."""

    command: str
    exit: int | None
    timed_out: bool
    passed: bool
    output: str  # its last part


@dataclass
class ReviewOutcome:
    task: str
    outcome: str  # accepted | blocked | needs-human | format-failure | awaiting-acceptance |
    #               validation-failed | unchanged | reviewer-failed | revision-failed
    message: str
    reviewer: str | None = None
    reviews: list[Review] = field(default_factory=list)  # recorded by this call
    notes: list[str] = field(default_factory=list)
    validation: ValidationCheck | None = None
    fix: str | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.outcome == "accepted" else 1


def apply(task: Task, outcome: str | None) -> None:
    """The task's state after a round's decision (None: waiting for the person's yes)."""
    if outcome == "accepted":
        task.review = "approved"
        task.status = "done"
    elif outcome == "revising":
        task.review = "changes-requested"
    elif outcome == "blocked":
        task.review = "flagged"
        task.status = "blocked"
    elif outcome == "needs-human":
        task.review = "needs-human"
        task.status = "blocked"


def described(outcome: ReviewOutcome, review: Review) -> ReviewOutcome:
    words = {
        "accepted": f"Task {review.task} is accepted ({outcome.message}).",
        "revising": f"{review.reviewer} requested changes to Task {review.task} (round {review.round}).",
        "blocked": f"{review.reviewer} flagged Task {review.task}: it is blocked with the findings.",
        "needs-human": f"Task {review.task} needs a human: {outcome.message}.",
    }
    if outcome.outcome in words:
        outcome.message = words[outcome.outcome]
    if outcome.outcome in ("blocked", "needs-human"):
        outcome.fix = (
            f"read the findings under ## Reviews ({review.id}), fix the work, and run "
            f"`maestro review {review.task}` again."
        )
    return outcome


def accept(ctx: CommandContext, task_id: str, review: Review, base: ReviewOutcome) -> ReviewOutcome:
    """Without --auto a person says yes on a terminal; elsewhere the approval waits."""
    question = f"{review.reviewer} approved Task {task_id} (round {review.round}). Accept it?"
    if not ctx.interactive():
        base.outcome = "awaiting-acceptance"
        base.message = (
            f"{review.reviewer} approved Task {task_id}, and accepting it needs your yes."
        )
        base.fix = (
            f"run `maestro review {task_id} --auto` to accept it (the approval {review.id} is kept: "
            "no new review is run)."
        )
        return base
    accepted = ctx.confirm(question)
    outcome = "accepted" if accepted else "needs-human"
    with PlanStore(ctx.paths).edit() as plan:
        stored = next(r for r in plan.reviews if r.id == review.id)
        stored.outcome = outcome
        apply(plan.task(task_id), outcome)
    review.outcome = outcome
    base.outcome = outcome
    base.message = "accepted by you" if accepted else "you did not accept the approval"
    return described(base, review)


def unchanged(
    ctx: CommandContext, task: Task, last: Review, auto: bool, made: list[Review]
) -> ReviewOutcome:
    """The diff is the one ``last`` judged: never reviewed again."""
    if last.verdict is not None and last.outcome is None:
        # An approval waiting for the person's yes: accept it now without a new review.
        base = ReviewOutcome(task.id, "accepted", "approved earlier", last.reviewer)
        if auto:
            with PlanStore(ctx.paths).edit() as plan:
                next(r for r in plan.reviews if r.id == last.id).outcome = "accepted"
                apply(plan.task(task.id), "accepted")
            last.outcome = "accepted"
            return described(base, last)
        return accept(ctx, task.id, last, base)
    if made:
        # Inside a review loop: the author's revision changed nothing.
        with PlanStore(ctx.paths).edit() as plan:
            apply(plan.task(task.id), "needs-human")
        return ReviewOutcome(
            task.id,
            "needs-human",
            f"Task {task.id}'s revision left its diff unchanged; another review would repeat "
            f"{last.id}. A person decides.",
            last.reviewer,
            fix=f"read {last.id}'s findings under ## Reviews, fix the work, then review again.",
        )
    return ReviewOutcome(
        task.id,
        "unchanged",
        f"Task {task.id}'s diff is unchanged since review {last.id} (round {last.round}, {last.verdict} -> "
        f"{last.outcome}): it is not reviewed again.",
        last.reviewer,
        fix=f"change the work first (or read {last.id}'s findings under ## Reviews in the plan).",
    )

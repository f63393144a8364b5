"""The review round policy: when a verdict ends the review and when it loops.

Review loops that never converge are the common complaint about cross-model review: a
reviewer that finds something new to say every round turns into an editor. The rules:

- Every review dispatch is a round, format failures included; rounds are counted within
  the task's current review cycle (the reviews since its last terminal outcome).
- approve accepts.
- In round 1, request-changes sends the findings back to the author and flag blocks.
- In a later round, the verdict may keep the task from acceptance only through critical or
  major findings that earlier rounds of the cycle did not raise. If the only blocking
  findings repeat earlier ones, the revision did not settle them and another round will
  not either: a person decides ("needs-human"). If no blocking finding is left, the task
  is accepted and the minor points stay on record.
- The last allowed round can no longer ask for changes: it ends in "needs-human".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from maestro.review.verdict import BLOCKING
from maestro.state.model import Finding, Review

TERMINAL = ("accepted", "blocked", "needs-human")
SAME_FINDING_RATIO = 0.75


@dataclass
class RoundDecision:
    outcome: str  # accepted | revising | blocked | needs-human | format-failure
    reason: str


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9_./]+", " ", text.lower()).split())


def same_finding(a: Finding, b: Finding) -> bool:
    """Rephrasings of one finding count as the same; severity changes do not make it new."""
    x, y = _norm(a.text), _norm(b.text)
    if not x or not y:
        return False
    if x in y or y in x:
        return True
    return SequenceMatcher(None, x, y).ratio() >= SAME_FINDING_RATIO


def split_blocking(
    findings: list[Finding], earlier: list[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """(new blocking findings, blocking findings that repeat an earlier one)."""
    new, repeated = [], []
    for finding in findings:
        if finding.severity not in BLOCKING:
            continue
        if any(same_finding(finding, old) for old in earlier):
            repeated.append(finding)
        else:
            new.append(finding)
    return new, repeated


def current_cycle(reviews: list[Review], task_id: str) -> list[Review]:
    """The task's reviews since its last terminal outcome, oldest first."""
    mine = [r for r in reviews if r.task == task_id]
    for index in range(len(mine) - 1, -1, -1):
        if mine[index].outcome in TERMINAL:
            return mine[index + 1 :]
    return mine


def decide(
    verdict: str | None,
    findings: list[Finding],
    *,
    round_no: int,
    max_rounds: int,
    earlier: list[Finding],
) -> RoundDecision:
    last = round_no >= max_rounds
    if verdict is None:
        if last:
            return RoundDecision(
                "needs-human", f"round {round_no} of {max_rounds} gave no valid verdict"
            )
        return RoundDecision("format-failure", "the answer had no valid maestro-review block")
    if verdict == "approve":
        return RoundDecision("accepted", "the reviewer approved")
    if round_no > 1:
        new, repeated = split_blocking(findings, earlier)
        if repeated and not new:
            return RoundDecision(
                "needs-human",
                f"round {round_no} repeats {len(repeated)} earlier critical/major finding(s) "
                "the revision did not settle",
            )
        if not new:
            return RoundDecision(
                "accepted", f"round {round_no} raised no new critical or major finding"
            )
    if verdict == "flag":
        return RoundDecision("blocked", "the reviewer flagged issues")
    if last:
        return RoundDecision("needs-human", f"the review cap of {max_rounds} round(s) is reached")
    return RoundDecision("revising", "the reviewer requested changes")

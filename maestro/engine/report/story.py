"""The report's prose: the step-by-step narrative, how each failure was resolved, and the
recommendations for the next plan."""

from __future__ import annotations

import re
from typing import Any

from maestro.engine.ladder import NEEDS_DECOMPOSITION
from maestro.engine.report.collect import BudgetCheck, CliFigures, Dispatch, TaskFigures
from maestro.formatting import duration_text, money_text, tokens_text
from maestro.logfile import short_name
from maestro.state.model import Plan, Review

_TRANSIENT = re.compile(
    r"rate.?limit|timeout|timed out|network|server|transient|\b5\d\d\b|\b429\b", re.IGNORECASE
)


def tool_name(tool: str | None) -> str:
    return short_name(tool)


def rung(failure: Any) -> str:
    """Which rung of the retry ladder followed a failed row: a transient failure is retried
    at once, any other with the failure and the files added (the engine's ladder)."""
    if failure is None:
        return "retry"
    return (
        "immediate retry"
        if _TRANSIENT.search(f"{failure.outcome} {failure.notes}")
        else "context expansion"
    )


def retries(rows: list[Any]) -> list[tuple[Any, Any]]:
    """(retry row, the failed row before it) for one task's rows in order."""
    pairs = []
    last_failed = None
    for row in rows:
        if row.retry:
            pairs.append((row, last_failed))
        last_failed = row if row.failed else None if not row.retry else last_failed
    return pairs


def row_line(row: Any) -> str:
    action = row.action + (
        " (retry)" if row.retry and not row.action.lower().startswith("retry") else ""
    )
    target = row.target or "-"
    if row.tool:
        target = f"{tool_name(row.tool)} ({target})" if row.target else tool_name(row.tool)
    facts = [
        p
        for p in (
            tokens_text(row.tokens),
            money_text(row.cost, row.cost_estimated) if row.cost is not None else "",
            duration_text(row.duration_s) if row.duration_s is not None else "",
        )
        if p
    ]
    outcome = ("❌ " if row.failed and not row.outcome.startswith("❌") else "") + (
        row.outcome or ""
    )
    text = f"`{row.time}` {row.actor}: {action} → {target}: {outcome.strip() or '-'}"
    if facts:
        text += f" ({', '.join(facts)})"
    return text + (f". {row.notes}" if row.notes else "")


def narrative(log: Any) -> list[tuple[str, list[str]]]:
    """(session heading, its steps) for every session of the log."""
    sections = []
    for session in log.sessions:
        meta = [f"run {session.run_id}"] if session.run_id else []
        if session.hub:
            meta.append(f"hub {session.hub}")
        heading = f"Session {session.stamp}" + (f" ({', '.join(meta)})" if meta else "")
        if session.goal and session.goal != "-":
            heading += f": {session.goal}"
        sections.append((heading, [row_line(row) for row in session.rows]))
    return sections


def plan_narrative(plan: Plan, figures: list[TaskFigures]) -> list[str]:
    """Steps told from the plan's own fields, for a run without a log."""
    events: list[tuple[str, str]] = []
    for challenge in plan.challenges:
        state = "parsed" if challenge.parsed else "kept verbatim (did not parse)"
        count = sum(len(v) for v in challenge.findings.values())
        who = tool_name(challenge.challenger)
        text = f"`{challenge.time}` {who} challenged the plan ({challenge.id}): {count} findings, {state}"
        events.append((challenge.time, text))
    for fig in figures:
        task = fig.task
        if not task.started:
            continue
        text = f"`{task.started}` Task {task.id} ({task.title}) started on {tool_name(task.tool)}"
        if task.finished:
            text += (
                f"; ended `{task.finished}` after {task.attempts or 1} attempt(s), "
                f"{duration_text(fig.duration_s)}: {task.status}"
            )
        else:
            text += f"; {task.status}"
        if task.result:
            text += f". {task.result}"
        events.append((task.started, text))
    for review in plan.reviews:
        verdict = review.verdict or "no valid verdict"
        text = (
            f"`{review.time}` {tool_name(review.reviewer)} reviewed Task {review.task} (round {review.round}): "
            f"{verdict} → {review.outcome or '-'}"
        )
        events.append((review.time, text))
    return [text for _, text in sorted(events, key=lambda e: e[0])]


def _review_chain(reviews: list[Review]) -> str:
    steps = []
    for review in reviews:
        blocking = [f for f in review.findings if f.severity in ("critical", "major")]
        what = review.verdict or "format failure"
        if blocking:
            what += f", {len(blocking)} critical/major"
        steps.append(
            f"round {review.round} ({tool_name(review.reviewer)}): {what} → {review.outcome or '-'}"
        )
    return "; ".join(steps)


def resolutions(plan: Plan, dispatches: list[Dispatch]) -> list[str]:
    """One line per task that failed, retried, or went through review, saying how it ended."""
    rows_by_task: dict[str, list[Any]] = {}
    for item in dispatches:
        if item.row.task:
            rows_by_task.setdefault(item.row.task, []).append(item.row)
    lines = []
    for task in plan.tasks:
        rows = [r for r in rows_by_task.get(task.id, []) if r.action.lower() != "review"]
        reviews = [r for r in plan.reviews if r.task == task.id]
        if all(r.verdict == "approve" and r.outcome == "accepted" for r in reviews):
            reviews = []  # a review that approved at once resolved nothing
        troubled = any(r.failed or r.retry for r in rows) or task.attempts > 1
        if not (troubled or reviews or task.status in ("failed", "blocked")):
            continue
        steps = []
        before = {id(retry): failed for retry, failed in retries(rows)}
        for row in rows:
            what = f"{rung(before[id(row)])} on" if row.retry else f"{row.action.lower()} on"
            if row.failed:
                why = row.outcome or row.notes
                steps.append(
                    f"{what} {tool_name(row.tool)} failed at `{row.time}`"
                    + (f" ({why})" if why else "")
                )
            elif row.retry:
                steps.append(f"{what} {tool_name(row.tool)} at `{row.time}` succeeded")
        if not rows and task.attempts > 1:
            steps.append(f"{task.attempts} attempts (the log has no rows for them)")
        if reviews:
            steps.append("review " + _review_chain(reviews))
        end = f"now {task.status}" + (f", review {task.review}" if task.review else "")
        if task.status in ("failed", "blocked") and task.result:
            end += f": {task.result}"
        steps.append(end)
        lines.append(f"Task {task.id} ({task.title}): " + " → ".join(steps) + ".")
    for item in dispatches:
        if item.row.failed and not item.row.task:
            lines.append(
                f"{item.row.action} on {tool_name(item.row.tool)} failed at `{item.row.time}`"
                + (f": {item.row.notes}" if item.row.notes else "")
                + "."
            )
    return lines


def recommendations(
    plan: Plan,
    figures: list[TaskFigures],
    clis: list[CliFigures],
    checks: list[BudgetCheck],
    dispatches: list[Dispatch],
    *,
    has_log: bool,
    max_concurrent: int | None,
) -> list[str]:
    tips: list[str] = []
    by_task: dict[str, list[Any]] = {}
    for item in dispatches:
        if item.row.task and item.row.action.lower() != "review":
            by_task.setdefault(item.row.task, []).append(item.row)
    expanded = {
        tid
        for tid, rows in by_task.items()
        if any(rung(failed) == "context expansion" for _, failed in retries(rows))
    }
    for fig in figures:
        task = fig.task
        if task.status == "done" and (
            task.id in expanded or (not dispatches and task.attempts > 1)
        ):
            tips.append(
                f"Task {task.id} needed {task.attempts or 2} attempts (context expansion): name the files it "
                "must read and the exact check in its criteria, so the first dispatch has what the retry had."
            )
    for check in checks:
        if check.level == "ok":
            continue
        line, limit = {
            "red": ("abort threshold", check.limits.abort),
            "yellow": ("warning level", check.limits.yellow),
            "over": ("budget", check.limits.budget),
        }[check.level]
        per = " per attempt on average" if check.average else ""
        tips.append(
            f"{check.what} on {tool_name(check.tool)} used {check.tokens:,} tokens{per}, over its {line} "
            f"({limit:,}): split the task or narrow its Files."
        )
    for cli in clis:
        if cli.failures >= 2 and cli.failures / max(1, cli.dispatches) >= 0.3:
            tips.append(
                f"{tool_name(cli.tool)} failed {cli.failures} of {cli.dispatches} dispatches: check it with "
                "`maestro doctor`, or plan those tasks for another CLI."
            )
    for task in plan.tasks:
        if task.status == "blocked" and task.result and NEEDS_DECOMPOSITION in task.result.lower():
            tips.append(
                f"Task {task.id} is blocked ({NEEDS_DECOMPOSITION}): split it into smaller tasks and load "
                "the plan again with `maestro plan --from`."
            )
        elif task.status == "failed":
            tips.append(
                f"Task {task.id} failed: see `maestro status` for its options (clarify and retry, reassign, "
                "or continue without it)."
            )
        if task.review in ("needs-human", "flagged"):
            tips.append(
                f"Task {task.id}'s review ended in {task.review}: read its findings under ## Reviews in "
                f"the plan, decide, and review it again with `maestro review {task.id}` once it changed."
            )
    for challenge in plan.challenges:
        if not challenge.parsed:
            tips.append(
                f"Challenge {challenge.id} from {tool_name(challenge.challenger)} did not follow the format: "
                "read it under ## Challenges in the plan."
            )
    queued = sum(f.queued_s or 0 for f in figures)
    busy = sum(f.duration_s or 0 for f in figures)
    if queued > 10 and busy and queued / busy > 0.25:
        now = f" (now {max_concurrent})" if max_concurrent else ""
        tips.append(
            f"Ready tasks waited {duration_text(queued)} in total for a free slot: raise "
            f"MAESTRO_MAX_CONCURRENT{now} if the machine and your rate limits allow."
        )
    pending = sum(1 for t in plan.tasks if t.status == "pending")
    if pending:
        tips.append(f"{pending} task(s) are still pending: `maestro run` continues the plan.")
    if not has_log:
        tips.append(
            "Logging was off: set MAESTRO_LOG=summary before `maestro run` to get each dispatch's timing, "
            "failures and budget check in the next report."
        )
    return tips

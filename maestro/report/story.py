"""The report's prose: the step-by-step narrative, how each failure was resolved, and the
recommendations for the next plan."""

from __future__ import annotations

import re

from maestro.engine.ladder import NEEDS_DECOMPOSITION
from maestro.formatting import duration_text, money_text, tokens_text
from maestro.logfile import LogRow, ParsedLog, short_name
from maestro.report.collect import BudgetCheck, CliFigures, Dispatch, TaskFigures
from maestro.state.model import Plan, Review, Task

_TRANSIENT = re.compile(
    r"rate.?limit|timeout|timed out|network|server|transient|\b5\d\d\b|\b429\b", re.IGNORECASE
)


def tool_name(tool: str | None) -> str:
    return short_name(tool)


def rung(failure: LogRow | None) -> str:
    """Which rung of the retry ladder followed a failed row: a transient failure is retried
    at once, any other with the failure and the files added (the engine's ladder)."""
    if failure is None:
        return "retry"
    return (
        "immediate retry"
        if _TRANSIENT.search(f"{failure.outcome} {failure.notes}")
        else "context expansion"
    )


def retries(rows: list[LogRow]) -> list[tuple[LogRow, LogRow | None]]:
    """(retry row, the failed row before it) for one task's rows in order."""
    pairs = []
    last_failed: LogRow | None = None
    for row in rows:
        if row.retry:
            pairs.append((row, last_failed))
        last_failed = row if row.failed else None if not row.retry else last_failed
    return pairs


def row_line(row: LogRow) -> str:
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


def narrative(log: ParsedLog) -> list[tuple[str, list[str]]]:
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


def _task_rows(dispatches: list[Dispatch]) -> dict[str, list[LogRow]]:
    """Each task's dispatch rows in order, its reviews left out (they have their own
    records in the plan)."""
    by_task: dict[str, list[LogRow]] = {}
    for item in dispatches:
        if item.row.task and item.row.action.lower() != "review":
            by_task.setdefault(item.row.task, []).append(item.row)
    return by_task


def resolutions(plan: Plan, dispatches: list[Dispatch]) -> list[str]:
    """One line per task that failed, retried, or went through review, saying how it ended;
    then one per failed dispatch that belongs to no task."""
    rows_by_task = _task_rows(dispatches)
    lines = []
    for task in plan.tasks:
        line = _resolution(task, rows_by_task.get(task.id, []), plan.reviews)
        if line is not None:
            lines.append(line)
    for item in dispatches:
        if item.row.failed and not item.row.task:
            lines.append(
                f"{item.row.action} on {tool_name(item.row.tool)} failed at `{item.row.time}`"
                + (f": {item.row.notes}" if item.row.notes else "")
                + "."
            )
    return lines


def _resolution(task: Task, rows: list[LogRow], all_reviews: list[Review]) -> str | None:
    """'Task 2 (title): attempt on Codex failed … → now done.', or None for a task that
    went through without trouble."""
    reviews = [r for r in all_reviews if r.task == task.id]
    if all(r.verdict == "approve" and r.outcome == "accepted" for r in reviews):
        reviews = []  # a review that approved at once resolved nothing
    troubled = any(r.failed or r.retry for r in rows) or task.attempts > 1
    if not (troubled or reviews or task.status in ("failed", "blocked")):
        return None
    steps = _attempt_steps(rows)
    if not rows and task.attempts > 1:
        steps.append(f"{task.attempts} attempts (the log has no rows for them)")
    if reviews:
        steps.append("review " + _review_chain(reviews))
    steps.append(_ending(task))
    return f"Task {task.id} ({task.title}): " + " → ".join(steps) + "."


def _ending(task: Task) -> str:
    """'now failed, review flagged: <why>': where a task stands, with the reason when it
    did not get done."""
    end = f"now {task.status}" + (f", review {task.review}" if task.review else "")
    if task.status in ("failed", "blocked") and task.result:
        end += f": {task.result}"
    return end


def _attempt_steps(rows: list[LogRow]) -> list[str]:
    """The failed dispatches of one task and the retries that followed, each with the rung
    of the ladder it was."""
    before = {id(retry): failed for retry, failed in retries(rows)}
    steps = []
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
    return steps


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
    """What to change in the next plan or run, each tip with the evidence and the fix."""
    return [
        *_retry_tips(figures, dispatches),
        *_budget_tips(checks),
        *_cli_tips(clis),
        *_task_tips(plan),
        *_challenge_tips(plan),
        *_slot_tips(figures, max_concurrent),
        *_leftover_tips(plan, has_log),
    ]


def _retry_tips(figures: list[TaskFigures], dispatches: list[Dispatch]) -> list[str]:
    """Tasks that were done only after a retry had to add context (without a log, any
    task that took more than one attempt)."""
    expanded = {
        tid
        for tid, rows in _task_rows(dispatches).items()
        if any(rung(failed) == "context expansion" for _, failed in retries(rows))
    }
    return [
        (
            f"Task {fig.task.id} needed {fig.task.attempts or 2} attempts (context expansion): name the files it "
            "must read and the exact check in its criteria, so the first dispatch has what the retry had."
        )
        for fig in figures
        if fig.task.status == "done"
        and (fig.task.id in expanded or (not dispatches and fig.task.attempts > 1))
    ]


# A budget check's level -> the threshold it passed, and which of the limits that is.
_PASSED = {
    "red": ("abort threshold", "abort"),
    "yellow": ("warning level", "yellow"),
    "over": ("budget", "budget"),
}


def _budget_tips(checks: list[BudgetCheck]) -> list[str]:
    tips = []
    for check in checks:
        if check.level == "ok":
            continue
        line, field = _PASSED[check.level]
        limit: int = getattr(check.limits, field)
        per = " per attempt on average" if check.average else ""
        tips.append(
            f"{check.what} on {tool_name(check.tool)} used {check.tokens:,} tokens{per}, over its {line} "
            f"({limit:,}): split the task or narrow its Files."
        )
    return tips


def _cli_tips(clis: list[CliFigures]) -> list[str]:
    """A CLI that failed often (twice at least, and three in ten of its dispatches)."""
    return [
        (
            f"{tool_name(cli.tool)} failed {cli.failures} of {cli.dispatches} dispatches: check it with "
            "`maestro doctor`, or plan those tasks for another CLI."
        )
        for cli in clis
        if cli.failures >= 2 and cli.failures / max(1, cli.dispatches) >= 0.3
    ]


def _task_tips(plan: Plan) -> list[str]:
    """What to do about each task left blocked, failed, or with a review for a person."""
    tips = []
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
    return tips


def _challenge_tips(plan: Plan) -> list[str]:
    return [
        (
            f"Challenge {challenge.id} from {tool_name(challenge.challenger)} did not follow the format: "
            "read it under ## Challenges in the plan."
        )
        for challenge in plan.challenges
        if not challenge.parsed
    ]


def _slot_tips(figures: list[TaskFigures], max_concurrent: int | None) -> list[str]:
    """Ready tasks that waited long for a free slot, compared with the time they ran."""
    queued = sum(f.queued_s or 0 for f in figures)
    busy = sum(f.duration_s or 0 for f in figures)
    if not (queued > 10 and busy and queued / busy > 0.25):
        return []
    now = f" (now {max_concurrent})" if max_concurrent else ""
    return [
        (
            f"Ready tasks waited {duration_text(queued)} in total for a free slot: raise "
            f"MAESTRO_MAX_CONCURRENT{now} if the machine and your rate limits allow."
        )
    ]


def _leftover_tips(plan: Plan, has_log: bool) -> list[str]:
    tips = []
    pending = sum(1 for t in plan.tasks if t.status == "pending")
    if pending:
        tips.append(f"{pending} task(s) are still pending: `maestro run` continues the plan.")
    if not has_log:
        tips.append(
            "Logging was off: set MAESTRO_LOG=summary before `maestro run` to get each dispatch's timing, "
            "failures and budget check in the next report."
        )
    return tips

"""The report as Markdown: the walkthrough a person reads, with its two Mermaid diagrams."""

from __future__ import annotations

from datetime import datetime

from maestro.engine.caps import cap_line
from maestro.engine.pullrequest import pull_request_line, round_text
from maestro.formatting import duration_text, money_text
from maestro.report.build import Report
from maestro.report.story import tool_name
from maestro.state.model import CHALLENGE_CATEGORIES, STATUSES
from maestro.tables import markdown as table

ESTIMATE_NOTE = (
    "`~` marks a cost Maestro estimated from its price table (only Claude Code reports dollars); "
    "`-` means no cost is known."
)


def _clock(moment: datetime | None) -> str:
    return moment.strftime("%H:%M:%S") if moment else "-"


def _counts(report: Report) -> str:
    counts = report.plan.counts()
    parts = [f"{counts[s]} {s}" for s in STATUSES if counts.get(s)]
    return f"{len(report.plan.tasks)}" + (f": {', '.join(parts)}" if parts else "")


def _money(report: Report) -> str:
    money = report.money
    if not money.known:
        return "unknown (no CLI reported a cost and no price matched)"
    text = money_text(money.cost, money.estimated)
    notes = []
    if money.estimated:
        notes.append("includes estimates")
    if money.missing:
        notes.append("some dispatches have no cost")
    return text + (f" ({', '.join(notes)})" if notes else "")


def summary_rows(report: Report) -> list[list[str]]:
    plan, timing = report.plan, report.timing
    rows = [["Tasks", _counts(report)]]
    if plan.source:
        rows.append(["Planned", f"by {plan.source.hub}, {plan.source.time}"])
    if timing.wall_s is not None:
        between = f"{_clock(timing.start)} to {_clock(timing.end)} UTC"
        rows.append(["Wall time", f"{duration_text(timing.wall_s)} ({between})"])
    if timing.busy_s:
        span = timing.task_span_s
        parallel = (
            f" over {duration_text(span)}: {timing.busy_s / span:.1f}x in parallel" if span else ""
        )
        rows.append(["Task time", f"{duration_text(timing.busy_s)} in total{parallel}"])
    if timing.critical_path:
        rows.append(
            [
                "Critical path",
                f"{' -> '.join(timing.critical_path)} ({duration_text(timing.critical_s)})",
            ]
        )
    usage = report.usage
    split = (
        f" (input {usage.input:,}, output {usage.output:,}, cached {usage.cached:,})"
        if usage
        else " (from the log)"
    )
    rows.append(["Tokens", f"{report.tokens:,}{split}"])
    rows.append(["Cost", _money(report)])
    if plan.challenges:
        found = sum(sum(len(v) for v in c.findings.values()) for c in plan.challenges)
        rows.append(["Challenges", f"{len(plan.challenges)} ({found} finding(s))"])
    if plan.reviews:
        tasks = len({r.task for r in plan.reviews})
        rows.append(["Reviews", f"{len(plan.reviews)} round(s) on {tasks} task(s)"])
    failures = sum(c.failures for c in report.clis)
    retries = sum(c.retries for c in report.clis)
    rows.append(
        [
            "Failures",
            f"{failures} failed dispatch(es), {retries} retr{'y' if retries == 1 else 'ies'}",
        ]
    )
    return rows


def _plan_section(report: Report) -> list[str]:
    lines = ["## Plan", ""]
    if report.flowchart_note:
        lines += [f"> {report.flowchart_note}", ""]
    lines += ["Dependency graph, colored by status:", "", "```mermaid", report.flowchart, "```", ""]
    rows = [
        [
            t.id,
            t.title,
            t.specialist or "-",
            tool_name(t.tool),
            ", ".join(t.depends) or "-",
            t.status,
            t.review or "-",
        ]
        for t in report.plan.tasks
    ]
    if rows:
        lines += table(
            ["Task", "Title", "Specialist", "CLI", "Depends", "Status", "Review"], rows
        ) + [""]
    return lines


def _steps_section(report: Report) -> list[str]:
    lines = ["## Step by step", ""]
    if report.log_steps:
        for heading, steps in report.log_steps:
            lines += [f"### {heading}", ""]
            lines += [f"{n}. {step}" for n, step in enumerate(steps, start=1)] or ["(no rows)"]
            lines.append("")
    elif report.plan_steps:
        lines += ["From the plan's fields (no log):", ""]
        lines += [f"{n}. {step}" for n, step in enumerate(report.plan_steps, start=1)] + [""]
    else:
        lines += ["Nothing has run yet.", ""]
    return lines


def _timeline_section(report: Report) -> list[str]:
    lines = ["## Timeline", ""]
    if report.gantt_note:
        lines += [f"> {report.gantt_note}", ""]
    if report.gantt:
        what = "each dispatch" if report.has_log else "each task, first start to last finish"
        intro = "Timeline (UTC)" if report.gantt_note else f"Timeline of {what} (UTC)"
        lines += [f"{intro}; failed ones in red:", "", "```mermaid", report.gantt, "```", ""]
    rows = [
        [
            f.task.id,
            _clock(f.started),
            _clock(f.finished),
            duration_text(f.duration_s),
            duration_text(f.waited_s),
            duration_text(f.queued_s),
        ]
        for f in report.figures
        if f.started
    ]
    if rows:
        lines += table(
            ["Task", "Started", "Finished", "Duration", "Waiting on dependencies", "Queued"], rows
        )
        lines += [
            "",
            (
                "Waiting on dependencies: from the run's start until the task's last dependency "
                "finished. Queued: ready, but waiting for a free slot."
            ),
            "",
        ]
    else:
        lines += ["No task has started yet.", ""]
    return lines


def _cost_section(report: Report) -> list[str]:
    lines = ["## Tokens and cost", "", "### Per task", ""]
    rows = []
    for fig in report.figures:
        task = fig.task
        rows.append(
            [
                task.id,
                tool_name(task.tool),
                str(task.attempts),
                f"{fig.usage.input:,}",
                f"{fig.usage.output:,}",
                f"{fig.usage.cached:,}",
                f"{fig.usage.total:,}",
                money_text(fig.money.cost, fig.money.estimated) if fig.money.known else "-",
                f"{fig.review_tokens:,}" if fig.review_tokens else "-",
            ]
        )
    lines += table(
        ["Task", "CLI", "Attempts", "Input", "Output", "Cached", "Tokens", "Cost", "Review tokens"],
        rows,
    )
    source = "from the log's rows" if report.has_log else "from the plan (no log)"
    lines += ["", f"### Per CLI, {source}", ""]
    rows = [
        [
            tool_name(c.tool),
            str(c.dispatches),
            f"{c.tokens:,}",
            money_text(c.money.cost, c.money.estimated) if c.money.known else "-",
            str(c.failures),
            str(c.retries),
        ]
        for c in report.clis
    ]
    lines += (
        table(["CLI", "Dispatches", "Tokens", "Cost", "Failures", "Retries"], rows)
        if rows
        else ["No dispatches."]
    )
    return lines + ["", ESTIMATE_NOTE + _price_note(report), ""]


def _price_note(report: Report) -> str:
    """Models no price covers, named; "at API prices" where the caps are in tokens."""
    spent = report.spend or {}
    unpriced = sorted({m for v in (spent.get("vendors") or {}).values() for m in v["unpriced"]})
    note = f" No price for {', '.join(unpriced)}: its dollars are unknown." if unpriced else ""
    if spent.get("at_api_prices"):
        note += " Dollars are at API prices: your caps are in tokens (a subscription)."
    return note


def _caps_lines(report: Report) -> list[str]:
    """Each cap of the latest run against what it counts, and how to raise it."""
    spent = report.spend or {}
    if not spent.get("caps"):
        return []
    return [
        f"### Caps of run {spent['run']}",
        "",
        *[f"- {cap_line(row)}; to raise it: {row['raise']}" for row in spent["caps"]],
        "",
    ]


def bullets(heading: str, items: list[str], empty: str) -> list[str]:
    return [f"## {heading}", "", *([f"- {item}" for item in items] or [empty]), ""]


def _failures_section(report: Report) -> list[str]:
    return bullets(
        "Failures and how they were resolved",
        report.resolutions,
        "None: every dispatch succeeded on its first attempt.",
    )


def _budget_section(report: Report) -> list[str]:
    lines = ["## Budgets", "", *_caps_lines(report)]
    if not report.checks:
        return lines + ["No dispatch has token counts to check.", ""]
    rows = []
    for tool, limits in report.budgets.items():
        mine = [c for c in report.checks if c.tool == tool]
        if not mine:
            continue
        top = max(c.tokens for c in mine)
        over = sum(1 for c in mine if c.level != "ok")
        rows.append(
            [
                tool_name(tool),
                f"{limits.budget:,}",
                f"{limits.yellow:,}",
                f"{limits.abort:,}",
                str(len(mine)),
                f"{top:,}",
                str(over),
            ]
        )
    lines += table(
        ["CLI", "Budget", "Yellow", "Abort", "Checked", "Highest", "Over budget"], rows
    ) + [""]
    flagged = [c for c in report.checks if c.level != "ok"]
    for check in flagged:
        per = " (per attempt, on average)" if check.average else ""
        lines.append(
            f"- {check.what} on {tool_name(check.tool)}: {check.tokens:,} tokens{per}, level {check.level}"
        )
    if not flagged:
        lines.append(f"All {len(report.checks)} checked dispatch(es) stayed within budget.")
    what = "dispatch" if report.has_log else "task (its tokens divided by its attempts: no log)"
    return lines + [
        "",
        (
            f"Checked per {what} against the thresholds above (defaults or `[budgets.CLI]` "
            "in the config); over the abort threshold a streaming CLI is stopped."
        ),
        "",
    ]


def _challenges_section(report: Report) -> list[str]:
    challenges = report.plan.challenges
    if not challenges:
        return []
    lines = ["## Challenges", ""]
    titles = dict(CHALLENGE_CATEGORIES)
    for c in challenges:
        cost = money_text(c.cost, c.cost_estimated)
        if c.parsed:
            found = (
                ", ".join(f"{titles.get(k, k).lower()} {len(v)}" for k, v in c.findings.items())
                or "no findings"
            )
        else:
            found = "did not parse (kept verbatim in the plan)"
        lines.append(
            f"- {c.id}, {tool_name(c.challenger)} at `{c.time}`: {found}; {c.usage.total:,} tokens, {cost}"
        )
    return lines + [""]


def _reviews_section(report: Report) -> list[str]:
    reviews = report.plan.reviews
    if not reviews:
        return []
    rows = []
    for r in reviews:
        counts: dict[str, int] = {}
        for f in r.findings:
            counts[f.severity or "note"] = counts.get(f.severity or "note", 0) + 1
        found = ", ".join(f"{n} {s}" for s, n in counts.items()) or "-"
        rows.append(
            [
                r.id,
                r.task,
                tool_name(r.reviewer),
                str(r.round),
                r.verdict or "format failure",
                found,
                r.outcome or "-",
                f"{r.usage.total:,}",
                money_text(r.cost, r.cost_estimated),
            ]
        )
    return (
        ["## Reviews", ""]
        + table(
            [
                "Review",
                "Task",
                "Reviewer",
                "Round",
                "Verdict",
                "Findings",
                "Outcome",
                "Tokens",
                "Cost",
            ],
            rows,
        )
        + [""]
    )


def _pull_request_section(report: Report) -> list[str]:
    pr = report.pull_request
    if not pr:
        return []
    lines = ["## Pull request", "", pull_request_line(pr), ""]
    checks = pr.get("checks") or []
    if checks:
        lines += table(
            ["Check", "State"], [[str(c.get("name")), str(c.get("state"))] for c in checks]
        )
        lines.append("")
    lines += [
        f"- CI round {n} ({rnd.get('at')}): {round_text(rnd)}."
        for n, rnd in enumerate(pr.get("rounds") or [], 1)
    ]
    return lines + ([""] if pr.get("rounds") else [])


def _recommendations(report: Report) -> list[str]:
    return bullets(
        "Recommendations",
        report.recommendations,
        "None: every task finished on its first attempt, within budget.",
    )


def _head(report: Report) -> list[str]:
    lines = ["# Maestro report", "", f"**Goal:** {' '.join(report.plan.goal.split())}", ""]
    sources = f" from {', '.join(report.sources)}" if report.sources else ""
    log = f" ({report.sessions} session(s), {report.rows} log row(s))" if report.has_log else ""
    lines += [f"Generated {report.generated}{sources}{log}.", ""]
    for note in report.missing:
        lines += [f"> **Missing:** {note}", ""]
    return lines


def render_markdown(report: Report, *, brief: bool = False) -> str:
    lines = _head(report)
    lines += ["## Summary", ""] + table(["Item", "Figure"], summary_rows(report)) + [""]
    if brief:
        lines += _failures_section(report) + _recommendations(report)
        return "\n".join(lines).rstrip() + "\n"
    lines += _plan_section(report)
    lines += _steps_section(report)
    lines += _timeline_section(report)
    lines += _cost_section(report)
    lines += _failures_section(report)
    lines += _budget_section(report)
    lines += _challenges_section(report)
    lines += _reviews_section(report)
    lines += _pull_request_section(report)
    lines += _recommendations(report)
    return "\n".join(lines).rstrip() + "\n"

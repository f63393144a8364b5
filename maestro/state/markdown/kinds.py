"""The three record kinds of the plan file and their fields, in canonical order."""

from __future__ import annotations

import re
from typing import Any

from maestro.state import model as m
from maestro.state.codecs import fields as f
from maestro.state.codecs import nested as n
from maestro.state.codecs import values as v
from maestro.state.markdown.records import Kind, Spec

REVIEW_OUTCOMES = ("accepted", "revising", "blocked", "needs-human", "format-failure")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _attr(name: str, label: str, codec: f.Codec, **kw: Any) -> Spec:
    return Spec(
        name, label, codec, lambda o: getattr(o, name), lambda o, x: setattr(o, name, x), **kw
    )


def _listed(name: str, label: str, codec: f.Codec) -> Spec:
    return Spec(
        name,
        label,
        codec,
        lambda o: tuple(getattr(o, name)),
        lambda o, x: setattr(o, name, list(x)),
    )


def _usage() -> Spec:
    def put(o: Any, x: Any) -> None:
        o.usage = m.Usage(*x)

    return Spec(
        "usage", "Tokens", f.Usage(), lambda o: (o.usage.input, o.usage.output, o.usage.cached), put
    )


def _cost() -> Spec:
    def put(o: Any, x: Any) -> None:
        o.cost, o.cost_estimated = x

    return Spec("cost", "Cost", f.Cost(), lambda o: (o.cost, o.cost_estimated), put)


def _freeze_findings(items: Any) -> Any:
    return None if items is None else tuple((i.text, i.task, i.severity) for i in items)


def _thaw_findings(items: Any) -> Any:
    return None if items is None else [m.Finding(t, task, sev) for t, task, sev in items]


def _category(key: str, label: str) -> Spec:
    def put(o: Any, x: Any) -> None:
        if x is None:
            o.findings.pop(key, None)
        else:
            o.findings[key] = _thaw_findings(x)

    return Spec(
        f"findings.{key}", label, n.Findings(), lambda o: _freeze_findings(o.findings.get(key)), put
    )


def _receipt() -> Spec:
    def get(o: Any) -> Any:
        r = o.receipt
        if r is None:
            return None
        return (
            r.diff_stat,
            tuple(r.files_changed),
            r.validation,
            r.validation_exit,
            r.commit,
            r.diff_sha,
            r.change,
        )

    def put(o: Any, x: Any) -> None:
        o.receipt = None if x is None else m.Receipt(x[0], list(x[1]), *x[2:])

    return Spec("receipt", "Receipt", n.Receipt(), get, put)


def _check_task_head(task: Any) -> None:
    v.check_id("task id", task.id)
    v.check_line("title", task.title)


def _check_challenge_head(ch: Any) -> None:
    if not isinstance(ch.id, str) or not _ID.fullmatch(ch.id):
        raise v.FieldError(
            f"an invalid id ({ch.id!r})", "use letters, digits, dots and dashes, e.g. 1 or C1."
        )
    v.check_line("challenger", ch.challenger)
    if not isinstance(ch.findings, dict) or set(ch.findings) - {
        k for k, _ in m.CHALLENGE_CATEGORIES
    }:
        raise v.FieldError(
            "findings under unknown categories",
            "use " + ", ".join(k for k, _ in m.CHALLENGE_CATEGORIES) + ".",
        )


def _check_review_head(rv: Any) -> None:
    if not isinstance(rv.id, str) or not _ID.fullmatch(rv.id):
        raise v.FieldError(
            f"an invalid id ({rv.id!r})", "use letters, digits, dots and dashes, e.g. 1 or R1."
        )
    v.check_id("task", rv.task)


TASK = Kind(
    word="Task",
    heading_re=re.compile(r"#{3}[ \t]+Task[ \t]+([^\s:]+)[ \t]*:[ \t]*(.+)"),
    heading_fix="write it as `### Task <id>: <title>`, with an id like 3 or 3.1.",
    specs=(
        _attr("status", "Status", f.Choice(m.STATUSES, "pending"), always=True),
        _attr("specialist", "Specialist", f.Choice(m.SPECIALISTS)),
        _attr("agent", "Agent", f.Line()),
        _attr("tool", "Tool", f.Choice(m.TOOLS)),
        _listed("depends", "Depends", f.Ids()),
        _listed("files", "Files", f.Codes()),
        _listed("criteria", "Criteria", n.Items()),
        _attr("validation", "Validation", f.Code()),
        _attr("risk", "Risk", f.Choice(m.RISKS)),
        _attr("mode", "Mode", f.Choice(m.TASK_MODES)),
        _attr("parent", "Parent", f.Id()),
        _attr("result", "Result", f.Text()),
        _attr("attempts", "Attempts", f.Int(0, default=0)),
        _usage(),
        _cost(),
        _attr("started", "Started", f.Iso()),
        _attr("finished", "Finished", f.Iso()),
        _attr("session", "Session", f.Line()),
        _attr("pid", "PID", f.Int(1)),
        _attr("run_id", "Run", f.Line()),
        _receipt(),
        _attr("review", "Review", f.Choice(m.REVIEW_STATES)),
        _attr("downstream_context", "Downstream Context", f.Text(block=True)),
    ),
    make=lambda g: m.Task(id=g[0], title=g[1].strip()),
    head=lambda t: (t.id, t.title),
    heading_line=lambda t: f"### Task {t.id}: {t.title}\n",
    check_head=_check_task_head,
    # Format 0 (the design notes' file, no version marker) wrote the tool as free text
    # under "Assigned" (e.g. "Gemini CLI"); planfile's upgrade step maps it to a name.
    aliases={0: {"assigned": _attr("tool", "Assigned", f.Line())}},
)

CHALLENGE = Kind(
    word="Challenge",
    heading_re=re.compile(r"#{3}[ \t]+Challenge[ \t]+([^\s:]+)[ \t]*:[ \t]*(.+)"),
    heading_fix="write it as `### Challenge <id>: <challenger>`, e.g. `### Challenge 1: gemini`.",
    specs=(
        _attr("time", "Time", f.Iso(), required=True),
        _attr("parsed", "Parsed", f.YesNo()),
        _usage(),
        _cost(),
        *(_category(key, label) for key, label in m.CHALLENGE_CATEGORIES),
        _attr("raw", "Raw", n.Fence()),
    ),
    make=lambda g: m.Challenge(id=g[0], challenger=g[1].strip(), time=""),
    head=lambda c: (c.id, c.challenger),
    heading_line=lambda c: f"### Challenge {c.id}: {c.challenger}\n",
    check_head=_check_challenge_head,
    aliases={},
)

REVIEW = Kind(
    word="Review",
    heading_re=re.compile(r"#{3}[ \t]+Review[ \t]+([^\s:]+)[ \t]*:[ \t]*Task[ \t]+(\S+)"),
    heading_fix="write it as `### Review <id>: Task <task id>`, e.g. `### Review 1: Task 3`.",
    specs=(
        _attr("reviewer", "Reviewer", f.Line(), required=True),
        _attr("round", "Round", f.Int(0), required=True),
        _attr("time", "Time", f.Iso(), required=True),
        _attr("verdict", "Verdict", f.Choice(m.VERDICTS)),
        Spec(
            "findings",
            "Findings",
            n.Findings(default=()),
            lambda o: _freeze_findings(o.findings),
            lambda o, x: setattr(o, "findings", _thaw_findings(x)),
        ),
        _usage(),
        _cost(),
        _attr("diff_sha", "Diff SHA", f.Line()),
        _attr("outcome", "Outcome", f.Choice(REVIEW_OUTCOMES)),
    ),
    make=lambda g: m.Review(id=g[0], task=g[1], reviewer="", round=0, time="", verdict=None),
    head=lambda r: (r.id, r.task),
    heading_line=lambda r: f"### Review {r.id}: Task {r.task}\n",
    check_head=_check_review_head,
    aliases={},
)

KINDS = {"tasks": TASK, "challenges": CHALLENGE, "reviews": REVIEW}

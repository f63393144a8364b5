"""Quality gates on a spoke's result (design notes, "Quality Gates").

- format: the answer holds a valid Result Submission (``parse_result().problems`` empty);
- criteria: every success criterion of the task is marked verified (``- [x]``) in the
  submission's Verification list, and the spoke did not report failed/blocked;
- scope: the files the dispatch really changed (from git, see receipts.py) are inside
  the task's ``Files``;
- integration: the task's validation command, run by Maestro, exits 0.

``validation_strictness`` decides what an unmet gate does: strict, any unmet gate fails;
normal, out-of-scope edits fail and unverified criteria only warn; lenient, both warn.
A malformed answer and a failing validation command fail at every level: there is no
result to accept.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro import passenv, sandbox
from maestro.engine import ladder
from maestro.engine.attempt import FAIL, PASS, SKIP, WARN, Attempt, GateResult
from maestro.errors import SpokeError
from maestro.formatting import cleaned
from maestro.process import run_process
from maestro.prompts.results import parse_result

if TYPE_CHECKING:  # attempt.py and the pipeline import this module: types only
    from maestro.engine.runcontext import RunContext, Workspace
    from maestro.engine.worktree import Scope
    from maestro.spokes.contract import SpokeResult
    from maestro.state.model import Task


def format_gate(parsed: Any) -> GateResult:
    problems = list(getattr(parsed, "problems", []) or [])
    if problems:
        return GateResult("format", FAIL, "; ".join(problems))
    return GateResult("format", PASS)


_WORD = re.compile(r"[a-z0-9]+")
_STOP = {
    "the",
    "a",
    "an",
    "and",
    "or",
    "of",
    "to",
    "in",
    "is",
    "are",
    "be",
    "for",
    "with",
    "it",
    "its",
    "on",
}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def match_criteria(
    criteria: Sequence[str], verification: Sequence[tuple[bool, str]]
) -> list[tuple[str, bool | None]]:
    """Pair each criterion with the Verification line that names it.

    A spoke writes ``- [x] <criterion> - how it was verified``, rarely word for word, so a
    line names a criterion when it holds at least 60% of the criterion's words (stop words
    aside). Each line is used once, best match first. Returns (criterion, checked) with
    checked None when no line names it.
    """
    scored = []
    for ci, criterion in enumerate(criteria):
        want = _words(criterion)
        for vi, (_, text) in enumerate(verification):
            if want:
                score = len(want & _words(text)) / len(want)
            else:
                score = 1.0 if criterion.strip().lower() in text.lower() else 0.0
            if score >= 0.6:
                scored.append((score, ci, vi))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    taken_c: dict[int, bool] = {}
    taken_v: set[int] = set()
    for _, ci, vi in scored:
        if ci in taken_c or vi in taken_v:
            continue
        taken_c[ci] = bool(verification[vi][0])
        taken_v.add(vi)
    return [(criterion, taken_c.get(ci)) for ci, criterion in enumerate(criteria)]


def criteria_gate(criteria: Sequence[str], parsed: Any, strictness: str) -> GateResult:
    submission = getattr(parsed, "submission", None)
    status = (getattr(submission, "status", "") or "").strip().lower()
    verification = list(getattr(submission, "verification", []) or [])
    if status in ("failed", "blocked"):
        issues = getattr(submission, "issues", "") or ""
        issues_text = issues if isinstance(issues, str) else "; ".join(map(str, issues))
        detail = f"the spoke reported status {status}" + (
            f": {' '.join(issues_text.split())}" if issues_text.strip() else ""
        )
        return GateResult("criteria", FAIL, detail)
    pairs = match_criteria(criteria, verification)
    unmet = [c for c, checked in pairs if not checked]
    problems = []
    if unmet:
        missing = [c for c, checked in pairs if checked is None]
        unchecked = [c for c, checked in pairs if checked is False]
        if unchecked:
            problems.append("not verified: " + "; ".join(unchecked))
        if missing:
            problems.append("not reported: " + "; ".join(missing))
    if status == "partial":
        problems.insert(0, "the spoke reported status partial")
    if not problems:
        return GateResult(
            "criteria", PASS, f"{len(pairs)} of {len(pairs)} verified" if pairs else "no criteria"
        )
    return GateResult("criteria", FAIL if strictness == "strict" else WARN, "; ".join(problems))


OUTSIDE = "changed outside its worktree while it ran, each put back as it was: "


def scope_gate(scope: Scope, strictness: str) -> GateResult:
    """Work changed in the user's tree or repository while the dispatch ran (the isolation
    itself was bypassed) and work that must not or cannot land fail at every strictness;
    out-of-scope edits fail unless lenient; files the answer names while its worktree holds
    no change at all (written where git does not see it: a submodule, an ignored folder)
    and ambiguous ones warn, so the task is never silently done without its work."""
    if not scope.checked:
        return GateResult("scope", SKIP, "not a git repository: file changes cannot be measured")
    if scope.outside:
        saved = scope.saved
        where = (
            f"; the versions found are in {saved}/ (if the change was yours, "
            f"`cp -a {saved}/tree/. .` takes it back)"
            if saved
            else ""
        )
        return GateResult("scope", FAIL, OUTSIDE + ", ".join(scope.outside) + where, scope.outside)
    if scope.unlandable:
        return GateResult(
            "scope",
            FAIL,
            "; ".join(u.line() for u in scope.unlandable),
            [u.path for u in scope.unlandable],
            " ".join(dict.fromkeys(u.fix for u in scope.unlandable)),
        )
    if scope.out_of_scope:
        level = WARN if strictness == "lenient" else FAIL
        changed = scope.out_of_scope
        return GateResult(
            "scope", level, "changed outside its Files: " + ", ".join(changed), changed
        )
    if scope.unmeasured:
        return GateResult(
            "scope",
            WARN,
            "its answer names changed files but its worktree holds no change: "
            + ", ".join(scope.unmeasured),
            scope.unmeasured,
        )
    if scope.ambiguous:
        return GateResult(
            "scope",
            WARN,
            "unowned files changed while other tasks ran too: " + ", ".join(scope.ambiguous),
            scope.ambiguous,
        )
    return GateResult("scope", PASS)


def integration_gate(
    command: str | None,
    exit_code: int | None,
    *,
    timed_out: bool = False,
    output: str = "",
    limited: bool = False,
) -> GateResult:
    """``limited``: its sandbox refused it a fork (its output's last line says): it fails
    whatever its exit code."""
    if not command:
        return GateResult("integration", SKIP, "no validation command")
    if timed_out:
        return GateResult("integration", FAIL, f"`{command}` timed out")
    if exit_code == 0 and not limited:
        return GateResult("integration", PASS, f"`{command}` exited 0")
    if exit_code is None:  # why, in one line from its start (a sandbox's fault and fix)
        said = " ".join(output.split())[:400]
        return GateResult("integration", FAIL, f"`{command}` did not start: {said}")
    tail = " ".join(output.split())[-200:]
    return GateResult(
        "integration", FAIL, f"`{command}` exited {exit_code}" + (f": {tail}" if tail else "")
    )


@dataclass(frozen=True)
class Validation:
    """One run of a task's validation command."""

    command: str
    exit_code: int | None
    timed_out: bool
    output: str  # stdout, then stderr, stripped
    limited: bool = False  # refused a fork past its sandbox's limit (its output says)

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.limited


def run_validation(
    command: str,
    *,
    root: Path,
    env: Mapping[str, str],
    timeout_s: float,
    confined: sandbox.Rules | None,
    state: Path,
    passes: Sequence[str],
) -> Validation:
    """The one way a task's validation command runs (the integration gate, a review): a
    person's command from the plan, which may use pipes or &&, so it is run by sh, with
    the entries of ``env`` that ``passenv`` allows and those named in ``passes`` (the
    ``sandbox_env`` setting); ``confined``, it writes only its worktree (not ``state``,
    the project's state folder when that lies within) and a private /tmp, reads none of
    the CLIs' state nor the office's store, and reaches only the sandbox_hosts setting's
    hosts (what it was refused ends its output, forks past its bound too, and then it
    does not pass; no door for it: exit code None, the reason its output)."""

    argv = ["/bin/sh", "-c", command]
    env = passenv.allowed(env, *passes)
    bound = None
    if confined is None:
        out = run_process(argv, cwd=root, env=dict(env), timeout_s=timeout_s)
        refused = ""
    else:
        try:
            with (
                tempfile.TemporaryDirectory(prefix="maestro-check-") as scratch,
                sandbox.network(confined) as door,
                sandbox.bounded(confined) as bound,
            ):
                # The office's store is private to the office (a spoke can write a
                # subtask's validation command).
                store = [state / "maestro" / "mail", state / "maestro" / "sessions"]
                policy = sandbox.work_policy(
                    root, env, writes=True, scratch=Path(scratch), state=state, hidden=store
                )
                policy = sandbox.placed(policy, door, bound)
                wrapped, run_env = sandbox.wrap(argv, policy, confined)
                out = run_process(
                    wrapped, cwd=root, env=run_env, timeout_s=timeout_s, **sandbox.starting(door)
                )
        except SpokeError as exc:
            return Validation(command, None, False, exc.message)
        # Its sandbox could not start it, or was killed: said as that, not as its own exit.
        fault = sandbox.fault("the validation command", out, read_only=False)
        if fault:
            return Validation(command, None, False, fault)
        refused = sandbox.refusals(door, bound)
    output = cleaned(out.stdout + "\n" + out.stderr).strip()  # a test runner's colours
    said = "\n".join(filter(None, (output, refused)))
    return Validation(command, out.exit_code, out.timed_out, said, bool(bound and bound.refused))


def warnings(gates: list[GateResult]) -> list[str]:
    """Unmet gates that did not fail, and a scope that could not be checked at all (a
    missing validation command is the plan's choice, not a warning)."""
    return [g.line() for g in gates if g.level == WARN or (g.gate == "scope" and g.level == SKIP)]


def apply(
    ctx: RunContext, task: Task, attempt: Attempt, result: SpokeResult, space: Workspace
) -> None:
    """The gates, in order, on the spoke answer ``result`` that came back; sets
    ``attempt.failure``. ``space`` is where the dispatch worked: it says what the spoke
    changed, and the validation command runs there."""

    strictness = ctx.settings.validation_strictness
    parsed = parse_result(result.text or "")
    attempt.parsed = parsed
    fmt = format_gate(parsed)
    attempt.gates.append(fmt)
    if fmt.failed:
        attempt.failure = ladder.Failure(
            ladder.GATE,
            f"format gate: {fmt.detail}",
            context=f"Your answer could not be read: {fmt.detail}. End your answer with the Result "
            "Submission and the Handoff Report exactly in the Output Format given above.",
        )
        return
    attempt.gates.append(criteria_gate(task.criteria, parsed, strictness))
    # Read before the validation command runs: what it writes is not the task's.
    attempt.gates.append(scope_gate(space.changes(parsed), strictness))
    attempt.gates.append(_integration(ctx, task, attempt, space))
    failed = [g for g in attempt.gates if g.failed]
    scope = next((g for g in failed if g.gate == "scope"), None)
    if scope is not None:
        attempt.failure = ladder.Failure(
            ladder.SCOPE,
            f"scope gate: {scope.detail}",
            scope.fix
            or (
                f"keep its spoke to its worktree (its prompt, or `maestro run {task.id} --clarify`), "
                "then run the task again."
                if scope.detail.startswith(OUTSIDE)
                else "revert or re-plan those edits, then run the task again."
            ),
        )
    elif failed:
        attempt.failure = ladder.Failure(
            ladder.GATE,
            "; ".join(f"{g.gate} gate: {g.detail}" for g in failed),
            context="\n".join(f"- The {g.gate} gate failed: {g.detail}" for g in failed),
        )


def _integration(ctx: RunContext, task: Task, attempt: Attempt, space: Workspace) -> GateResult:
    if not task.validation:
        return integration_gate(None, None)
    env = dict(ctx.env)
    env.update({"MAESTRO_RUN_ID": ctx.run.run_id, "MAESTRO_TASK_ID": task.id})
    # What it changes outside the worktree is put back and fails the gate, as a spoke's
    # would (a command from the plan runs as the person, unsandboxed).
    with space.validation() as found:
        ran = run_validation(
            task.validation,
            root=space.check_root,
            env=env,
            timeout_s=attempt.timeout_s,
            confined=ctx.sandbox,
            state=ctx.paths.state_dir,
            passes=ctx.settings.sandbox_env,
        )
    attempt.validation_exit = ran.exit_code
    attempt.validation_output = ran.output
    if found:
        return GateResult(
            "integration",
            FAIL,
            f"`{task.validation}` {OUTSIDE}{', '.join(found.paths)}; the versions found are in "
            f"{found.shown}/",
            list(found.paths),
        )
    return integration_gate(
        task.validation,
        ran.exit_code,
        timed_out=ran.timed_out,
        output=ran.output,
        limited=ran.limited,
    )

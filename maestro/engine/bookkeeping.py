"""What a task's attempts leave in the plan, the log and the events: the task marked
running, each attempt's row and receipt, its tokens and cost, and its end (done, failed,
blocked or left pending). ``TaskRunner`` (pipeline.py) is built on it."""

from __future__ import annotations

import os
from typing import Any

from maestro import clock
from maestro.bus.sessions import SessionStore
from maestro.bus.workers import run_session_id
from maestro.engine import gates, ladder
from maestro.engine.attempt import Attempt, receipt_note
from maestro.engine.budgets import limits_for
from maestro.engine.dispatch import log_row
from maestro.engine.runcontext import RunContext
from maestro.engine.scheduler import Outcome
from maestro.formatting import shown_path
from maestro.state.model import Receipt, Task, Usage


class Bookkeeping:
    """The records half of ``TaskRunner``."""

    ctx: RunContext

    def revise(self, task_id: str, context: str, resume_session: str | None) -> str:
        """A review round's findings back to the task's author (``TaskRunner``)."""
        raise NotImplementedError

    def tidy(self) -> None:
        """Do what this thread's accepted attempts left to do (``TaskRunner``)."""
        raise NotImplementedError

    def _stopped_reason(self, session_id: str) -> str | None:
        """Why the attempt's session was stopped (`maestro session stop`), or None."""
        session = SessionStore(self.ctx.paths).peek(session_id)
        if session.recorded_status == "stopped":
            return str(session.data.get("reason") or "stopped")
        return None

    # -- accounting -------------------------------------------------------------------------
    @staticmethod
    def _charge(task: Task, attempt: Attempt) -> None:
        """Add an attempt's tokens and cost to the task, inside the edit that records what
        came of it (every attempt counts, failed ones too)."""
        result = attempt.result
        if result is None or attempt.charged:
            return
        attempt.charged = True
        task.usage = task.usage + result.usage
        if result.cost is not None:
            task.cost = round((task.cost or 0.0) + result.cost, 6)
            task.cost_estimated = task.cost_estimated or bool(result.cost_estimated)
        if result.session_id:
            task.session = result.session_id

    def _log_attempt(self, task_id: str, attempt: Attempt, number: int, retry: bool) -> None:
        """One log row per dispatch."""
        ctx = self.ctx
        result = attempt.result
        usage = result.usage if result is not None else Usage()
        notes = [f"attempt {number}"]
        if attempt.level != "ok":
            limits = limits_for(attempt.tool, ctx.settings.table("budgets"))
            line = {"over": limits.budget, "yellow": limits.yellow, "red": limits.abort}[
                attempt.level
            ]
            label = {"over": "⚠️ over budget", "yellow": "⚠️ yellow", "red": "🛑 red"}[attempt.level]
            notes.append(f"{label} ({usage.total:,} > {line:,})")
        if result is not None and result.simulated:
            notes.append("simulated")
        if result is not None and result.not_resumed:
            notes.append(f"a fresh session: {result.not_resumed}")
        notes += gates.warnings(attempt.gates)
        if attempt.receipt is not None:
            notes.append(receipt_note(attempt.receipt, measured=ctx.workspaces.measures))
        log_row(
            ctx.log,
            action="Retry" if retry else "Dispatch",
            target=f"Task {task_id}",
            tool=attempt.tool,
            result=result,
            ok=attempt.failure is None,
            outcome=attempt.failure.reason[:120] if attempt.failure else "",
            notes="; ".join(notes),
            task=task_id,
            retry=retry,
        )

    # -- state transitions -------------------------------------------------------------
    def _mark_running(self, task_id: str, tool: str, agent: str | None) -> int:
        ctx = self.ctx
        # Not fsynced: after a crash of the machine the next run finds the task running and
        # puts it back to pending, or finds it pending; either way it runs again. Only the
        # write that accepts a task must survive one.
        with ctx.store.edit_task(task_id, durable=False) as task:
            task.status = "running"
            task.attempts += 1
            task.tool = tool
            if agent:
                task.agent = agent
            task.pid = os.getpid()
            task.run_id = ctx.run.run_id
            if task.started is None or task.finished is not None:
                task.started = clock.iso()
                task.finished = None
            return task.attempts

    def _spent(
        self,
        task_id: str,
        tool: str,
        usage: Usage,
        cost: float | None,
        estimated: bool,
        **more: Any,
    ) -> None:
        """One dispatch's ``spend`` event (a task's, its review's), counted against the
        caps (engine/caps.py), which it may bring to 80% or 100%."""
        self.ctx.budget.add(
            self.ctx.emit(
                "spend",
                task=task_id,
                tool=tool,
                tokens=usage.total,
                cost=cost,
                cost_estimated=estimated or None,
                **more,
            )
        )

    def _leave_pending(self, task_id: str, reason: str) -> Outcome:
        with self.ctx.store.edit_task(task_id) as task:
            task.status = "pending"
            task.pid = None
        self.ctx.emit("task_pending", task=task_id, reason=reason)
        return Outcome("pending", reason, stop_run=reason)

    def _finish_done(
        self, task_id: str, attempt: Attempt, duration: float, *, review: bool = True
    ) -> Outcome:
        ctx = self.ctx
        receipt = attempt.receipt or Receipt(
            validation=attempt.validation, validation_exit=attempt.validation_exit
        )
        submission = attempt.parsed.submission if attempt.parsed else None
        handoff = attempt.parsed.handoff if attempt.parsed else None
        warnings = gates.warnings(attempt.gates)
        landing = attempt.landing
        shown = (
            shown_path(landing.patch_file, ctx.paths.root) if landing and landing.patch_file else ""
        )
        landed = landing.note(shown) if landing else ""
        if landing is not None and landing.status == "conflict":
            ctx.unlanded.append((task_id, landed))
        elif landing is not None and landing.commit_error:
            ctx.uncommitted.append((task_id, landed))
        with ctx.store.edit_task(task_id) as task:
            self._charge(task, attempt)
            task.status = "done"
            summary = " ".join((submission.summary if submission else "").split()) or "done"
            task.result = summary + (f" (warnings: {'; '.join(warnings)})" if warnings else "")
            if landed:
                task.result += f" Note: {landed}."
            task.finished = clock.iso()
            superseded = task.receipt.change if task.receipt else None
            task.receipt = receipt
            task.pid = None
            if handoff is not None and handoff.downstream_context.strip():
                task.downstream_context = handoff.downstream_context.strip()
            tokens, cost, estimated = task.usage.total, task.cost, task.cost_estimated
        if superseded and superseded != receipt.change:
            ctx.workspaces.release(superseded)  # no receipt names it any more
        ctx.emit(
            "task_done",
            task=task_id,
            tool=attempt.tool,
            tokens=tokens,
            cost=cost,
            cost_estimated=estimated or None,
            duration_s=round(duration, 3),
            warnings=warnings or None,
            files=receipt.files_changed or None,
            validation_exit=receipt.validation_exit,
            landed=landing.status if landing else None,
            patch=str(landing.patch_file) if landing and landing.patch_file else None,
            commit=landing.committed if landing else None,
        )
        if review and ctx.options.review and ctx.review is not None:
            # Its dependents wait for the review anyway: the attempt's session, worktree
            # and log row are not left waiting for it (minutes, maybe).
            self.tidy()
            # The review is this run's dispatch: its session answers to the run's.
            seen = {r.id for r in ctx.store.view().reviews}

            def counted() -> None:
                """Each review round's spend, against the run's, the task's and the day's
                caps, as soon as the round ends: before a revision it asks for starts."""
                for made in [r for r in ctx.store.view().reviews if r.id not in seen]:
                    seen.add(made.id)
                    self._spent(
                        task_id,
                        made.reviewer,
                        made.usage,
                        made.cost,
                        made.cost_estimated,
                        review=made.id,
                    )

            def revise(tid: str, context: str, session: str | None) -> str:
                counted()
                return self.revise(tid, context, session)

            ctx.review(task_id, revise=revise, session=run_session_id(ctx.run.run_id))
            counted()
            status = ctx.store.view().task(task_id).status
            # Its revision refused at a cap (or the run stopping): the run pauses too.
            paused = (
                (ctx.budget.refusal(task_id) or ctx.stopping()) if status == "pending" else None
            )
            if status != "done":
                return Outcome(status, f"review: {paused or status}", stop_run=paused)
        return Outcome("done")

    def _finish_unsuccessful(
        self, task_id: str, status: str, reason: str, attempt: Attempt
    ) -> Outcome:
        ctx = self.ctx
        receipt = attempt.receipt
        fix = attempt.failure.fix if attempt.failure else None
        if attempt.kept is not None:
            reason += f" (its worktree is kept: {shown_path(attempt.kept, ctx.paths.root)})"
        options = ladder.decision_options(task_id, ctx.installed)
        with ctx.store.edit_task(task_id) as task:
            self._charge(task, attempt)
            task.status = status
            task.result = (
                reason + (f" Fix: {fix}" if fix else "") + " " + ladder.decision_text(options)
            )
            task.finished = clock.iso()
            task.pid = None
            if receipt is not None and (receipt.files_changed or task.receipt is None):
                task.receipt = receipt
        ctx.emit(f"task_{status}", task=task_id, reason=reason, fix=fix)
        ctx.emit("decision", task=task_id, status=status, reason=reason, options=options)
        return Outcome(status, reason)

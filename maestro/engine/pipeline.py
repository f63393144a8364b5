"""One task through the pipeline, attempt after attempt, until the ladder says stop.

Per attempt: re-read the task, route it to a CLI, re-run AAVSR, build the delegation
prompt, mark the task running, call the spoke (under the agent's timeout and the CLI's
token abort threshold), measure the files it changed, parse its answer, run the gates,
account tokens and cost, and write one log row. Then the retry ladder decides: done,
retry, retry with more context, fail or block. Every change of the task goes through
``PlanStore.edit()``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from maestro import clock, planning
from maestro.bus.mailbox import Mailbox
from maestro.bus.sessions import SessionStore
from maestro.bus.workers import end_session, run_session_id
from maestro.engine import ladder
from maestro.engine.attempt import Attempt, expanded_context
from maestro.engine.dispatch import Dispatch
from maestro.engine.dispatching import Dispatching
from maestro.engine.hierarchy import children, subtask_summary, unfinished
from maestro.engine.routing import choose, task_tier
from maestro.engine.runcontext import RunContext
from maestro.engine.scheduler import Outcome
from maestro.errors import MaestroError
from maestro.state.model import Task, copy_of

if TYPE_CHECKING:
    from maestro.state.model import Plan


class TaskRunner(Dispatching):
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        # The session of each task's latest attempt: a spawned subtask's coordinator.
        self.sessions: dict[str, str] = {}
        # Notified whenever a task settles: a coordinating task waits on it for its subtasks.
        self._settled = threading.Condition()
        # The coordinating tasks (Mode: coordinate) this runner works on now: only their
        # spokes spawn subtasks, so without them nothing reads the plan for subtasks.
        self.coordinating: set[str] = set()
        # Per thread: what its accepted attempts left to do (``later``, ``tidy``).
        self._left = threading.local()

    # -- the ladder -------------------------------------------------------------------
    def run(
        self,
        task_id: str,
        *,
        extra: str | None = None,
        resume_session: str | None = None,
        review: bool = True,
    ) -> Outcome:
        try:
            outcome = self._ladder(task_id, extra, resume_session, review)
        except MaestroError as exc:
            # A problem outside the ladder (a bad config table, git failing, a plan edit that
            # cannot be merged): the task must not stay marked running by a live engine.
            self._abandon(task_id, exc)
            outcome = Outcome("failed", str(exc))
        finally:
            self.coordinating.discard(task_id)
            with self._settled:
                self._settled.notify_all()
        self._tell_coordinator(task_id, outcome)
        return outcome

    def later(self, work: Callable[[], object]) -> None:
        """Work of an accepted attempt the next task need not wait for (its worktree
        removed, its log row, its session ended): done by ``tidy``, which the scheduler
        calls in the task's thread once it has the task's outcome, so the task's
        dependents start first."""
        self._left.__dict__.setdefault("work", []).append(work)

    def tidy(self) -> None:
        """Do what this thread's attempts left (``later``), in their order."""
        work, self._left.work = self._left.__dict__.get("work", []), []
        for one in work:
            one()

    def _tell_coordinator(self, task_id: str, outcome: Outcome) -> None:
        """A subtask's coordinating spoke follows its workers with `mail wait`: the engine
        tells it how each ended (the gates' verdict, or a failure the worker never got to
        report), so it never waits for a report that cannot come."""

        if not self.coordinating:
            return  # no spoke coordinates now: the task answers to the run alone
        try:
            task = self.ctx.store.view().find(task_id)
            coordinator = self._coordinator_of(task) if task is not None else None
            if coordinator is None:
                return
            said = {"pending": "left pending"}.get(outcome.status, outcome.status)
            subject = f"task {task_id} {said}" + (f": {outcome.note}" if outcome.note else "")
            Mailbox(self.ctx.paths).send(
                run_session_id(self.ctx.run.run_id),
                [coordinator],
                type="notification",
                priority="normal" if outcome.status == "done" else "high",
                subject=subject if len(subject) <= 120 else subject[:117] + "...",
                body=outcome.note or f"Task {task_id} is {outcome.status}.",
            )
        except MaestroError:
            pass  # the mailbox cannot be written: the plan still says how the task ended

    def _abandon(self, task_id: str, exc: MaestroError) -> None:
        options = ladder.decision_options(task_id, self.ctx.installed)
        try:
            with self.ctx.store.edit_task(task_id) as task:
                # Pending: it failed before it could start (no CLI to route it to).
                if task.status == "pending" or (
                    task.status == "running" and task.pid == os.getpid()
                ):
                    task.status, task.pid, task.finished = "failed", None, clock.iso()
                    task.result = f"{exc} {ladder.decision_text(options)}"
        except MaestroError:
            pass  # the plan itself cannot be written; the next run recovers the task
        self.ctx.emit("task_failed", task=task_id, reason=exc.message, fix=exc.fix)
        self.ctx.emit(
            "decision", task=task_id, status="failed", reason=exc.message, options=options
        )

    def _ladder(
        self, task_id: str, extra: str | None, resume_session: str | None, review: bool
    ) -> Outcome:
        extra = extra or self._clarification(task_id)
        if resume_session is None and self.ctx.options.task_id == task_id:
            resume_session = self.ctx.options.resume_session
        attempts = transient = 0
        began = time.monotonic()
        while True:
            # Before each attempt: a retry, and a revision too (a review's, a failing
            # check's), which no launch check of the scheduler's sees.
            if attempts or not review:
                refusal = self.ctx.budget.refusal(task_id) or self.ctx.stopping()
                if refusal:
                    return self._leave_pending(task_id, refusal)
            attempt = self.attempt(
                task_id,
                extra,
                retry=attempts > 0,
                resume_session=None if attempts else resume_session,
            )
            if attempt.held_back:
                return self._leave_pending(task_id, attempt.held_back)
            if attempt.skipped:
                return Outcome("pending", attempt.skipped)
            attempts += 1
            halted = self.ctx.budget.halted
            if halted and attempt.failure is not None and attempt.failure.kind == ladder.STOPPED:
                with self.ctx.store.edit_task(task_id) as task:
                    self._charge(task, attempt)
                return self._leave_pending(task_id, halted)
            if attempt.failure is None:
                return self._finish_done(task_id, attempt, time.monotonic() - began, review=review)
            step = ladder.next_step(
                attempt.failure,
                attempts=attempts,
                max_retries=self.ctx.settings.max_retries,
                transient_retries=transient,
                backoff_s=self.ctx.backoff_s,
            )
            if step.action in ("retry", "retry_with_context"):
                if attempt.result is not None:
                    with self.ctx.store.edit_task(task_id) as task:
                        self._charge(task, attempt)
                self.ctx.emit(
                    "task_retry",
                    task=task_id,
                    action=step.action,
                    reason=step.reason,
                    delay_s=step.delay_s or None,
                    attempt=attempts + 1,
                )
                if step.action == "retry":
                    transient += 1
                    if self._sleep(step.delay_s):
                        return self._leave_pending(task_id, self.ctx.stopping() or "stopped")
                else:
                    extra = expanded_context(self.ctx, task_id, attempt, extra)
                continue
            status = "failed" if step.action == "fail" else "blocked"
            return self._finish_unsuccessful(task_id, status, step.reason, attempt)

    def _after_subtasks(self, task: Task, plan: Plan, session_id: str) -> ladder.Failure | None:
        """A task whose spoke spawned subtasks is checked once they settle. Its spoke has
        ended, so its session ends now: its workers' `mail wait` says their coordinator
        is gone, and a subtask dispatched later answers to the run. (``plan``: the
        attempt's; only a coordinating task's spoke spawns more.)"""

        task_id = task.id
        if task.mode != "coordinate" and not children(plan, task_id):
            return None
        if not children(self.ctx.store.view(), task_id):
            return None
        end_session(self.ctx.paths, session_id, "completed")
        left = self._await_subtasks(task_id)
        if left is None:
            return None
        return ladder.Failure(
            ladder.SUBTASKS,
            left,
            f"see them with `maestro status`; run them with `maestro run <id>`, then `maestro run {task_id}`.",
        )

    def _await_subtasks(self, task_id: str) -> str | None:
        """A coordinating task's spoke may end before the subtasks it spawned: the task
        stays running until they settle (the scheduler meanwhile gives its slot to them).
        None when it has none, or they are all done; else why the task is not done."""

        while True:
            plan = self.ctx.store.view()
            if not children(plan, task_id):
                return None
            waiting = unfinished(plan, task_id)
            if not waiting:
                break
            if self.ctx.stopping() and not any(t.status == "running" for t in waiting):
                break  # nothing more will start in this run
            with self._settled:
                self._settled.wait(0.25)
        plan = self.ctx.store.view()
        if all(t.status == "done" for t in children(plan, task_id)):
            return None
        return f"its subtasks are not all done ({subtask_summary(plan, task_id)})."

    def _sleep(self, seconds: float) -> bool:
        """Back off; True when the run is asked to stop meanwhile."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.ctx.stopping():
                return True
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        return bool(self.ctx.stopping())

    def _clarification(self, task_id: str) -> str | None:
        opts = self.ctx.options
        if opts.task_id != task_id:
            return None
        parts = (
            [f"Clarification from the user for this task:\n{opts.clarify.strip()}"]
            if opts.clarify
            else []
        )
        if opts.revision:
            parts.append(opts.revision.strip())
        return "\n\n".join(parts) or None

    def revise(self, task_id: str, context: str, resume_session: str | None) -> str:
        """Send a review round's findings back to the task's author: the task runs the whole
        pipeline again (gates, receipts, ladder) without a review of its own (the review loop
        reviews it next). Returns the task's status afterwards."""
        with self.ctx.store.edit_task(task_id) as task:
            task.status = "pending"
        outcome = self.run(task_id, extra=context, resume_session=resume_session, review=False)
        self.tidy()  # (no scheduler's outcome waits: a review or a pull request asks)
        return outcome.status

    # -- one attempt -----------------------------------------------------------------------
    def attempt(
        self, task_id: str, extra: str | None, *, retry: bool, resume_session: str | None = None
    ) -> Attempt:
        ctx = self.ctx
        plan = ctx.store.view()  # (to read: the overrides below go on a copy of the task)
        task = copy_of(plan.task(task_id))
        if task.status not in ("pending", "running"):
            return Attempt(
                tool=task.tool or "-",
                skipped=f"Task {task_id} is {task.status} in the plan now; not run.",
            )
        if task.mode == "coordinate":
            self.coordinating.add(task_id)
        opts = ctx.options
        forced = opts.task_id == task_id
        if forced and opts.agent:
            task.agent = opts.agent
        tool = choose(
            task.tool,
            task.specialist,
            ctx.installed,
            ctx.hub,
            opts.tool,
            task_tier(ctx.catalog, task),
        )
        task.tool = tool
        attempt = Attempt(tool=tool, validation=task.validation)
        # Every AAVSR error is about one task alone (plan-wide checks only warn), so the
        # task is checked by itself: the same errors, without re-checking the whole plan.
        alone = replace(plan, tasks=[task])
        problems = [
            f
            for f in planning.aavsr(
                alone, catalog=ctx.catalog, available=ctx.installed, paths=ctx.paths
            )
            if f.level == "error"
        ]
        if problems:
            first = problems[0]
            reason = f"AAVSR {first.check}: {first.why}" + (
                f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            )
            attempt.failure = ladder.Failure(ladder.PRECONDITION, reason, first.remedy)
            return attempt
        agent = ctx.catalog.for_task(task)
        resolved = ctx.catalog.resolve(agent.name, tool)
        attempt.agent = agent.name
        spoke = ctx.spoke_for(tool)
        coordinating = task.mode == "coordinate"
        if coordinating and not spoke.reaches_office(resolved.tier):
            attempt.failure = ladder.Failure(
                ladder.PRECONDITION,
                f"Task {task.id} coordinates (Mode: coordinate), but a {tool} spoke with tier "
                f"{resolved.tier} cannot run `maestro task spawn`.",
                f"give Task {task_id} an agent with a shell (tier full), or another tool.",
            )
            return attempt
        coordinator = self._coordinator_of(task) or run_session_id(ctx.run.run_id)
        dispatch = Dispatch(
            ctx.paths,
            ctx.env,
            cli=tool,
            kind=f"t{task.id}",
            subject=f"Task {task.id}: {task.title}",
            message=extra
            if extra and extra.startswith("Clarification")
            else self._directive(plan, task),
            tier=resolved.tier,
            task=task.id,
            mode="coordinated-coordinator" if coordinating else "coordinated-worker",
            coordinator=coordinator,
            run_id=ctx.run.run_id,
            agent=agent.name,
            keep_session=True,
            stagger=ctx.stagger,
            stopping=ctx.stopping,
            sandbox=ctx.sandbox,
        )
        with contextlib.ExitStack() as session:
            session.enter_context(dispatch)
            self.sessions[task.id] = dispatch.session.id
            self._dispatch(
                task,
                plan,
                attempt,
                spoke,
                resolved,
                dispatch,
                extra=extra,
                retry=retry,
                resume_session=resume_session,
                forced_agent=agent.name if (forced and opts.agent) else None,
            )
            # What the attempt came to, even after the worker's own `task report complete`;
            # a session stopped meanwhile keeps that status and its reason.
            failure = attempt.failure.reason if attempt.failure else None
            status = "stopped" if attempt.held_back else "failed" if failure else "completed"
            dispatch.finish(status, attempt.held_back or failure)
            if attempt.accepted:  # its session ends with the rest of its tidying
                self.later(session.pop_all().close)
        return attempt

    def _coordinator_of(self, task: Task) -> str | None:
        """A subtask's coordinator: the session of its parent's attempt while that still
        works. A subtask dispatched after its parent's spoke ended answers to the run (the
        hub) instead: nobody would read its mail at the ended session."""
        session_id = self.sessions.get(task.parent) if task.parent else None
        if session_id is None:
            return None
        if SessionStore(self.ctx.paths).peek(session_id).status != "working":
            return None
        return session_id

    @staticmethod
    def _directive(plan: Plan, task: Task) -> str:
        if task.mode != "coordinate":
            return f"Do task {task.id} within its files until its criteria are met; report to me as you go."

        spawned = subtask_summary(plan, task.id)
        return (
            f"Split task {task.id} into subtasks within its files with `maestro task spawn`; Maestro runs "
            "them as your workers. Follow them with `maestro mail wait`, answer their questions, and report "
            "to me when they are done."
            + (f" Already spawned (do not spawn them again): {spawned}." if spawned else "")
        )

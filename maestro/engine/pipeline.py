"""One task through the pipeline, attempt after attempt, until the ladder says stop.

Per attempt: re-read the task, route it to a CLI, re-run AAVSR, build the delegation
prompt, mark the task running, call the spoke (under the agent's timeout and the CLI's
token abort threshold), measure the files it changed, parse its answer, run the gates,
account tokens and cost, and write one log row. Then the retry ladder decides: done,
retry, retry with more context, fail or block. Every change of the task goes through
``PlanStore.edit()``.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from maestro import clock
from maestro.bus.sessions import (
    SessionStore,
    attach_process,
    create_worker_session,
    end_session,
    office_dirs,
    run_session_id,
    spoke_env,
)
from maestro.engine import gates, ladder
from maestro.engine.attempt import Attempt, expanded_context, make_request, receipt_note
from maestro.engine.budgets import limits_for
from maestro.engine.context import RunContext
from maestro.engine.routing import choose, task_tier
from maestro.engine.scheduler import Outcome
from maestro.engine.workspace import Measured, Worktree, claimed_paths
from maestro.errors import MaestroError, SpokeError
from maestro.formatting import shown_path
from maestro.state.model import Receipt, Task, Usage, copy_of

if TYPE_CHECKING:
    from maestro.agents.catalog import ResolvedAgent
    from maestro.bus.sessions import Session
    from maestro.spokes.base import Spoke
    from maestro.state.model import Plan


class TaskRunner:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._validation_lock = threading.Lock()
        # The session of each task's latest attempt: a spawned subtask's coordinator.
        self.sessions: dict[str, str] = {}
        # Notified whenever a task settles: a coordinating task waits on it for its subtasks.
        self._settled = threading.Condition()
        # The coordinating tasks (Mode: coordinate) this runner works on now: only their
        # spokes spawn subtasks, so without them nothing reads the plan for subtasks.
        self.coordinating: set[str] = set()

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

    def _tell_coordinator(self, task_id: str, outcome: Outcome) -> None:
        """A subtask's coordinating spoke follows its workers with `mail wait`: the engine
        tells it how each ended (the gates' verdict, or a failure the worker never got to
        report), so it never waits for a report that cannot come."""
        from maestro.bus.mailbox import Mailbox

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
        try:
            with self.ctx.store.edit_task(task_id) as task:
                # Pending: it failed before it could start (no CLI to route it to).
                if task.status == "pending" or (
                    task.status == "running" and task.pid == os.getpid()
                ):
                    task.status, task.pid, task.finished = "failed", None, clock.iso()
                    task.result = f"{exc} {ladder.decision_text(task_id)}"
        except MaestroError:
            pass  # the plan itself cannot be written; the next run recovers the task
        self.ctx.emit("task_failed", task=task_id, reason=exc.message, fix=exc.fix)
        self.ctx.emit(
            "decision",
            task=task_id,
            status="failed",
            reason=exc.message,
            options=ladder.decision_options(task_id),
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
            if attempts:
                refusal = self.ctx.budget.refusal() or self.ctx.stopping()
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
        from maestro.engine.hierarchy import children

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
        from maestro.engine.hierarchy import children, subtask_summary, unfinished

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
        return self.run(task_id, extra=context, resume_session=resume_session, review=False).status

    # -- one attempt -----------------------------------------------------------------------
    def attempt(
        self, task_id: str, extra: str | None, *, retry: bool, resume_session: str | None = None
    ) -> Attempt:
        from maestro import planning

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
        coordinator = self._coordinator_of(task)
        session, lease = create_worker_session(
            ctx.paths,
            run_id=ctx.run.run_id,
            task_id=task.id,
            cli=tool,
            agent=agent.name,
            tier=resolved.tier,
            mode="coordinated-coordinator" if coordinating else "coordinated-worker",
            coordinator=coordinator,
            directive={
                "subject": f"Task {task.id}: {task.title}",
                "from": coordinator or run_session_id(ctx.run.run_id),
                "message": extra
                if extra and extra.startswith("Clarification")
                else self._directive(plan, task),
            },
        )
        self.sessions[task.id] = session.id
        try:
            return self._dispatch(
                task,
                plan,
                attempt,
                spoke,
                resolved,
                session,
                extra=extra,
                retry=retry,
                resume_session=resume_session,
                forced_agent=agent.name if (forced and opts.agent) else None,
            )
        finally:
            # What the attempt came to, even after the worker's own `task report complete`;
            # a session stopped meanwhile keeps that status and its reason.
            failure = attempt.failure.reason if attempt.failure else None
            status = "stopped" if attempt.held_back else "failed" if failure else "completed"
            end_session(ctx.paths, session.id, status, attempt.held_back or failure, lease=lease)

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
        from maestro.engine.hierarchy import subtask_summary

        spawned = subtask_summary(plan, task.id)
        return (
            f"Split task {task.id} into subtasks within its files with `maestro task spawn`; Maestro runs "
            "them as your workers. Follow them with `maestro mail wait`, answer their questions, and report "
            "to me when they are done."
            + (f" Already spawned (do not spawn them again): {spawned}." if spawned else "")
        )

    def _dispatch(
        self,
        task: Task,
        plan: Plan,
        attempt: Attempt,
        spoke: Spoke,
        resolved: ResolvedAgent,
        session: Session,
        *,
        extra: str | None,
        retry: bool,
        resume_session: str | None,
        forced_agent: str | None,
    ) -> Attempt:
        """Run the spoke as ``session`` in its own worktree (in a git repository, unless
        in place) and check its answer."""
        ctx, task_id = self.ctx, task.id
        spaces = ctx.workspaces
        worktree = spaces.create(f"task-{task_id}") if spaces is not None else None
        try:
            return self._dispatch_in(
                task,
                plan,
                attempt,
                spoke,
                resolved,
                session,
                worktree,
                extra=extra,
                retry=retry,
                resume_session=resume_session,
                forced_agent=forced_agent,
            )
        finally:
            # Removed in the background: the outcome goes to the scheduler, and the tasks
            # waiting for it start, without waiting for `git worktree remove`.
            if spaces is not None and attempt.view is not None:
                spaces.discard_later(attempt.view)
            if spaces is not None and worktree is not None:
                keep = spaces.keep and attempt.failure is not None
                attempt.kept = spaces.discard_later(worktree, keep=keep)
                if attempt.kept is not None:
                    ctx.emit("worktree_kept", task=task_id, path=str(attempt.kept))

    def _dispatch_in(
        self,
        task: Task,
        plan: Plan,
        attempt: Attempt,
        spoke: Spoke,
        resolved: ResolvedAgent,
        session: Session,
        worktree: Worktree | None,
        *,
        extra: str | None,
        retry: bool,
        resume_session: str | None,
        forced_agent: str | None,
    ) -> Attempt:
        from maestro.prompts.delegation import build_delegation

        ctx, task_id, tool = self.ctx, task.id, attempt.tool
        root = worktree.root if worktree is not None else ctx.paths.root
        office = spoke.reaches_office(resolved.tier)
        delegation = build_delegation(
            plan,
            task,
            resolved,
            project_root=root,
            tool=tool,
            enforced_by_cli=spoke.enforces(resolved.tier),
            extra_context=extra,
            session=session if office else None,
        )
        limits = limits_for(tool, ctx.settings.table("budgets"))
        number = self._mark_running(task_id, tool, forced_agent)
        ctx.emit(
            "task_started",
            task=task_id,
            title=task.title,
            tool=tool,
            agent=attempt.agent,
            attempt=number,
            simulated=bool(getattr(spoke, "simulated", False)) or None,
            session=session.id,
        )
        request = make_request(
            task,
            delegation,
            resolved,
            root=root,
            abort_tokens=limits.abort,
            scratch=ctx.run.path / "scratch" / f"task-{task.id}-attempt-{number}",
            env_extra={
                "MAESTRO_RUN_ID": ctx.run.run_id,
                "MAESTRO_TASK_ID": task.id,
                **spoke_env(ctx.paths, session, path=ctx.env.get("PATH", os.defpath)),
            },
            sim_delay_s=ctx.sim_delay_s,
        )
        # The office's folders alone (mail, sessions): never all of .ai/maestro, which
        # holds the other tasks' worktrees and what they will land.
        request.shared_dirs = office_dirs(ctx.paths) if office else []
        if resume_session and spoke.supports_resume:
            request.resume_session = resume_session
        attempt.timeout_s = request.timeout_s
        detailed = ctx.log.verbosity == "detailed"
        if detailed:
            ctx.run.artifact(task_id, number, "prompt.md").write_text(
                f"<!-- system prompt -->\n{delegation.system}\n<!-- prompt -->\n{delegation.prompt}",
                encoding="utf-8",
            )
        if worktree is None:
            ctx.observer.begin("spoke", task_id)
        start = ctx.stagger.start(tool, stopping=ctx.stopping)
        if start is None:  # the run is stopping: the spoke never started
            if worktree is None:
                ctx.observer.end("spoke", task_id)
            attempt.held_back = ctx.stopping() or "stopped"
            return attempt
        try:
            result = spoke.dispatch(
                request,
                base_env=ctx.env,
                on_start=lambda pid: self._spoke_started(task_id, pid, session.id),
            )
        except SpokeError as exc:
            attempt.failure = ladder.Failure(ladder.FATAL, exc.message, exc.fix)
            if worktree is None:
                ctx.observer.end("spoke", task_id)
            self._log_attempt(task_id, attempt, number, retry)
            return attempt
        finally:
            start.ended()
            (ctx.run.path / f"spoke-{task_id}.pid").unlink(missing_ok=True)
        changes: Any
        if worktree is not None and ctx.workspaces is not None:
            spaces = ctx.workspaces

            def changes(parsed: Any) -> Measured:
                # Read before the validation command runs: what it writes is not the task's.
                claimed = claimed_paths(parsed)
                attempt.measured = spaces.measure(worktree, task.files, claimed)
                attempt.measured.unlandable = spaces.unlandable(
                    worktree, attempt.measured, task.files, claimed
                )
                if task.mode == "coordinate":
                    # Its subtasks landed while it worked: its check needs their work too.
                    attempt.view = spaces.combined(worktree, attempt.measured)
                return attempt.measured
        else:
            changes = ctx.observer.end("spoke", task_id)
        attempt.result = result
        if detailed:
            ctx.run.artifact(task_id, number, "output.txt").write_text(
                f"argv: {result.argv}\nexit: {result.exit_code}\n\n--- stdout ---\n{result.stdout}\n"
                f"--- stderr ---\n{result.stderr}\n--- final text ---\n{result.text}\n",
                encoding="utf-8",
            )
        attempt.failure = ladder.spoke_failure(result, tool)
        # `maestro session stop` records why before it signals: read once, no wait.
        stopped = self._stopped_reason(session.id)
        if stopped:
            attempt.failure = ladder.Failure(
                ladder.STOPPED,
                stopped,
                f"run it again with `maestro run {task_id}` when it should go on.",
            )
        elif attempt.failure is None:
            attempt.failure = self._after_subtasks(task, plan, session.id)
            if attempt.failure is None:
                gates.apply(ctx, task, attempt, result, changes, root=root)
        if worktree is not None and ctx.workspaces is not None:
            if attempt.measured is None:
                attempt.measured = ctx.workspaces.measure(worktree, task.files)
            if attempt.failure is None:
                attempt.landing = ctx.workspaces.land(
                    task_id, task.title, worktree, attempt.measured
                )
            attempt.receipt = self._worktree_receipt(attempt)
        else:
            # The task's changes so far (every attempt of this run), for the log row and state.
            attempt.receipt = ctx.observer.receipt(
                task_id, validation=attempt.validation, validation_exit=attempt.validation_exit
            )
        attempt.level = limits.level(result.usage.total)
        if attempt.level != "ok":
            ctx.emit(
                "budget",
                task=task_id,
                tool=tool,
                tokens=result.usage.total,
                level=attempt.level,
                budget=limits.budget,
                abort=limits.abort,
            )
        ctx.budget.add(result.usage.total)
        self._log_attempt(task_id, attempt, number, retry)
        return attempt

    def _worktree_receipt(self, attempt: Attempt) -> Receipt:
        """The attempt's exact change: its files, stat and hash; the commit it landed as on
        the user's branch (``--commit``), else HEAD when the run began; and the change
        itself as a commit (its parent is where it started), which review reads."""
        spaces, measured, landing = self.ctx.workspaces, attempt.measured, attempt.landing
        assert spaces is not None and measured is not None
        return Receipt(
            diff_stat=measured.diff_stat,
            files_changed=measured.files,
            validation=attempt.validation,
            validation_exit=attempt.validation_exit,
            commit=(landing.committed if landing and landing.committed else spaces.head),
            diff_sha=measured.diff_sha,
            change=landing.change if landing else None,
        )

    def _stopped_reason(self, session_id: str) -> str | None:
        """Why the attempt's session was stopped (`maestro session stop`), or None."""
        session = SessionStore(self.ctx.paths).peek(session_id)
        if session.recorded_status == "stopped":
            return str(session.data.get("reason") or "stopped")
        return None

    def _spoke_started(self, task_id: str, pid: int, session_id: str) -> None:
        # Recorded so a later run can stop a spoke this engine left behind when it died.
        if pid != os.getpid():
            (self.ctx.run.path / f"spoke-{task_id}.pid").write_text(f"{pid}\n", encoding="utf-8")
            # The session's process: what `maestro session stop` signals, proven by its start time.
            attach_process(self.ctx.paths, session_id, pid)

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
        from maestro.logfile import LogRow

        ctx = self.ctx
        result = attempt.result
        usage = result.usage if result is not None else Usage()
        cost = result.cost if result is not None else None
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
            measured = ctx.workspaces is not None or ctx.observer.enabled
            notes.append(receipt_note(attempt.receipt, measured=measured))
        outcome = "✅" if attempt.failure is None else (attempt.failure.reason[:120])
        ctx.log.append(
            LogRow(
                time=clock.iso(),
                actor="Hub",
                action="Retry" if retry else "Dispatch",
                target=f"Task {task_id}",
                tokens=usage.total if result is not None else None,
                duration_s=result.duration_s if result is not None else None,
                outcome=outcome,
                notes="; ".join(notes),
                tool=attempt.tool,
                failed=attempt.failure is not None,
                retry=retry,
                cost=cost,
                cost_estimated=bool(result and result.cost_estimated),
                task=task_id,
            )
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
        receipt = attempt.receipt or ctx.observer.receipt(
            task_id, validation=attempt.validation, validation_exit=attempt.validation_exit
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
        if superseded and superseded != receipt.change and ctx.workspaces is not None:
            ctx.workspaces.repo.release([superseded])  # no receipt names it any more
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
            # The review is this run's dispatch: its session answers to the run's.
            ctx.review(task_id, revise=self.revise, session=run_session_id(ctx.run.run_id))
            status = ctx.store.view().task(task_id).status
            if status != "done":
                return Outcome(status, f"review: {status}")
        return Outcome("done")

    def _finish_unsuccessful(
        self, task_id: str, status: str, reason: str, attempt: Attempt
    ) -> Outcome:
        ctx = self.ctx
        receipt: Receipt | None = attempt.receipt
        if receipt is None and ctx.workspaces is None and task_id in ctx.observer.tasks:
            receipt = ctx.observer.receipt(
                task_id, validation=attempt.validation, validation_exit=attempt.validation_exit
            )
        fix = attempt.failure.fix if attempt.failure else None
        if attempt.kept is not None:
            reason += f" (its worktree is kept: {shown_path(attempt.kept, ctx.paths.root)})"
        options = ladder.decision_options(task_id)
        with ctx.store.edit_task(task_id) as task:
            self._charge(task, attempt)
            task.status = status
            task.result = (
                reason + (f" Fix: {fix}" if fix else "") + " " + ladder.decision_text(task_id)
            )
            task.finished = clock.iso()
            task.pid = None
            if receipt is not None and (receipt.files_changed or task.receipt is None):
                task.receipt = receipt
        ctx.emit(f"task_{status}", task=task_id, reason=reason, fix=fix)
        ctx.emit("decision", task=task_id, status=status, reason=reason, options=options)
        return Outcome(status, reason)

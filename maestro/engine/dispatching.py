"""One attempt's dispatch: its worktree (and the guard around it), the delegation prompt,
the spoke, the gates, the landing. ``TaskRunner`` (pipeline.py) is built on it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from maestro.bus.workers import (
    office_dirs,
    spoke_env,
)
from maestro.engine import gates, ladder
from maestro.engine.attempt import Attempt, make_request
from maestro.engine.bookkeeping import Bookkeeping
from maestro.engine.budgets import limits_for
from maestro.engine.rundir import recording
from maestro.engine.worktree import Measured, Worktree, claimed_paths
from maestro.errors import SpokeError
from maestro.process import run_process
from maestro.state.model import Task

if TYPE_CHECKING:
    from maestro.agents.catalog import ResolvedAgent
    from maestro.bus.sessions import Session
    from maestro.spokes.base import Spoke
    from maestro.state.model import Plan


class Dispatching(Bookkeeping):
    """The dispatch half of ``TaskRunner``."""

    def _after_subtasks(self, task: Task, plan: Plan, session_id: str) -> ladder.Failure | None:
        """A coordinating task's wait for its subtasks (``TaskRunner``)."""
        raise NotImplementedError

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

        # A spoke silent for a while: a line with what its CLI last said on stderr.
        def quiet(line: str) -> None:
            ctx.emit("spoke_quiet", task=task_id, detail=line)

        request.progress = quiet
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
                runner=recording(run_process, ctx.run.artifact(task_id, number, "stream.jsonl")),
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

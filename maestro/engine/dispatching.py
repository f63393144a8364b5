"""One attempt's dispatch: its workspace (a worktree of its own, or the shared tree), the
delegation prompt, the spoke, the gates, the landing. ``TaskRunner`` (pipeline.py) is
built on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from maestro.bus.workers import office_dirs
from maestro.engine import gates, ladder
from maestro.engine.attempt import Attempt, make_request
from maestro.engine.bookkeeping import Bookkeeping
from maestro.engine.budgets import limits_for
from maestro.engine.dispatch import Dispatch, HeldBack
from maestro.errors import SpokeError
from maestro.prompts.delegation import build_delegation
from maestro.state.model import Task

if TYPE_CHECKING:
    from maestro.agents.catalog import ResolvedAgent
    from maestro.engine.runcontext import Workspace
    from maestro.spokes.base import Spoke
    from maestro.state.model import Plan


class Dispatching(Bookkeeping):
    """The dispatch half of ``TaskRunner``."""

    def _after_subtasks(self, task: Task, plan: Plan, session_id: str) -> ladder.Failure | None:
        """A coordinating task's wait for its subtasks (``TaskRunner``)."""
        raise NotImplementedError

    def later(self, work: Callable[[], object]) -> None:
        """What an accepted attempt leaves to do once its task's outcome is out
        (``TaskRunner``)."""
        raise NotImplementedError

    def _dispatch(
        self,
        task: Task,
        plan: Plan,
        attempt: Attempt,
        spoke: Spoke,
        resolved: ResolvedAgent,
        dispatch: Dispatch,
        *,
        extra: str | None,
        retry: bool,
        resume_session: str | None,
        forced_agent: str | None,
    ) -> Attempt:
        """Run the spoke as ``dispatch`` in the task's workspace (its own worktree in a git
        repository, unless in place) and check its answer."""
        ctx = self.ctx
        space = ctx.workspaces.open(task)
        try:
            return self._dispatch_in(
                task,
                plan,
                attempt,
                spoke,
                resolved,
                dispatch,
                space,
                extra=extra,
                retry=retry,
                resume_session=resume_session,
                forced_agent=forced_agent,
            )
        finally:
            if attempt.receipt is None:  # the spoke failed or never started
                attempt.receipt = space.receipt(attempt.validation, attempt.validation_exit)
            if attempt.accepted:  # its change has landed: its worktree is nothing to wait for
                self.later(lambda: space.close(keep=False))
            else:
                attempt.kept = space.close(keep=attempt.failure is not None)
                if attempt.kept is not None:
                    ctx.emit("worktree_kept", task=task.id, path=str(attempt.kept))

    def _dispatch_in(
        self,
        task: Task,
        plan: Plan,
        attempt: Attempt,
        spoke: Spoke,
        resolved: ResolvedAgent,
        dispatch: Dispatch,
        space: Workspace,
        *,
        extra: str | None,
        retry: bool,
        resume_session: str | None,
        forced_agent: str | None,
    ) -> Attempt:
        ctx, task_id, tool = self.ctx, task.id, attempt.tool
        root = space.root
        office = spoke.reaches_office(resolved.tier)
        delegation = build_delegation(
            plan,
            task,
            resolved,
            project_root=root,
            tool=tool,
            enforced_by_cli=spoke.enforces(resolved.tier),
            extra_context=extra,
            session=dispatch.session if office else None,
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
            unconfined=ctx.sandbox is None or None,
            session=dispatch.session.id,
        )

        # A spoke silent for a while: a line with what its CLI last said on stderr.
        def quiet(line: str) -> None:
            ctx.emit("spoke_quiet", task=task_id, detail=line)

        request = make_request(
            dispatch,
            spoke,
            task,
            delegation,
            resolved,
            root=root,
            abort_tokens=limits.abort,
            scratch_dir=ctx.run.path / "scratch" / f"task-{task.id}-attempt-{number}",
            sim_delay_s=ctx.sim_delay_s,
            resume_session=resume_session,
            # Unconfined, the office's folders alone (mail, sessions): never all of
            # .ai/maestro, which holds the other tasks' worktrees and what they will land.
            # Confined, none: its door to the office is its only way there (bus.door).
            shared_dirs=office_dirs(ctx.paths) if office and ctx.sandbox is None else [],
            progress=quiet,
        )
        attempt.timeout_s = request.timeout_s
        detailed = ctx.log.verbosity == "detailed"
        if detailed:
            ctx.run.artifact(task_id, number, "prompt.md").write_text(
                f"<!-- system prompt -->\n{delegation.system}\n<!-- prompt -->\n{delegation.prompt}",
                encoding="utf-8",
            )
        with space.spoke():
            try:
                stream = ctx.run.artifact(task_id, number, "stream.jsonl")
                result = dispatch.run(spoke, request, stream=stream)
            except SpokeError as exc:
                attempt.failure = ladder.Failure(ladder.FATAL, exc.message, exc.fix)
                self._log_attempt(task_id, attempt, number, retry)
                return attempt
            except HeldBack as stop:  # the run is stopping: the spoke never started
                attempt.held_back = str(stop)
                return attempt
        attempt.result = result
        if detailed:
            ctx.run.artifact(task_id, number, "output.txt").write_text(
                f"argv: {result.argv}\nexit: {result.exit_code}\n\n--- stdout ---\n{result.stdout}\n"
                f"--- stderr ---\n{result.stderr}\n--- final text ---\n{result.text}\n",
                encoding="utf-8",
            )
        attempt.failure = ladder.spoke_failure(result, tool)
        # `maestro session stop` records why before it signals: read once, no wait.
        stopped = self._stopped_reason(dispatch.session.id)
        if stopped:
            attempt.failure = ladder.Failure(
                ladder.STOPPED,
                stopped,
                f"run it again with `maestro run {task_id}` when it should go on.",
            )
        elif attempt.failure is None:
            attempt.failure = self._after_subtasks(task, plan, dispatch.session.id)
            if attempt.failure is None:
                gates.apply(ctx, task, attempt, result, space)
        space.finish(accepted=attempt.failure is None)
        attempt.measured, attempt.landing = space.measured, space.landing
        attempt.receipt = space.receipt(attempt.validation, attempt.validation_exit)
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
        self._spent(
            task_id,
            tool,
            result.usage,
            result.cost,
            result.cost_estimated,
            model=result.model,
            unpriced=result.unpriced,
        )
        if attempt.accepted:
            self.later(lambda: self._log_attempt(task_id, attempt, number, retry))
        else:
            self._log_attempt(task_id, attempt, number, retry)
        return attempt

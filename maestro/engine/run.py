"""`maestro run`: one engine working through the plan.

Take the project's run lock (one engine per project), recover tasks a dead engine left
running, pick the tasks to run (every pending task, or the one named), and hand them to
the eager scheduler with the dispatch pipeline as its ``run_one``. The run ends when
nothing more can start; its events (``events.jsonl``) and its final line say why.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from maestro import clock, graph, roster, sandbox
from maestro.agents.catalog import load_catalog
from maestro.bus.workers import end_session, run_session_id, shim, start_run_session
from maestro.engine import progress as progress_views
from maestro.engine import pullrequest, spend, stoptask
from maestro.engine.budgets import limits_for
from maestro.engine.caps import Cap, RunBudget, caps_of
from maestro.engine.ending import abort_on_sigterm, run_ending, stop_on_sigint
from maestro.engine.hierarchy import SPAWN, add_subtask, spawned_data
from maestro.engine.notifier import Notifier
from maestro.engine.pipeline import TaskRunner
from maestro.engine.pullrequest import Delivery
from maestro.engine.receipts import Observer
from maestro.engine.requests import Desk
from maestro.engine.resume import recover
from maestro.engine.routing import choose, task_tier
from maestro.engine.runcontext import RunContext, RunOptions, Workspaces
from maestro.engine.rundir import RunDir, RunLock, new_run_id
from maestro.engine.scheduler import Job, Scheduler, ScheduleReport
from maestro.engine.stagger import Stagger
from maestro.engine.workerreports import WorkerReports
from maestro.engine.workspace import Mode, Worktrees, mode_for
from maestro.errors import MaestroError
from maestro.forge import Forge
from maestro.formatting import shown_path
from maestro.fsutil import ignore_in_git
from maestro.logfile import ExecutionLog
from maestro.paths import ProjectPaths
from maestro.spokes import pricing
from maestro.spokes.base import refuse_if_inside_spoke
from maestro.spokes.registry import detect_available, get_spoke, resumption
from maestro.state.model import STATUSES, Plan, Task, task_sort_key
from maestro.state.store import PlanStore

if TYPE_CHECKING:
    from maestro.agents.catalog import Catalog
    from maestro.bus.liveness import Lease
    from maestro.bus.messages import Message
    from maestro.config import Settings
    from maestro.engine.rundir import EventLog
    from maestro.review.outcome import ReviewOutcome
    from maestro.spokes.base import Spoke
    from maestro.spokes.registry import Availability

EXIT_INCOMPLETE = 2
# Every task done, but a task's work is not where the run was to put it: its change was
# withheld from the user's tree (the person edited its files meanwhile), or its --commit
# was refused: `maestro run && make test` must not test a tree without it, and
# `maestro run --commit && git push` must not push without it.
EXIT_UNLANDED = 3
DEFAULT_BACKOFF_S = 2.0


@dataclass
class RunSummary:
    run_id: str
    status: str  # finished | incomplete | stopped | aborted
    counts: dict[str, int]
    tokens: int
    cost: float | None
    cost_estimated: bool
    duration_s: float
    message: str
    tasks: list[dict[str, Any]] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    peak_concurrency: int = 0
    unattributed: list[str] = field(default_factory=list)  # changed while no task ran
    unlanded: list[str] = field(default_factory=list)  # done, its change not applied
    uncommitted: list[str] = field(default_factory=list)  # done, its --commit refused
    # --pr: what became of the pull request, and whether it needs the person now (its push
    # or request refused, or its checks waiting for a decision).
    pull_request: str | None = None
    pull_request_waits: bool = False

    @property
    def exit_code(self) -> int:
        if self.status != "finished":
            return EXIT_INCOMPLETE
        waits = self.unlanded or self.uncommitted or self.pull_request_waits
        return EXIT_UNLANDED if waits else 0

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def open_store(paths: ProjectPaths) -> PlanStore:
    store = PlanStore(paths)
    if not store.exists():
        raise store.missing()
    return store


def select_tasks(plan: Plan, task_id: str | None, plan_file: str = ".ai/MAESTRO.md") -> list[Task]:
    """The tasks this run may start: every pending task, or the one named (which must be
    runnable now: not done, its dependencies done)."""
    if task_id is None:
        return [t for t in plan.tasks if t.status == "pending"]
    task = plan.task(task_id)
    if task.status == "done":
        raise MaestroError(
            f"Task {task_id} is done already; Maestro never runs a done task twice.",
            f"to redo it, set its Status to pending in {plan_file} and run `maestro run {task_id}`.",
        )
    waiting = [plan.find(d) for d in task.depends]
    unmet = [d for d in waiting if d is not None and d.status != "done"]
    if unmet:
        listed = ", ".join(f"Task {d.id} ({d.status})" for d in unmet)
        first = unmet[0].id
        raise MaestroError(
            f"Task {task_id} cannot run yet: it depends on {listed}.",
            f"run `maestro run` to work through the plan in order, or `maestro run {first}` first.",
        )
    return [task]


class Engine:
    def __init__(
        self,
        settings: Settings,
        *,
        env: dict[str, str],
        options: RunOptions,
        out: TextIO,
        quiet: bool = False,
        spoke_for: Callable[[str], Spoke] | None = None,
        installed: dict[str, Availability] | None = None,
        review: Callable[..., ReviewOutcome] | None = None,
        sim_delay_s: float | None = None,
        backoff_s: float | None = None,
        forge: Callable[[Path, str | None], Forge] | None = None,
    ) -> None:
        self.settings = settings
        self.paths = settings.paths
        self.env = env
        self.options = options
        self.out = out
        self.quiet = quiet
        self._spoke_for = spoke_for
        self._installed = installed
        self.review = review
        self.sim_delay_s = sim_delay_s
        self.backoff_s = DEFAULT_BACKOFF_S if backoff_s is None else backoff_s
        self.scheduler: Scheduler | None = None
        self._session_lease: Lease | None = None  # the run's session (see _run)
        self.mode: Mode | None = None
        self.sandbox: sandbox.Rules | None = None
        self._forge = forge or (lambda root, remote: Forge(root, remote, env=self.env))
        self.delivery: Delivery | None = None  # --pr (engine/pullrequest.py)

    # -- pieces ------------------------------------------------------------------------
    def spoke_for(self, name: str) -> Spoke:
        if self._spoke_for is not None:
            return self._spoke_for(name)

        return get_spoke(name, self.settings)

    def installed(self) -> dict[str, Availability]:
        if self._installed is None:
            self._installed = detect_available(self.env)
        return self._installed

    def _delivery(self, plan: Plan) -> Delivery | None:
        """--pr (or the ``pr`` setting): the branch the run's work goes on, checked before
        any dispatch."""
        opts, settings = self.options, self.settings
        if not (opts.pr or settings.pr):
            return None
        clash = (
            "--in-place"
            if self.mode and self.mode.in_place
            else "--commit"
            if (opts.commit or settings.commit)
            else None
        )
        if clash:
            raise MaestroError(
                f"--pr and {clash} cannot go together: a pull request's work stays off your tree.",
                f"run with one of them (the setting behind it: {'in_place' if clash == '--in-place' else 'commit'}).",
            )
        if self.mode is None or self.mode.repo is None:
            raise MaestroError(
                "--pr needs the project in a git repository with a remote.",
                "run `git init`, add a remote and commit, or run without --pr.",
            )
        forge = self._forge(self.mode.repo.top, settings.pr_remote)
        if opts.revision is None:  # (a revision's own run is `pr watch|sync`'s)
            with pullrequest.following(self.paths):
                pass  # free: no `maestro pr watch|sync` follows it now
        return pullrequest.prepare(self.paths, self.mode.repo, plan, settings, forge)

    @contextlib.contextmanager
    def _workspaces(
        self, run_id: str, owners: dict[str, list[str]], plan: Plan
    ) -> Iterator[Workspaces]:
        """A worktree per dispatch in a git repository (unless in place), closed at the
        end; else the shared tree, its changes attributed by an observer (``owners``: each
        task's Files). Started after recovery, so the work of tasks a dead run finished is
        in its base."""
        opts, settings = self.options, self.settings
        self.mode = mode_for(self.paths, settings, in_place=opts.in_place)
        if self.mode.repo is None:
            self._delivery(plan)  # --pr refused here: no repository
            yield Observer.of_run(self.paths, lambda tid: owners.get(tid, []))
            return
        spaces = Worktrees(self.paths, self.mode.repo, run_id, settings)
        spaces.keep = spaces.keep or opts.keep_worktrees
        spaces.commit = spaces.commit or opts.commit
        spaces.delivery = self.delivery = self._delivery(plan)
        if self.delivery is not None:
            self.delivery.reworded = lambda tip: setattr(spaces, "integration", tip)
        spaces.start()
        try:
            yield spaces
        finally:
            spaces.close()

    def _refuse_unpriced(self, selected: list[Task], catalog: Catalog, hub: str | None) -> None:
        """A dollar cap over a task whose model the price table lacks could not be kept:
        said before the run starts. (A model a CLI picks itself is known only from its
        answer: that one pauses the run when it comes, engine/caps.py.)"""
        caps = caps_of(self.settings, self.options.budget_usd, self.options.budget_tokens)
        if not any(cap.unit == "usd" for cap in caps):
            return
        for task in selected:
            try:
                tier = task_tier(catalog, task)
                tool = choose(
                    task.tool, task.specialist, self.installed(), hub, self.options.tool, tier
                )
                model = catalog.resolve(catalog.for_task(task).name, tool).model
            except MaestroError:
                continue  # no CLI, an unknown agent: the task's own dispatch says so
            facts = roster.get(tool)
            if facts is None or facts.reports_cost or not facts.real:
                continue
            spoke = self.spoke_for(tool)
            model = model or spoke.configured_model(self.env)
            if model is None and not spoke.names_its_model:
                raise MaestroError(
                    f"a dollar budget cannot be kept for Task {task.id}: {tool} would run its "
                    "own default model, which its answer never names, so its dollars are unknown.",
                    f'name the model (`model = "..."` in {tool}\'s config.toml, or default_model '
                    "in .ai/maestro.toml) with a price in "
                    f"{pricing.table_name(self.settings)}, or cap the run in tokens (--budget-tokens).",
                )
            if model and pricing.price_for(model, self.settings) is None:
                raise MaestroError(
                    f"a dollar budget cannot be kept for Task {task.id}: its model {model} "
                    f"({tool}) has no price in {pricing.table_name(self.settings)}.",
                    f'add [prices."{model}"] input = N, output = N (dollars per million '
                    "tokens) to .ai/maestro.toml, or cap the run in tokens (--budget-tokens).",
                )

    def _before_dispatch(
        self, run_id: str, goal: str, selected: list[Task], spaces: Workspaces, plan_hub: str | None
    ) -> Catalog:
        """What must hold before any dispatch, each refusal raised before the run changes
        the plan."""

        # The run is the coordinator session of the spokes it dispatches; its lease (held
        # while the engine lives) is what says the run still answers to them.
        self._session_lease = start_run_session(self.paths, run_id, goal=goal)
        spaces.refuse_submodule_work([t for t in selected if t.status != "done"])
        catalog = load_catalog(self.settings)
        for cli in roster.NAMES:  # a bad [budgets.<cli>] table stops the run here
            limits_for(cli, self.settings.table("budgets"))
        pricing.check(self.settings)  # and so does a bad price table or [prices.<model>]
        self._refuse_unpriced(selected, catalog, plan_hub)
        # Confined unless the person opted out; refused where bwrap cannot start.
        self.sandbox = sandbox.rules(self.settings, self.env)
        shim()
        return catalog

    # -- the run -------------------------------------------------------------------------
    def run(self) -> RunSummary:
        refuse_if_inside_spoke(self.env)
        store = open_store(self.paths)
        run_id = self.options.run_id or new_run_id()
        lock = RunLock(self.paths)
        lock.acquire(run_id)
        ignore_in_git(self.paths.machine_dir)  # what the run writes there, from its start
        try:
            run = RunDir(self.paths, run_id)
            meta = {
                "pid": os.getpid(),
                "state": "running",
                "started": clock.iso(),
                "options": {
                    k: v for k, v in self.options.__dict__.items() if v not in (None, False)
                },
            }
            if run.meta_path.exists():
                run.write_meta(**meta)
            else:
                run.create(**meta)
            events = run.events()
            ended = "failed"
            try:
                summary = self._run(store, run, events)
                ended = (
                    "completed"
                    if summary.status == "finished"
                    else "stopped"
                    if summary.status in ("aborted", "stopped")
                    else "failed"
                )
                return summary
            except MaestroError as exc:
                events.emit("run_ended", run_id=run_id, status="error", message=str(exc))
                run.write_meta(state="ended", finished=clock.iso(), status="error")
                raise
            except KeyboardInterrupt:
                message = "quit on a second Ctrl-C; tasks still running go back to pending at the next `maestro run`."
                events.emit("run_ended", run_id=run_id, status="interrupted", message=message)
                run.write_meta(state="ended", finished=clock.iso(), status="interrupted")
                raise
            finally:
                if self._session_lease is not None:
                    end_session(
                        self.paths, run_session_id(run_id), ended, lease=self._session_lease
                    )
        finally:
            lock.release()

    def _run(self, store: PlanStore, run: RunDir, events: EventLog) -> RunSummary:
        opts = self.options
        started = time.monotonic()
        log = ExecutionLog(self.paths, opts.log or self.settings.log)
        plan = store.load()
        view = progress_views.choose(
            self.out,
            self.env,
            quiet=self.quiet,
            run_id=run.run_id,
            tasks=[(t.id, t.title) for t in plan.tasks],
        )

        def emit(kind: str, **data: Any) -> dict[str, Any]:
            event: dict[str, Any] = events.emit(kind, **data)
            view.handle(event)
            notices.saw(event)
            return event

        notices = Notifier(self.settings, self.env, run, emit)

        recovered = recover(store, plan, self.paths, emit, log)
        if recovered:
            plan = store.load()
        graph.validate(plan.tasks)
        selected = select_tasks(plan, opts.task_id, shown_path(self.paths.plan, self.paths.root))
        done = {t.id for t in plan.tasks if t.status == "done"}
        owners = {t.id: list(t.files) for t in plan.tasks}
        with self._workspaces(run.run_id, owners, plan) as spaces, notices:
            hub = self.settings.hub or (plan.source.hub if plan.source else None)
            catalog = self._before_dispatch(run.run_id, plan.goal, selected, spaces, hub)
            run.write_meta(sandbox=sandbox.describe(self.sandbox))
            if opts.task_id and selected[0].status in ("failed", "blocked"):
                with store.edit_task(opts.task_id) as chosen:
                    chosen.status = "pending"
            budget = self._budget(plan, run, emit, lambda: self.scheduler)
            if selected:
                log.start_session(plan.goal, run_id=run.run_id, hub=hub)
            shared = RunContext(
                paths=self.paths,
                settings=self.settings,
                store=store,
                log=log,
                run=run,
                emit=emit,
                workspaces=spaces,
                budget=budget,
                catalog=catalog,
                installed=self.installed(),
                options=opts,
                spoke_for=self.spoke_for,
                hub=hub,
                env=self.env,
                backoff_s=self.backoff_s,
                review=self.review if opts.review else None,
                sim_delay_s=self.sim_delay_s,
                stagger=Stagger(self.settings.stagger_delay),
                sandbox=self.sandbox,
            )
            runner = TaskRunner(shared)
            reports = WorkerReports(self.paths, run.run_id, emit, log)
            jobs = [Job(t.id, tuple(t.depends), tuple(t.files), t.parent) for t in selected]

            # Subtasks a coordinating task's spoke spawns (`maestro task spawn`) join the run.
            def join(jid: str, deps: tuple[str, ...], files: tuple[str, ...], parent: str) -> None:
                owners[jid] = list(files)  # its changes are its own in the receipts
                scheduler.add(Job(jid, deps, files, parent))

            def spawn(message: Message, fields: dict[str, Any]) -> dict[str, Any]:
                done = add_subtask(store, self.settings, message.sender, run.run_id, fields)
                task = done.task
                join(task.id, tuple(task.depends), tuple(task.files), done.parent.id)
                emit("task_spawned", task=task.id, parent=done.parent.id, title=task.title)
                return spawned_data(done)

            def idle() -> None:
                reports.deliver()
                desk.serve()
                notices.look(store.view)
                view.tick()

            scheduler = Scheduler(
                jobs,
                runner.run,
                max_concurrent=self.settings.max_concurrent,
                done=done,
                may_launch=budget.refusal,
                on_idle=idle,
                order=task_sort_key,
                on_interrupt=lambda running: emit(
                    "run_stopping", reason="interrupted (Ctrl-C)", running=running
                ),
                after_one=runner.tidy,
            )
            self.scheduler = scheduler
            stop = stoptask.holder(self.paths, scheduler, store, emit, log, shared.installed)
            desk = Desk(self.paths, run.run_id, {SPAWN: spawn, stoptask.STOP: stop})
            shared.stopping = lambda: scheduler.stopping
            emit(
                "run_started",
                run_id=run.run_id,
                pid=os.getpid(),
                pending=len(jobs),
                only=opts.task_id,
                max_concurrent=self.settings.max_concurrent,
                budget_tokens=opts.budget_tokens,
                budget_usd=opts.budget_usd,
                caps=budget.report() or None,
                recovered=[r.task for r in recovered] or None,
                workspace="in-place" if self.mode and self.mode.in_place else "worktrees",
                workspace_line=self.mode.line() if self.mode else None,
                sandbox=sandbox.describe(self.sandbox),
            )
            try:
                with abort_on_sigterm(scheduler), stop_on_sigint(scheduler), reports, desk:
                    report = scheduler.run()
                    delivered = self._deliver(store, runner, emit, report)
            finally:
                spaces.close()  # (once more on the way out of the with: a no-op)
            reports.deliver(last=True)
            summary = self._summary(
                store,
                run,
                report,
                budget,
                started,
                [r.task for r in recovered],
                sorted(spaces.unattributed),
                shared.unlanded,
                shared.uncommitted,
                spaces.closing_note(),
                delivered,
            )
            # What paused the run at a cap waits for the person (engine/needs.py).
            paused = budget.refusal() if summary.status == "stopped" else None
            run.write_meta(cap=_cap_need(paused, "reached") if paused else None)
            notices.finish(store.view)
            emit(
                "run_ended",
                run_id=run.run_id,
                status=summary.status,
                counts=summary.counts,
                tokens=summary.tokens,
                cost=summary.cost,
                cost_estimated=summary.cost_estimated or None,
                duration_s=summary.duration_s,
                message=summary.message,
            )
            view.close()
            run.write_meta(state="ended", finished=clock.iso(), status=summary.status)
            return summary

    def _budget(
        self,
        plan: Plan,
        run: RunDir,
        emit: Callable[..., dict[str, Any]],
        scheduler: Callable[[], Scheduler | None],
    ) -> RunBudget:
        """The run's caps, with what the day and each task spent before it: at 80% of
        one the hub and the person are asked, at 100% (``budget_hard``) running spokes
        are stopped at once."""
        caps = caps_of(self.settings, self.options.budget_usd, self.options.budget_tokens)
        before = {
            t.id: spend.Tally(t.usage.total, t.cost or 0.0, t.cost_estimated) for t in plan.tasks
        }
        day = (
            spend.of_day(self.paths, skip=run.run_id)
            if any(c.scope == "day" for c in caps)
            else None
        )

        def near(cap: Cap, line: str) -> None:
            run.write_meta(cap=_cap_need(line, "near"))
            emit("decision", status="cap", reason=line, options=_cap_options(cap))

        def reached(cap: Cap, line: str) -> None:
            emit("cap_reached", scope=cap.scope, unit=cap.unit, reason=line)
            running = scheduler()
            if not self.settings.budget_hard or running is None:
                return
            budget.halted = line
            running.request_stop(line)
            for task in store_view().tasks:
                if task.status == "running":
                    with contextlib.suppress(MaestroError):
                        stoptask.stop_spoke(self.paths, task, line, run_session_id(run.run_id))

        store_view = PlanStore(self.paths).view
        budget = RunBudget(caps, day=day, tasks=before, on_near=near, on_reached=reached)
        return budget

    def _deliver(
        self, store: PlanStore, runner: TaskRunner, emit: Callable[..., Any], report: Any
    ) -> str:
        """--pr: push the run's branch, open or update its request, then follow its
        checks (a failing one goes back to its task). The line the run ends with; whether
        it waits for the person is in the record (``decision``) or the line (``held``)."""
        delivery, scheduler = self.delivery, self.scheduler
        if delivery is None or scheduler is None or report.stopped:
            return ""
        try:
            line = delivery.deliver(store.view())
            emit("pr", branch=delivery.branch, detail=line, url=delivery.record.get("url"))
            # A revision's own run (a check's, a comment's) only pushes: who sent it follows.
            if delivery.record.get("number") and self.options.revision is None:
                followed = delivery.follow(
                    store.view,
                    runner.revise,
                    lambda task: resumption(task, self.settings, self.env)[0],
                    emit,
                    self.settings,
                    stopping=lambda: bool(scheduler.stopping or scheduler.interrupt_requested),
                )
                emit("pr", branch=delivery.branch, detail=followed, url=delivery.record.get("url"))
                line = f"{line}; {followed}"
        except MaestroError as exc:
            # The work is safe on its branch: what failed is said, with its fix.
            line = f"the work is on the branch {delivery.branch}, but {exc.message} Fix: {exc.fix}"
            emit("pr", branch=delivery.branch, detail=line, error=True)
            delivery.failed = True
        return line

    def _summary(
        self,
        store: PlanStore,
        run: RunDir,
        report: ScheduleReport,
        budget: RunBudget,
        started: float,
        recovered: list[str],
        unattributed: list[str],
        unlanded: list[tuple[str, str]] = (),  # type: ignore[assignment]  # read only
        uncommitted: list[tuple[str, str]] = (),  # type: ignore[assignment]  # read only
        copies: str = "",
        delivered: str = "",
    ) -> RunSummary:
        plan = store.view()
        counts = {status: 0 for status in STATUSES}
        for task in plan.tasks:
            counts[task.status] = counts.get(task.status, 0) + 1
        ran = [plan.task(jid) for jid in sorted(report.outcomes, key=task_sort_key)]
        tokens = budget.spent
        costs = [t.cost for t in ran if t.cost is not None]
        status, message = run_ending(report, ran)
        for task_id, note in unlanded:
            message += f" Task {task_id} is done, but {note}."
        if unlanded:
            message += (
                f" Your tree does not hold the work of Task {', '.join(t for t, _ in unlanded)}"
                " until you merge it as above (exit code 3)."
            )
        for task_id, note in uncommitted:
            message += f" Task {task_id} is done, but {note}."
        if uncommitted:
            message += (
                " Your index is as it was: commit those files yourself once that is fixed"
                " (exit code 3)."
            )
        if unattributed:
            shown = ", ".join(unattributed[:8]) + (
                f" and {len(unattributed) - 8} more" if len(unattributed) > 8 else ""
            )
            message += f" Changed while no task was running (not attributed to any task): {shown}."
        if copies:
            message += f" {copies}"
        if delivered:
            message += f" {delivered[0].upper()}{delivered[1:]}."
        waits = self.delivery is not None and (
            self.delivery.failed or bool(self.delivery.record.get("decision"))
        )
        return RunSummary(
            pull_request=delivered or None,
            pull_request_waits=bool(delivered) and waits,
            run_id=run.run_id,
            status=status,
            counts=counts,
            tokens=tokens,
            cost=round(sum(costs), 6) if costs else None,
            cost_estimated=any(t.cost_estimated for t in ran),
            duration_s=round(time.monotonic() - started, 3),
            message=message,
            tasks=[
                {
                    "id": t.id,
                    "title": t.title,
                    "status": t.status,
                    "tool": t.tool,
                    "attempts": t.attempts,
                    "tokens": t.usage.total,
                    "cost": t.cost,
                    "result": t.result,
                }
                for t in ran
            ],
            recovered=recovered,
            peak_concurrency=report.peak_concurrency,
            unattributed=unattributed,
            unlanded=[task_id for task_id, _ in unlanded],
            uncommitted=[task_id for task_id, _ in uncommitted],
        )


def _cap_need(line: str, level: str) -> dict[str, str]:
    """What run.json keeps of a cap that waits for the person (engine/needs.py)."""
    return {"line": line, "level": level, "since": clock.iso()}


def _cap_options(cap: Cap) -> list[dict[str, str]]:
    """The decision a cap at 80% asks: raise it, go on, or stop."""
    return [
        {"option": "1", "label": "Raise the cap", "command": cap.raise_hint},
        {"option": "2", "label": "Go on (the run pauses at 100%)", "command": "nothing to do"},
        {"option": "3", "label": "Stop now", "command": "maestro run --abort"},
    ]

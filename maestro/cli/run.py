"""`maestro run [TASK_ID]`: dispatch ready tasks to spoke CLIs (see maestro.engine)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import maestro
from maestro import roster, sandbox
from maestro.agents.catalog import load_catalog
from maestro.cli.context import Context, Result
from maestro.cli.wait import answer, default_timeout, next_command
from maestro.engine import dirtytree, preview
from maestro.engine.dirtytree import Recorder
from maestro.engine.preflight import refuse_doomed
from maestro.engine.progress import describe
from maestro.engine.run import Engine, open_store
from maestro.engine.runcontext import RunOptions
from maestro.engine.rundir import RunDir, RunLock, is_engine_of, new_run_id
from maestro.errors import MaestroError
from maestro.formatting import frame, shown_path
from maestro.process import spawn_detached
from maestro.review import review_in_run
from maestro.spokes.base import SESSION_MARKER, refuse_if_inside_spoke
from maestro.spokes.registry import detect_available, get_spoke
from maestro.tables import aligned

if TYPE_CHECKING:
    from maestro.state.model import Plan

EXAMPLES = """\
  maestro run                         run every ready task, in parallel where the graph allows
  maestro run 3                       run Task 3 only (its dependencies must be done)
  maestro run --detach                start in the background; follow with `maestro wait`
  maestro run --follow                start in the background and wait as `maestro wait` does
  maestro run --dry-run               each ready task's CLI, argv and prompt size; sends nothing
  maestro run --budget-tokens 200000 --log summary
  maestro run --budget-usd 5          pause at $5 spent (asks at $4); `maestro run --budget-usd 8` goes on
  maestro run 3 --clarify "sessions are stored in Redis"   option 1: clarify and retry
  maestro run 3 --tool gemini         option 2: reassign Task 3 to another CLI
  maestro run --abort                 option 4: stop the run in progress (nothing new starts)
  maestro run --tool sim              simulate the whole run offline

exit codes: 0 every task the run started is done; 1 an error (one line with its fix);
2 the run ended with a task failed or blocked, or stopped early (--abort), or paused at a
budget cap (its last line names the cap and how to raise it);
3 every task is done, but a task's change was withheld (you edited its files meanwhile),
its --commit was refused, or (--pr) the pull request could not be pushed or opened or its
checks wait for your decision (the final message says which and what to do)."""

LOG_LEVELS = ("off", "summary", "detailed")


def _positive(text: str) -> int:
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of tokens") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the token budget must be above 0")
    return value


def _dollars(text: str) -> float:
    try:
        value = float(text.strip().removeprefix("$").replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of dollars") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError("the dollar budget must be above 0, e.g. 5 or 2.50")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_id", nargs="?", metavar="TASK_ID", help="run only this task")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--detach", action="store_true", help="run in the background and print the run id"
    )
    mode.add_argument(
        "--follow",
        action="store_true",
        help="run in the background and wait until it needs you or ends, as `maestro wait` "
        "does (what a hub runs)",
    )
    mode.add_argument(
        "--dry-run", action="store_true", help="show what would be dispatched; send nothing"
    )
    mode.add_argument(
        "--abort", action="store_true", help="stop the run in progress: running tasks finish"
    )
    parser.add_argument(
        "--tool", choices=roster.NAMES, help="dispatch to this CLI (this run; reassigns TASK_ID)"
    )
    parser.add_argument("--agent", metavar="NAME", help="with TASK_ID: reassign it to this agent")
    parser.add_argument(
        "--clarify", metavar="TEXT", help="with TASK_ID: add this clarification to its prompt"
    )
    parser.add_argument(
        "--budget-tokens",
        type=_positive,
        metavar="N",
        help="pause the run (no new dispatch) once it has used N tokens; asks at 80%%",
    )
    parser.add_argument(
        "--budget-usd",
        type=_dollars,
        metavar="N",
        help="pause the run (no new dispatch) once it has spent N dollars; asks at 80%%",
    )
    parser.add_argument("--log", choices=LOG_LEVELS, help="execution log verbosity for this run")
    parser.add_argument(
        "--review",
        action="store_true",
        help="have another vendor review each task that passes its gates",
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="start even if files the tasks own have uncommitted changes (they work on top of them)",
    )
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="spokes work in the shared working tree, not a git worktree each",
    )
    parser.add_argument(
        "--keep-worktrees",
        action="store_true",
        help="keep a failed or blocked attempt's worktree and list its path",
    )
    parser.add_argument(
        "--commit",
        action="store_true",
        help="commit each landed task on the current branch",
    )
    parser.add_argument(
        "--pr",
        action="store_true",
        help="work on a branch of its own, each task a commit, then push it and open a pull "
        "request (gh) and follow its checks; your tree and branch are not changed",
    )
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the spokes and validation commands unconfined, with your full rights "
        "(where bubblewrap cannot start; as MAESTRO_SANDBOX=0 for this run)",
    )
    parser.add_argument("--run-id", help=argparse.SUPPRESS)  # set for the detached engine


def _options(args: argparse.Namespace) -> Any:
    if (args.agent or args.clarify) and not args.task_id:
        flag = "--agent" if args.agent else "--clarify"
        raise MaestroError(
            f"{flag} needs a TASK_ID: it changes one task.",
            f"run `maestro run <TASK_ID> {flag} ...`.",
        )
    return RunOptions(
        task_id=args.task_id,
        tool=args.tool,
        agent=args.agent,
        clarify=args.clarify,
        budget_tokens=args.budget_tokens,
        budget_usd=args.budget_usd,
        log=args.log,
        review=args.review,
        run_id=args.run_id,
        in_place=args.in_place,
        keep_worktrees=args.keep_worktrees,
        commit=args.commit,
        pr=args.pr,
    )


def _forwarded(args: argparse.Namespace) -> list[str]:
    argv = [args.task_id] if args.task_id else []
    for flag in ("tool", "agent", "clarify", "budget_tokens", "budget_usd", "log"):
        value = getattr(args, flag)
        if value is not None:
            argv += ["--" + flag.replace("_", "-"), str(value)]
    for flag in ("review", "in_place", "keep_worktrees", "commit", "pr"):
        if getattr(args, flag):
            argv.append("--" + flag.replace("_", "-"))
    return argv


def _abort(ctx: Context) -> Result:
    holder = RunLock(ctx.paths).holder()
    if not holder or not holder.get("pid"):
        raise MaestroError(
            "no run is in progress in this project.",
            "nothing to abort; `maestro status` shows the plan.",
        )
    pid, run_id = int(holder["pid"]), str(holder.get("run_id"))
    if not is_engine_of(pid, run_id):
        # Its pid belongs to another PID namespace (a sandbox): here it may name anything.
        raise MaestroError(
            f"run {run_id} is held by an engine this shell cannot see (pid {pid} is not it here).",
            "stop it from the shell or sandbox that started it.",
        )
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        raise MaestroError(
            f"run {run_id} (pid {pid}) has already stopped.",
            "run `maestro run` to continue the plan.",
        ) from None
    text = (
        f"asked run {run_id} (pid {pid}) to stop: running tasks finish, nothing new starts. "
        "Follow it with `maestro wait`."
    )
    return Result("run", {"aborted": run_id, "pid": pid}, text)


def _detach(args: argparse.Namespace, ctx: Context) -> Result:
    paths = ctx.paths
    open_store(paths)
    run = RunDir(paths, new_run_id())
    # The lock is taken here and handed to the engine, so the run is never without a
    # live holder: if the engine dies before or after it starts working, the kernel
    # drops the lock and `maestro wait` says so.
    lock_fd, lock_env = RunLock(paths).hand_over(run.run_id)
    # This very Maestro, installed or a source checkout: its package folder goes first on
    # PYTHONPATH, and -P keeps the project's own folder (the engine's cwd) from shadowing it.

    source = str(Path(maestro.__file__).resolve().parent.parent)
    argv = [sys.executable, "-P", "-m", "maestro", "run", "--run-id", run.run_id, *_forwarded(args)]
    env = {
        **ctx.env,
        **lock_env,
        "MAESTRO_PROJECT_DIR": str(paths.root),
        "PYTHONPATH": os.pathsep.join(p for p in (source, ctx.env.get("PYTHONPATH")) if p),
    }
    try:
        run.create(state="starting", detached=True)
        pid = spawn_detached(
            argv, cwd=paths.root, env=env, output=run.output_path, pass_fds=(lock_fd,)
        )
    finally:
        os.close(lock_fd)
    run.write_meta(pid=pid)
    shown = shown_path(run.output_path, paths.root)
    started = f"run {run.run_id} started in the background (pid {pid}); engine output: {shown}"
    data = {"run_id": run.run_id, "pid": pid, "detached": True, "output": str(run.output_path)}
    if args.follow:  # the first wait, in the same call: one hub turn less
        ctx.emit(started)
        waited = answer(ctx, run, default_timeout(ctx.env), after=0, poll=1)
        return Result("run", {**data, **waited.data}, waited.text)
    follow = next_command(run.run_id, after=0, poll=1, as_json=ctx.json)
    text = (
        f"{started}\n"
        f"Follow it with the `next` command, as printed, until an answer has none (the run ended).\n"
        f"next: {follow}"
    )
    return Result("run", {**data, "next": follow}, text)


def _dry_run(options: Any, ctx: Context) -> Result:
    settings = ctx.settings
    plan = open_store(ctx.paths).load()
    rows = preview.preview(
        plan,
        settings=settings,
        options=options,
        installed=detect_available(ctx.env),
        spoke_for=lambda name: get_spoke(name, settings),
        catalog=load_catalog(settings),
    )
    return Result("run", {"dry_run": True, "tasks": rows}, preview.render(rows))


def _review_hook(ctx: Context) -> Any:
    def review(task_id: str, revise: Any = None, session: str | None = None) -> Any:
        # Called by the run as its session (``session``): the reviewer's is its child.
        caller = replace(ctx, env={**ctx.env, SESSION_MARKER: session}) if session else ctx
        return review_in_run(caller, task_id, revise=revise)

    return review


def _needs_network(options: Any, ctx: Context, plan: Plan) -> bool:
    """Will this run start a spoke that calls a provider (any but the simulated one)?"""

    if options.review:
        return True  # the reviewer is always another vendor's real CLI
    if options.tool:
        return not get_spoke(options.tool, ctx.settings).simulated
    tasks = [t for t in plan.tasks if t.status != "done" and options.task_id in (None, t.id)]
    return any(not t.tool or not get_spoke(t.tool, ctx.settings).simulated for t in tasks)


def _check_dirty(
    args: argparse.Namespace, ctx: Context, plan: Plan | None
) -> dict[str, str] | None:
    """Before anything starts: a person's uncommitted edit to a file a task owns would be
    overwritten by that task. Ask on a terminal; elsewhere refuse unless --allow-dirty.
    The detached engine never asks: its foreground command checked already. Returns the
    uncommitted paths it found (None when it did not look, or outside git)."""

    if args.allow_dirty or plan is None or RunLock(ctx.paths).holder():
        return None  # (a run going on has its own edits in the tree, and refuses a second run)
    changed = dirtytree.uncommitted(ctx.paths)
    changes = dirtytree.owned_changes(ctx.paths, plan, args.task_id, changed or {})
    if not changes:
        return changed
    if ctx.json or not ctx.interactive():
        raise dirtytree.refusal(ctx.paths, changes)
    ctx.stdout.write("Uncommitted changes to files the tasks own (a task may overwrite them):\n")
    for change in changes:
        ctx.stdout.write(f"  {change.describe()}\n")
    if not ctx.confirm("Run anyway, with the tasks working on top of them?"):
        raise dirtytree.refusal(ctx.paths, changes, asked=True)
    return changed


def render_summary(summary: Any, colour: bool = False) -> str:
    """The run's last line, then a table of the tasks it ran (``colour``: each status in
    its colour)."""

    rows = [
        [t["id"], t["status"], t["tool"] or "-", f"{t['tokens']:,}", t["title"]]
        for t in summary.tasks
    ]
    table = aligned(
        ("TASK", "STATUS", "CLI", "TOKENS", "TITLE"), rows, status=1 if colour else None
    )
    return frame([describe({"kind": "run_ended", **summary.to_dict()}), *(table if rows else [])])


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.abort:
        return _abort(ctx)
    if args.no_sandbox:  # (a detached engine inherits it with the environment)
        ctx = replace(ctx, env={**ctx.env, "MAESTRO_SANDBOX": "0"}, _settings=None)
    options = _options(args)
    if args.dry_run:
        return _dry_run(options, ctx)

    refuse_if_inside_spoke(ctx.env)

    # The checks before the run read the plan once; the detached engine checks nothing
    # (its command did).
    plan = None if args.run_id else open_store(ctx.paths).load()
    if plan is not None:
        network = _needs_network(options, ctx, plan)
        refuse_doomed(ctx.paths, ctx.env, detach=args.detach or args.follow, network=network)
    changed = _check_dirty(args, ctx, plan)
    if args.detach or args.follow:
        sandbox.rules(ctx.settings, ctx.env)  # refused here, not in the engine's output
        return _detach(args, ctx)

    engine = Engine(
        ctx.settings,
        env=ctx.env,
        options=options,
        out=ctx.stdout,
        quiet=ctx.json,
        review=_review_hook(ctx) if options.review else None,
        backoff_s=ctx.settings.retry_backoff,
    )
    recorder = Recorder(ctx.paths, changed, plan)
    try:
        summary = engine.run()
    finally:
        recorder.finish()
    text = render_summary(summary, ctx.colour())
    return Result("run", summary.to_dict(), text, exit_code=summary.exit_code)

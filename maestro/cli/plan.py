"""`maestro plan`: validate a hub's plan (YAML or JSON) and write `.ai/MAESTRO.md`.

The hub decides the decomposition; this command checks it (schema, dependency graph,
AAVSR), shows it, and writes it only when asked to (``--yes`` or a yes at the prompt).
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from maestro import clock, formatting, graph, planning, roster
from maestro.agents.catalog import load_catalog
from maestro.cli.archive import new_folder
from maestro.cli.busy import refuse_while_running
from maestro.cli.context import Context, Result
from maestro.cli.status import shown_path, task_data, task_rows
from maestro.engine.dispatch import Dispatch
from maestro.engine.preflight import refuse_doomed
from maestro.errors import MaestroError, NotFound, PlanError
from maestro.fsutil import atomic_write
from maestro.planning import EXAMPLE
from maestro.planning.ask import SYSTEM, answer, build_prompt
from maestro.planning.replan import Replan, replan
from maestro.spokes.base import refuse_if_inside_spoke
from maestro.spokes.registry import detect_available
from maestro.state.model import Plan, Source
from maestro.state.store import PlanStore

EXAMPLES = """\
  maestro plan --example plan.yaml              a commented example plan that passes the check
  maestro plan --schema > plan.schema.json      what a plan must hold (JSON Schema)
  maestro plan --from plan.yaml                 check it, show it, ask before writing
  maestro plan --from plan.yaml --yes           check and write .ai/MAESTRO.md
  cat plan.json | maestro plan --from - --hub claude --yes --json
  maestro plan --from plan.yaml --dry-run       check only, write nothing
  maestro plan "Add user authentication" --hub claude --dry-run
                                                ask a CLI (read-only) to decompose the goal

Re-planning over an existing plan keeps the status and results of the tasks whose id
and title are unchanged, and a person's notes and sections (what it cannot keep is
listed, and the current plan saved under .ai/archive/). It is refused while a run is
working on the plan: follow the run with `maestro wait`, or stop it with
`maestro run --abort`, first."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "goal", nargs="?", help="a goal to have the --hub CLI decompose (instead of --from)"
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--from", dest="source", metavar="FILE", help="plan in YAML or JSON; '-' reads stdin"
    )
    source.add_argument(
        "--schema", action="store_true", help="print the JSON Schema of the plan input"
    )
    source.add_argument(
        "--example",
        nargs="?",
        const="-",
        metavar="FILE",
        help="write a commented example plan (YAML) to FILE, or print it",
    )
    parser.add_argument(
        "--hub",
        choices=[cli.name for cli in roster.real()],  # the built-in sim cannot plan
        help="the CLI that made the plan, or that is asked to make it "
        "(default: the input's hub, then MAESTRO_HUB)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="check and show the plan; write nothing"
    )
    parser.add_argument("-y", "--yes", action="store_true", help="write without asking")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.schema or args.example:
        flag = "--schema" if args.schema else "--example"
        if args.goal:
            raise PlanError(f"{flag} takes no goal.", f"run `maestro plan {flag}` on its own.")
        if args.example:
            return _example(args.example, ctx)
        return Result("plan", {"schema": planning.SCHEMA}, json.dumps(planning.SCHEMA, indent=2))
    catalog = load_catalog(ctx.settings)  # unknown or disabled agents are errors
    plan, answer = _incoming(args, ctx, catalog)
    source = plan.source = Source(_hub(plan, args, ctx), clock.stamp())
    _relative_files(plan, ctx.paths.root)
    findings = planning.aavsr(
        plan, catalog=catalog, available=_available(plan, ctx), paths=ctx.paths
    ) + planning.unlandable(plan, ctx.paths)
    store = PlanStore(ctx.paths)
    existing = store.exists()
    previous = None
    change = Replan(plan)
    if existing:
        previous, current = _current(store, check=not args.dry_run)
        change = replan(plan, current)
        plan = change.plan
    elif not args.dry_run:
        refuse_while_running(ctx.paths, "re-planning")
    errors = planning.errors(findings)
    data: dict[str, Any] = {
        "goal": plan.goal,
        "hub": source.hub,
        "path": shown_path(ctx.paths),
        "tasks": [task_data(t, full=True) for t in plan.tasks],
        "waves": graph.waves(plan.tasks),
        "findings": [f.to_dict() for f in findings],
        "errors": len(errors),
        "warnings": len(findings) - len(errors),
        "kept": change.kept,
        "dropped": change.dropped,
        "notes": change.notes,
        "lost": change.lost,
        "saved": None,
        "dry_run": bool(args.dry_run),
        "written": False,
    }
    if answer is not None:
        data["asked"] = answer.to_dict()
    shown = _show(plan, findings, change, data, shown_path(ctx.paths, "archive_dir"))
    target = data["path"]
    if errors:
        first = errors[0]
        return _refuse(
            ctx,
            data,
            shown,
            f"{target} not written: {len(errors)} AAVSR error"
            f"{'s' if len(errors) > 1 else ''} (first: Task {first.task} {first.check}: {first.why})",
            "correct the plan input as the remedies say and run again.",
        )
    if args.dry_run:
        return Result("plan", data, shown + f"\n\nDry run: {target} not written.")
    if not args.yes:
        refused = _confirm(ctx, data, shown)
        if refused is not None:
            return refused
        shown = ""
    refuse_while_running(ctx.paths, "re-planning")  # a run may have started while we asked
    if previous is not None and change.loses:
        data["saved"] = _save_previous(ctx, previous)
    store.create(plan, replace=existing, expect=previous)
    data["written"] = True
    done = f"Wrote {target}: {len(plan.tasks)} tasks. Next: `maestro status`, `maestro challenge` or `maestro run`."
    if data["saved"]:
        done = f"The previous plan, with everything listed as not kept, is saved in {data['saved']}.\n{done}"
    return Result("plan", data, f"{shown}\n\n{done}" if shown else done)


def _incoming(args: argparse.Namespace, ctx: Context, catalog: Any) -> tuple[Plan, Any]:
    """The new plan, from the file (``--from``) or from the hub CLI asked for one (a goal),
    with the hub's answer in the second case."""

    if args.goal and args.source:
        raise PlanError(
            "give either a goal or --from, not both.",
            '`maestro plan --from FILE` checks a plan; `maestro plan "goal" --hub CLI` asks a CLI for one.',
        )
    if args.goal:
        if (ctx.cwd / Path(args.goal).expanduser()).is_file():
            given = shlex.quote(args.goal)
            raise PlanError(
                f"{args.goal} is a file, and a goal is words: did you mean "
                f"`maestro plan --from {given}`?",
                f"run `maestro plan --from {given}` to check the plan in it; to have a CLI plan "
                'a goal, write the goal: `maestro plan "Add user authentication" --hub claude`.',
            )

        refuse_doomed(ctx.paths, ctx.env, write=not args.dry_run)
        answer = _ask(args, ctx, catalog)
        return answer.plan, answer
    if args.source:
        text, name = _read_input(args.source, ctx)
        return planning.load(text, name=name), None
    raise PlanError(
        "no plan given.",
        "pipe the hub's plan with `maestro plan --from -` or name a file: `maestro plan --from plan.yaml` "
        '(its shape: `maestro plan --schema`); or ask a CLI: `maestro plan "goal" --hub claude`.',
    )


def _example(target: str, ctx: Context) -> Result:
    """The commented example plan, printed or written to a new file (never over one)."""

    text = EXAMPLE.read_text(encoding="utf-8")
    if target == "-":
        return Result("plan", {"example": text}, text.rstrip("\n"))
    path = ctx.cwd / Path(target).expanduser()
    if path.exists() or path.is_symlink():
        raise PlanError(
            f"{target} exists: not overwritten with the example.",
            "name a new file, or print the example with `maestro plan --example`.",
        )
    atomic_write(path, text)
    return Result(
        "plan",
        {"example": text, "written": str(path)},
        f"Wrote {target}: an example plan of 3 tasks, each key explained in a comment. "
        f"Next: make it yours, then `maestro plan --from {shlex.quote(target)} --dry-run`.",
    )


def _confirm(ctx: Context, data: dict[str, Any], shown: str) -> Result | None:
    """Without --yes: ask on a terminal (None: write), or refuse where there is none."""
    target = data["path"]
    if ctx.json or not ctx.interactive():
        return _refuse(
            ctx,
            data,
            shown,
            f"{target} not written: no --yes, and no terminal to ask on",
            "run again with --yes to write it (or --dry-run to only check).",
        )
    ctx.emit(shown + "\n")
    if not ctx.confirm(f"Write {target}?"):
        return Result("plan", data, f"Not written: {target} is unchanged.")
    return None


def _ask(args: argparse.Namespace, ctx: Context, catalog: Any) -> Any:
    tool = args.hub or ctx.settings.hub
    planners = [cli.name for cli in roster.real()]
    if tool not in planners:
        named = (
            f"MAESTRO_HUB={tool} cannot plan a goal" if tool else "no CLI named to plan the goal"
        )
        raise PlanError(
            f"{named}.", f"add --hub with one of {', '.join(planners)} (or set MAESTRO_HUB)."
        )
    refuse_if_inside_spoke(ctx.env)
    prompt = build_prompt(args.goal, catalog=catalog, installed=sorted(detect_available(ctx.env)))
    ctx.emit(f"asking {tool} to plan the goal (read-only)...")
    with Dispatch(
        ctx.paths,
        ctx.env,
        cli=tool,
        kind="plan",
        subject="Plan the goal",
        message=args.goal,
        recorded=not args.dry_run,  # a dry run writes nothing, not even its dispatch's record
    ) as dispatch:
        result = dispatch.ask(
            ctx.settings,
            prompt=prompt,
            system_prompt=SYSTEM,
            cwd=ctx.paths.root,
            title="Plan the goal",
            progress=ctx.emit,
        )
        return answer(args.goal, tool, result, ctx.settings)


def _relative_files(plan: Plan, root: Path) -> None:
    """Absolute paths inside the project become relative: the scope gate compares the
    files a task owns with the relative paths git reports. Paths outside stay as given,
    for AAVSR to refuse."""
    base = root.resolve()
    for task in plan.tasks:
        for n, raw in enumerate(task.files):
            path = Path(raw)
            if (
                path.is_absolute()
                and ".." not in path.parts
                and path.resolve().is_relative_to(base)
            ):
                task.files[n] = path.resolve().relative_to(base).as_posix() + (
                    "/" if raw.endswith("/") else ""
                )


def _read_input(source: str, ctx: Context) -> tuple[str, str]:
    if source == "-":
        return ctx.stdin.read(), "stdin"
    path = Path(source).expanduser()
    path = path if path.is_absolute() else ctx.cwd / path
    try:
        return path.read_bytes().decode("utf-8"), source
    except FileNotFoundError:
        raise NotFound(
            f"plan input {source} does not exist.",
            "check the path, or pipe the plan with `--from -`.",
        ) from None
    except IsADirectoryError:
        raise PlanError(
            f"plan input {source} is a folder.", "name the YAML or JSON file inside it."
        ) from None
    except UnicodeDecodeError:
        raise PlanError(
            f"plan input {source} is not UTF-8 text.", "save it as UTF-8 YAML or JSON."
        ) from None
    except OSError as exc:
        raise PlanError(
            f"cannot read plan input {source}: {exc.strerror}.", "check its permissions."
        ) from None


def _hub(plan: Plan, args: argparse.Namespace, ctx: Context) -> str:
    given = plan.source.hub if plan.source else None
    if given and args.hub and given != args.hub:
        raise PlanError(
            f"the plan input says hub: {given} but --hub says {args.hub}.",
            "drop one of them, or make them agree.",
        )
    return args.hub or given or ctx.settings.hub or "unknown"


def _available(plan: Plan, ctx: Context) -> Any:
    """Installed spoke CLIs, looked up only when a task names a tool."""
    return detect_available(ctx.env) if any(t.tool for t in plan.tasks) else None


def _current(store: Any, *, check: bool) -> tuple[bytes, Plan]:
    """The current plan file's bytes and its parse (with the layout of the person's text).

    Refuses (unless ``check`` is off: a dry run) while a run is going: its engine would
    write into a plan that is gone.
    """
    try:
        data, old = store.read()
    except PlanError as exc:
        raise PlanError(
            f"the current plan cannot be read, so re-planning could lose it: {exc.message}",
            f"repair it ({exc.fix or 'see the line named'}), or move it away with `maestro archive`.",
            file=exc.file,
            line=exc.line,
        ) from None
    if check:
        refuse_while_running(store.paths, "re-planning")
    return data, old


def _save_previous(ctx: Context, data: bytes) -> str:
    """Keep the current plan file under .ai/archive/ before a re-plan that drops some of it."""

    folder = new_folder(ctx.paths.archive_dir)
    atomic_write(folder / ctx.paths.plan.name, data)
    saved = folder / ctx.paths.plan.name
    return formatting.shown_path(saved, ctx.paths.root)


def _show(
    plan: Plan, findings: list[Any], change: Replan, data: dict[str, Any], archive: str
) -> str:
    waves = data["waves"]
    plural = "s" if len(waves) != 1 else ""
    lines = [
        f"Goal: {plan.goal}",
        f"Plan: {len(plan.tasks)} tasks in {len(waves)} wave{plural}, hub {data['hub']}",
        "",
        *task_rows(plan.tasks, with_status=False),
        "",
        "Waves: " + " | ".join(", ".join(w) for w in waves),
    ]
    if findings:
        errors, warnings = data["errors"], data["warnings"]
        counts = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
        lines += ["", f"AAVSR: {counts}"]
        for f in findings:
            where = f"Task {f.task}" if f.task else "plan"
            lines.append(f"  {f.level:<7}  {where}  {f.check}: {f.why}")
            lines.append(f"           remedy: {f.remedy}")
    else:
        lines += ["", "AAVSR: every task passes (Atomic, Authority, Verifiable, Scope, Risk)."]
    if change.kept:
        lines += [
            "",
            "Kept from the current plan (same id and title): "
            + ", ".join(f"Task {k['id']} ({k['status']})" for k in change.kept),
        ]
    if change.dropped:
        lines += [
            "",
            "Results dropped (id or title changed, or the task is gone): "
            + ", ".join(f"Task {d['id']} ({d['status']})" for d in change.dropped),
        ]
    if change.lost:
        lines += ["", "Not carried over: " + "; ".join(change.lost)]
    if change.notes:
        lines += [
            "",
            f"Notes the new plan has no place for (saved with the current plan under {archive}/):",
        ]
        for note in change.notes:
            lines.append(f"  {note['where']}:")
            lines += [f"    {line}" if line.strip() else "" for line in note["text"].split("\n")]
    return "\n".join(lines)


def _refuse(ctx: Context, data: dict[str, Any], shown: str, problem: str, fix: str) -> Result:
    """Nothing written: the plan and findings go to stdout (or the JSON envelope), and one
    line naming the fix to stderr; exit 1."""
    error = MaestroError(problem + ".", fix)
    data["error"] = error.to_dict()
    ctx.stderr.write(f"maestro: error: {error}\n")
    return Result("plan", data, shown, exit_code=1)

"""`maestro wait`: block until the run reports something, print it, say if it goes on."""

from __future__ import annotations

import argparse

from maestro.cli.context import Context, Result

DEFAULT_TIMEOUT_S = 100.0

EXAMPLES = f"""\
  maestro run --detach && maestro wait
  maestro wait --timeout 540          at most 9 minutes (stay under your shell tool's limit)
  maestro wait --json                 the same events as JSON objects
  maestro wait --run 20261121T120000Z-1a2b

Returns as soon as a task finishes, fails or is blocked, a decision is needed, or the run
ends; events already shown are not shown again. Without --timeout it returns after
{DEFAULT_TIMEOUT_S:g}s, under the 2-minute default of a host's shell tool.

exit codes: 0 the run has ended (nothing more will happen); 10 the run is still going:
call `maestro wait` again; 11 the timeout passed with no task finished (still going);
1 an error (no run, bad flag)."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError("the timeout must be from 0 to 86400 seconds")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"return after S seconds at most (default {DEFAULT_TIMEOUT_S:g}; 0 checks once)")
    parser.add_argument("--run", metavar="RUN_ID", help="follow this run (default: the latest)")


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from maestro.engine.progress import describe
    from maestro.engine.runs import find_run
    from maestro.engine.waiting import wait_for

    run_dir = find_run(ctx.paths, args.run)
    outcome = wait_for(run_dir, args.timeout)
    lines = [describe(event) for event in outcome.events]
    if outcome.state == "ended" and not outcome.events:
        lines.append("nothing new; " + (describe(outcome.ended) if outcome.ended else f"run {run_dir.run_id} has ended."))
    if outcome.state == "running":
        lines.append(f"run {run_dir.run_id} is still going: call `maestro wait` again.")
    elif outcome.state == "timeout":
        news = "no task finished" if outcome.events else "nothing new"
        lines.append(f"{news} after {args.timeout:g}s; run {run_dir.run_id} is still going: call `maestro wait` again.")
    data = {"run_id": run_dir.run_id, "state": outcome.state, "events": outcome.events, "ended": outcome.ended}
    return Result("wait", data, "\n".join(lines), exit_code=outcome.exit_code)

"""`maestro wait`: block until the run reports something, print it, say if it goes on."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from maestro.bus.messages import mail_id
from maestro.cli.argtypes import count, seconds
from maestro.cli.context import Context, Result
from maestro.cli.mail import full
from maestro.engine.progress import digest
from maestro.engine.rundir import RunDir, find_run
from maestro.engine.runwait import wait_for
from maestro.formatting import elapsed_text
from maestro.install.invocation import current
from maestro.roster import hub_of

# In a person's own shell; inside a host, the longest its shell tool allows
# (``roster.Cli.hub_wait_s``).
DEFAULT_TIMEOUT_S = 600.0

EXAMPLES = """\
  maestro run --follow                start the run and wait for it (what a hub runs)
  maestro run --detach && maestro wait   the same in two steps
  maestro wait --timeout 60           return within a minute whatever happens
  maestro wait --json                 the same as one JSON object
  maestro wait --run 20261121T120000Z-1a2b
  maestro wait --run 20261121T120000Z-1a2b --after 4 --poll 3   as a `next:` line says

Each answer ends with the exact command to run next (`next: ...`; "next" in --json),
until the run has ended. Run it as printed: it names the run, the last event shown
(--after, so a repeated call gives the same answer) and counts the calls (--poll), so no
two calls in a row are identical (hosts stop a model that repeats one: Gemini CLI after 5).

Returns only when the hub following the run must act: a decision is needed (a task's
retries are exhausted), a worker asks a question or reports a blocker (printed with the
exact `maestro mail reply` line that answers it), or the run ends. Tasks done, failed or
blocked never wake it (the board and notifications show progress): the answer sums up
those since the last one. Events and mail already shown are not shown again. Without
--timeout it returns after 600s in a person's shell, and inside a host's shell tool after
the longest that tool allows: Claude Code 7140s (a Bash command run in the background,
`timeout` 7200000 ms); no limit in Gemini CLI (a line every 150s keeps its shell, which
stops a command silent for 300s, waiting) nor in Codex CLI (polled with write_stdin).

exit codes: 0 it returned normally (`state` says: ended, running or timeout; no `next`
once the run has ended); 1 an error (no run, bad flag)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=seconds,
        metavar="S",
        help="return after S seconds at most (default: the host shell tool's limit, if any, "
        f"or {DEFAULT_TIMEOUT_S:g} in a person's shell; 0 checks once)",
    )
    parser.add_argument("--run", metavar="RUN_ID", help="follow this run (default: the latest)")
    parser.add_argument(
        "--after",
        type=count,
        metavar="SEQ",
        help="show the events after this one (default: those not shown yet)",
    )
    parser.add_argument(
        "--poll",
        type=count,
        metavar="N",
        help="this is the Nth call following the run (default: one more than the last)",
    )


def next_command(run_id: str, *, after: int, poll: int, as_json: bool) -> str:
    """The exact command line a hub runs next to follow ``run_id``: this same program,
    and never the same words twice in a row (``--poll`` counts up)."""

    mode = " --json" if as_json else ""
    return f"{current()} wait{mode} --run {run_id} --after {after} --poll {poll}"


def reply_command(mail_number: int) -> str:
    """The exact command that answers a worker's message, with this same program."""

    return f'{current()} mail reply {mail_id(mail_number)} --message "..."'


def default_timeout(env: dict[str, str]) -> float | None:
    """The longest a wait may block where it runs: its host's shell tool's limit (None:
    none), or ``DEFAULT_TIMEOUT_S`` in a person's shell."""

    hub = hub_of(env)
    return DEFAULT_TIMEOUT_S if hub is None else hub.hub_wait_s


def keepalive(ctx: Context) -> tuple[float, Callable[[], None]] | None:
    """What keeps a silent wait going in a host's shell tool that stops a command silent
    for a while: a short line at half that time (a blank one under --json, whose answer
    stays one JSON object). None where silence is allowed."""

    hub = hub_of(ctx.env)
    silence = hub.host.shell_silence_s(ctx.env, ctx.paths.root) if hub and hub.host else None
    if silence is None:
        return None
    started = time.monotonic()

    def say() -> None:
        waited = elapsed_text(time.monotonic() - started)
        ctx.stdout.write("\n" if ctx.json else f"still waiting ({waited}): nothing needs you yet\n")
        ctx.stdout.flush()

    return silence / 2, say


def run(args: argparse.Namespace, ctx: Context) -> Result:
    timeout = default_timeout(ctx.env) if args.timeout is None else args.timeout
    return answer(ctx, find_run(ctx.paths, args.run), timeout, after=args.after, poll=args.poll)


def answer(
    ctx: Context, run_dir: RunDir, timeout: float | None, *, after: int | None, poll: int | None
) -> Result:
    """Wait on ``run_dir`` (see ``wait_for``) and say what the hub must know and do."""
    outcome = wait_for(run_dir, timeout, after=after, poll=poll, keepalive=keepalive(ctx))

    # A blocker is an event and mail to answer: shown once, as the mail with its reply line.
    answering = {message.id for message in outcome.mail}
    events = [
        event
        for event in outcome.events
        if not (event.get("kind") == "task_report" and event.get("mail") in answering)
    ]
    # What the follower relays or acts on, the tasks done on one line.
    events, lines = digest(events)
    if outcome.repeated:
        lines = ["nothing new; " + lines[-1]]
    mail = []
    for message in outcome.mail:
        reply = reply_command(message.id)
        mail.append({**message.to_dict(), "reply": reply})
        lines.append(full(message) + f"\n  answer: {reply}")
    if outcome.state == "running":
        lines.append(f"run {run_dir.run_id} is still going.")
    elif outcome.state == "timeout":
        news = "nothing needs you" if events else "nothing new"
        lines.append(f"{news} after {timeout:g}s; run {run_dir.run_id} is still going.")
    data: dict[str, object] = {
        "run_id": run_dir.run_id,
        "state": outcome.state,
        "events": events,
        "last_seq": outcome.last_seq,
        "mail": mail,
    }
    if outcome.state != "ended":
        data["next"] = next_command(
            run_dir.run_id, after=outcome.last_seq, poll=outcome.poll + 1, as_json=ctx.json
        )
        lines.append(f"next: {data['next']}")
    return Result("wait", data, "\n".join(lines))

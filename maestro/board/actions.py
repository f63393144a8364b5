"""What the page may ask: each action is the very `maestro` command a person would type
at a shell, run as a child process in the project, so the engine records it exactly as
it records theirs (the run's events, the log, the session's reason, the mail).

Every parameter is checked (a task id, a CLI name, a mail id) and passed as one argv
entry, a text always as ``--flag=TEXT`` so that no text is ever read as a flag; no shell
runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from maestro import roster
from maestro.board.snapshot import check_task
from maestro.cli.context import Context
from maestro.errors import MaestroError

TEXT_LIMIT = 8000
WAIT_S = 30.0  # an action still working after this (a review) goes on; the page is told
MAIL_ID = re.compile(r"m\d{1,12}")


def _text(params: dict[str, Any], name: str = "text") -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value.strip():
        raise MaestroError(f"the {name} is empty.", "write it, then send again.")
    if len(value) > TEXT_LIMIT:
        raise MaestroError(f"the {name} is over {TEXT_LIMIT} characters.", "shorten it.")
    return value.strip()


def _task(params: dict[str, Any]) -> str:
    return check_task(str(params.get("task", "")))


def _tool(params: dict[str, Any]) -> str:
    tool = params.get("tool")
    if tool not in roster.NAMES:
        raise MaestroError(f"{tool!r} is not a CLI.", f"pick one of {', '.join(roster.NAMES)}.")
    return str(tool)


def _mail(params: dict[str, Any]) -> str:
    mail = str(params.get("mail", ""))
    if not MAIL_ID.fullmatch(mail):
        raise MaestroError(f"{mail!r} is not a mail id.", "reply to a mail the board shows.")
    return mail


# action -> the maestro argv it runs (after `maestro -C <project>`)
ACTIONS: dict[str, Callable[[Context, dict[str, Any]], list[str]]] = {
    "start": lambda ctx, p: ["run", "--detach"],
    "abort": lambda ctx, p: ["run", "--abort"],
    "continue": lambda ctx, p: ["run", "--detach"],
    "retry": lambda ctx, p: ["run", _task(p), "--detach"],
    "clarify": lambda ctx, p: ["run", _task(p), f"--clarify={_text(p)}", "--detach"],
    "reassign": lambda ctx, p: ["run", _task(p), f"--tool={_tool(p)}", "--detach"],
    "stop": lambda ctx, p: ["task", "stop", _task(p), f"--reason={_text(p)}"],
    "accept": lambda ctx, p: ["review", _task(p), "--auto"],
    "send-back": lambda ctx, p: ["run", _task(p), f"--clarify={_text(p)}", "--detach"],
    "reply": lambda ctx, p: ["mail", "reply", _mail(p), f"--message={_text(p)}"],
}


def command(ctx: Context, params: dict[str, Any]) -> list[str]:
    """The maestro argv ``params`` ask for; a one-line error when they are wrong."""
    name = params.get("action")
    if name not in ACTIONS:
        raise MaestroError(f"{name!r} is not an action.", f"use one of {', '.join(ACTIONS)}.")
    return ACTIONS[str(name)](ctx, params)


def perform(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Run the action's command; its exit code and what it printed."""
    argv = command(ctx, params)
    full = [sys.executable, "-m", "maestro", "-C", str(ctx.paths.root), *argv]
    # A file, not a pipe: a command still working after WAIT_S never blocks on it.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        proc = subprocess.Popen(
            full,
            cwd=ctx.paths.root,
            env=ctx.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a detached engine it starts outlives the board
        )
        shown = "maestro " + " ".join(argv)
        try:
            code: int | None = proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            code = None
        out.seek(0)
        output = out.read().strip() or (f"still working (pid {proc.pid})" if code is None else "")
    return {"command": shown, "exit": code, "output": output}

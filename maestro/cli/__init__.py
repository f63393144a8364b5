"""Command-line entry: parse, dispatch to one command module, render, map errors to exits.

Exit codes: 0 ok; 1 a user error, a wrong flag included, or a full disk (one line naming
the fix);
3 an unexpected error (details in a crash log); 130 interrupted. A command may return
another code in its result (``wait`` says whether the run is still going, ``tokens
--check`` fails over budget).

A reader that stops reading (``maestro run | head -1``) does not stop the command: what
it would still print is dropped, the work goes on to its end (a run records every task
and ends as usual), and the exit code is the command's own.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import import_module
from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

from maestro import __version__, clis
from maestro.bus import door
from maestro.cli.context import Context
from maestro.cli.render import render_error, render_result
from maestro.cli.tree import children, closest, flags
from maestro.commands import BY_NAME, COMMANDS
from maestro.engine.preflight import read_only_error
from maestro.errors import MaestroError
from maestro.formatting import Frame, inert
from maestro.fsutil import disk_full, is_disk_full
from maestro.paths import user_state_dir

EXIT_USER = 1
EXIT_INTERNAL = 70  # sysexits EX_SOFTWARE: never one of a command's own codes (run: 0-3)
EXIT_INTERRUPTED = 130

_TOP_EPILOG = """\
examples:
  maestro demo                      run a small goal offline, end to end
  maestro plan --from plan.yaml     validate a plan and write .ai/MAESTRO.md
  maestro run --detach && maestro wait
  maestro status --json

Run 'maestro COMMAND --help' for a command's options and examples."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line usage error that names the fix, exiting 1: the word a
    typo most likely meant, when one is close."""

    help_hint = "maestro --help"

    def error(self, message: str) -> NoReturn:
        message, _, guess = message.partition(_GUESS)
        fix = (
            f"did you mean {guess}? See '{self.help_hint}'" if guess else f"see '{self.help_hint}'"
        )
        self.exit(EXIT_USER, f"maestro: error: {inert(message)}. Fix: {inert(fix)}.\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices and value not in action.choices:
            guess = closest(str(value), [str(choice) for choice in action.choices])
            if guess:
                raise argparse.ArgumentError(action, f"invalid choice: {value!r}{_GUESS}{guess!r}")
        super()._check_value(action, value)


# How a guess rides in an error's message to `_Parser.error`, which makes it the fix.
_GUESS = "; guess: "


def _unknown(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> str:
    """The error for arguments no parser took, with the flag the first one most likely
    meant among those of the command (and verb) it was given to."""
    levels = [parser]
    for name in (getattr(args, "command", None), getattr(args, "verb", None)):
        child = children(levels[-1]).get(name or "")
        if child is not None:
            levels.append(child)
    message = f"unrecognized arguments: {' '.join(extra)}"
    typo = next((word.partition("=")[0] for word in extra if word.startswith("--")), None)
    known = [name for level in levels for flag in flags(level) for name in flag.names]
    guess = closest(typo, known) if typo else None
    return message + (f"{_GUESS}{guess!r}" if guess else "")


def _command_at(argv: Sequence[str]) -> int | None:
    """Where the command's name is in ``argv`` (None: no command)."""
    skip_next = False
    for at, arg in enumerate(argv):
        if skip_next:
            skip_next = False
            continue
        if arg in ("-C", "--project"):
            skip_next = True
            continue
        if arg.startswith("-"):
            continue
        return at if arg in BY_NAME else None
    return None


def _selected_command(argv: Sequence[str]) -> str | None:
    at = _command_at(argv)
    return None if at is None else argv[at]


def _through_door(entry: Path, argv: Sequence[str], args: argparse.Namespace, ctx: Context) -> int:
    """An office command in a confined spoke: its words go through the spoke's door and
    the engine runs them as the spoke's session (``bus.door``). Its message, when stdin
    holds it, goes as ``--message``; ``-C`` stays behind (the engine knows the project)."""
    at = _command_at(argv)
    words = list(argv[at:] if at is not None else argv)
    words += ["--json"] if ctx.json else []
    if getattr(args, "message", "") is None:  # mail send, reply, broadcast: from stdin
        words.append("--message=" + ctx.text(None))
    answer = door.knock(entry, words)
    ctx.stdout.write(str(answer.get("stdout") or ""))
    ctx.stderr.write(str(answer.get("stderr") or ""))
    code = answer.get("exit")
    return code if isinstance(code, int) else EXIT_USER


def build_parser(*selected: str) -> argparse.ArgumentParser:
    """The parser; the commands named in ``selected`` get their own arguments (importing
    a command's module only when it is given keeps start-up fast)."""
    parser = _Parser(
        prog="maestro",
        description="Plan, challenge, run, review and report multi-agent work across "
        "Claude Code, Gemini CLI and Codex CLI.",
        epilog=_TOP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"maestro {__version__}")
    parser.add_argument("-C", "--project", metavar="DIR", help="run as if started in DIR")
    parser.add_argument("--json", action="store_true", help="print a versioned JSON envelope")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for spec in COMMANDS:
        kwargs: dict[str, Any] = {"help": spec.summary, "description": spec.summary}
        module = import_module(spec.module) if spec.name in selected else None
        if module is not None:
            kwargs["epilog"] = "examples:\n" + getattr(module, "EXAMPLES", "").rstrip()
            kwargs["formatter_class"] = argparse.RawDescriptionHelpFormatter
        child = sub.add_parser(spec.name, **kwargs)
        # SUPPRESS: `maestro --json status` keeps the --json given before the command.
        child.add_argument(
            "--json",
            action="store_true",
            default=argparse.SUPPRESS,
            help="print a versioned JSON envelope",
        )
        if module is not None:
            module.add_arguments(child)
            child.set_defaults(_module=module)
    return parser


class _Output:
    """A command's stdout or stderr: inert, and outliving its reader.

    Everything written is made inert (``formatting.inert``): a mail subject, a spoke's
    summary or a task title that holds terminal codes shows them escaped, whichever
    command prints it; only the live view's ``Frame`` keeps its cursor codes.
    The first broken pipe marks the stream gone: later writes are dropped instead of
    raising in whichever thread (a run's progress line, a task's worker) happens to print
    next, which used to end the run half-way with a task left marked running."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._stream.write(text if isinstance(text, Frame) else inert(text))
            except BrokenPipeError:
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lost()

    def _lost(self) -> None:
        self.gone = True
        _silence(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence(stream: TextIO) -> None:
    """Point a real stream's descriptor at /dev/null: what is left in its buffer then
    flushes quietly at exit instead of printing an 'Exception ignored' traceback."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)


def _crash_log(exc: BaseException) -> Path | None:
    try:
        folder = user_state_dir(create=True) / "crash"
        folder.mkdir(exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        path = folder / f"crash-{stamp}.log"
        path.write_text(
            f"maestro {__version__}\nargv: {sys.argv!r}\n\n"
            + "".join(traceback.format_exception(exc)),
            encoding="utf-8",
        )
        return path
    except (OSError, MaestroError):  # no state folder, or none to trust: no log
        return None


def _project_dir(given: str, cwd: Path) -> Path:
    """The folder ``-C`` names, which must exist: a mistyped one would otherwise get a
    fresh ``.ai`` tree from ``plan --from`` (writes create their parent folders)."""
    folder = (cwd / Path(given).expanduser()).resolve()
    if folder.is_dir():
        return folder
    problem = "is a file, not a folder" if folder.exists() else "does not exist"
    raise MaestroError(
        f"-C {given}: {folder} {problem}.",
        "give the project's folder (it must exist), or leave -C out to use the current one.",
    )


def main(argv: Sequence[str] | None = None, ctx: Context | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ctx = ctx or Context()
    try:
        clis.load(ctx.env)  # every CLI is known before an argument is read
    except MaestroError as error:
        ctx.stderr.write(f"maestro: error: {error}\n")
        return error.exit_code
    selected = _selected_command(argv)
    _Parser.help_hint = f"maestro {selected} --help" if selected else "maestro --help"
    parser = build_parser(*([selected] if selected else []))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            parser.error(_unknown(parser, args, extra))
    except SystemExit as exc:  # --help, --version, usage errors
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(ctx.stdout)
        return 0
    ctx.json = bool(getattr(args, "json", False))
    ctx.stdout = cast(TextIO, _Output(ctx.stdout))
    ctx.stderr = cast(TextIO, _Output(ctx.stderr))
    try:
        if args.project:
            ctx.cwd = _project_dir(args.project, ctx.cwd)
            ctx.env = {**ctx.env, "MAESTRO_PROJECT_DIR": str(ctx.cwd)}
        entry = door.found() if args.command in door.COMMANDS else None
        if entry is not None:
            return _through_door(entry, argv, args, ctx)
        result = args._module.run(args, ctx)
        render_result(result, ctx.json, ctx.stdout)
        return int(result.exit_code)
    except MaestroError as error:
        render_error(args.command, error, ctx.json, ctx.stdout, ctx.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        ctx.stderr.write("maestro: interrupted.\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_USER
    except OSError as exc:
        if exc.errno == errno.EROFS:  # a sandbox or a read-only mount: the user's to fix
            refused = read_only_error(exc, ctx.env)
            render_error(args.command, refused, ctx.json, ctx.stdout, ctx.stderr)
            return refused.exit_code
        if not is_disk_full(exc):
            return _internal_error(exc, ctx)
        full = disk_full(exc, None, near=ctx.cwd)  # a write outside atomic_write: an append, a lock
        render_error(args.command, full, ctx.json, ctx.stdout, ctx.stderr)
        return full.exit_code
    except Exception as exc:  # noqa: BLE001 - the one handler for unexpected errors: exit 3 with a crash log
        return _internal_error(exc, ctx)
    finally:
        ctx.keep_state_out_of_git()


def _internal_error(exc: Exception, ctx: Context) -> int:
    path = _crash_log(exc)
    where = f" Details: {path}" if path else ""
    ctx.stderr.write(
        f"maestro: internal error: {type(exc).__name__}: {exc}.{where} "
        "Please report it with that file.\n"
    )
    return EXIT_INTERNAL


def console_main() -> None:
    try:
        code = main()
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    try:
        sys.stdout.flush()  # --help and --version print straight to it
    except BrokenPipeError:
        _silence(sys.stdout)
    sys.exit(code)

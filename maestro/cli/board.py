"""`maestro board`: serve the project's board on the loopback interface, print its URL,
open it on a desktop, and serve until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import webbrowser

from maestro.board import handoff
from maestro.board.server import Board
from maestro.cli.context import Context, Result

EXAMPLES = """\
  maestro board                      serve on 127.0.0.1, a free port; open it in a browser
  maestro board --port 7300 --no-open
  maestro board --host 0.0.0.0       reachable from other machines (the same token guards it)

The URL holds a random token: whoever has it can steer the run. It is printed once;
the page keeps it in its tab's session storage, for the board's own address and port
only. Ctrl-C stops the board (never the run)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; another only when you mean it)",
    )
    parser.add_argument("--no-open", action="store_true", help="print the URL, open no browser")


def _desktop(env: dict[str, str]) -> bool:
    return sys.platform == "darwin" or bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def run(args: argparse.Namespace, ctx: Context) -> Result:
    board = Board(ctx, args.host, args.port)
    ctx.stdout.write(f"board: {board.url}\n(Ctrl-C stops the board; the run goes on)\n")
    ctx.stdout.flush()
    if not args.no_open and _desktop(ctx.env):
        # The browser's command line is in the process list: it gets a private file's
        # path, and the file the token (removed once the page has used it).
        board.handoff = handoff.write(board.url)
        webbrowser.open(board.handoff.as_uri())
    try:
        board.serve()
    except KeyboardInterrupt:
        pass
    finally:
        board.close()
        board.forget_handoff()  # a file never opened goes too
    return Result("board", {"url": board.url.split("#")[0]}, "board stopped.")

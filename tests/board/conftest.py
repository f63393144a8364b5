"""The board under test: a server in a thread of the test, and a real browser (Debian's
chromium driven by Playwright for Python) for the page's own tests.

Browser tests skip when Playwright or chromium is missing, unless
MAESTRO_REQUIRE_BROWSER=1 (as in CI), where that is a failure. Screenshots go to
MAESTRO_BOARD_SHOTS (default build/board/) for a person to look at; none is compared.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maestro.board.server import TOKEN_HEADER, Board
from maestro.cli.context import Context

CHROMIUM = os.environ.get("MAESTRO_CHROMIUM", "/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]


def shots_dir() -> Path:
    folder = Path(os.environ.get("MAESTRO_BOARD_SHOTS", ROOT / "build" / "board"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def board_of() -> Iterator[Any]:
    """``board_of(root)``: a board of that project, served until the test ends."""
    boards: list[Board] = []

    def start(root: Path) -> Board:
        board = Board(Context(cwd=root, env=dict(os.environ))).start()
        boards.append(board)
        return board

    yield start
    for board in boards:
        board.close()


def fetch(
    board: Board,
    path: str,
    *,
    token: bool = True,
    headers: dict[str, str] | None = None,
    body: dict[str, Any] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request to ``board`` (no redirects followed): status, headers, body."""
    sent = dict(headers or {})
    if token:
        sent.setdefault(TOKEN_HEADER, board.token)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    request = urllib.request.Request(board.origin + path, data=data, headers=sent)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    required = os.environ.get("MAESTRO_REQUIRE_BROWSER") == "1"

    def missing(why: str) -> None:
        if required:
            pytest.fail(f"{why} (MAESTRO_REQUIRE_BROWSER=1)")
        pytest.skip(why)

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed: pip install playwright")
    if not Path(CHROMIUM).exists():
        missing(f"no chromium at {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], f"the page raised: {errors}"


@pytest.fixture
def other_server() -> Iterator[tuple[str, list[str]]]:
    """Another web server on this machine (a dev server on another port): its URL, and
    every request it received, as its request line and headers."""
    received: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            received.append(f"{self.requestline}\n{self.headers}")
            body = b"<!doctype html><title>another server</title><p>another server</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()

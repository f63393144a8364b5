"""The board's HTTP server: the standard library's ``ThreadingHTTPServer``, one thread
per request, an event stream (server-sent events) per open page.

Safe on a shared machine: bound to 127.0.0.1 unless another address is asked for; a
random token, given once in the URL's fragment (which no browser sends to any server),
is kept by the page in its origin's session storage and sent in the ``X-Maestro-Token``
header of every request for data or an action, the event stream included. No cookie:
browsers send a cookie of 127.0.0.1 to every port of it, so any other local server the
person opens would receive it. A page of another origin cannot send that header without
a CORS preflight, which this server never grants. On loopback the Host header must name
the server itself (a page of another site cannot reach it by a DNS name that points
here); an action also needs its Origin to be the board's own; every answer carries a
Content-Security-Policy that allows only the board's own script and style, and no framing.
The page's files hold no data and are served to anyone who reaches the board.
"""

from __future__ import annotations

import http.server
import ipaddress
import json
import secrets
import sys
import threading
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from maestro.board import actions, handoff, snapshot
from maestro.board.feed import Feed
from maestro.cli.context import Context
from maestro.errors import MaestroError
from maestro.netproxy import is_address

KEEPALIVE_S = 15.0
TOKEN_HEADER = "X-Maestro-Token"
BODY_LIMIT = 64 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
KINDS = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def _assets() -> dict[str, tuple[bytes, str]]:
    """The page's files, read once: ``/`` its HTML, ``/<name>`` each script and style
    sheet of the package's static folder."""
    folder = resources.files("maestro.board").joinpath("static")
    found = {"/": (folder.joinpath("index.html").read_bytes(), "text/html; charset=utf-8")}
    for item in folder.iterdir():
        kind = KINDS.get(Path(item.name).suffix)
        if kind is not None:
            found["/" + item.name] = (item.read_bytes(), kind)
    return found


class Board:
    """One project's board: the server, its token and the follower that feeds it."""

    def __init__(self, ctx: Context, host: str = "127.0.0.1", port: int = 0) -> None:
        self.ctx = ctx
        self.token = secrets.token_urlsafe(24)
        self.assets = _assets()
        self.feed = Feed(ctx)
        self.unserved = False  # the feed failed to start: the server never served
        self.handoff: Path | None = None  # the file a browser was opened on (handoff.py)
        try:
            self.httpd = _Server((host, port), _Handler)
        except OSError as exc:
            raise MaestroError(
                f"cannot listen on {host}:{port}: {exc.strerror}.",
                "pick another --port, or leave it out to take a free one.",
            ) from None
        self.httpd.board = self
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self.loopback = (
            ipaddress.ip_address(host).is_loopback if is_address(host) else host == "localhost"
        )
        self.hosts = {f"{host}:{self.port}"} | (
            {f"127.0.0.1:{self.port}", f"localhost:{self.port}"} if self.loopback else set()
        )

    def forget_handoff(self) -> None:
        """The file that handed the token to a browser goes: a page has sent the token
        (the browser has read the file), or the board stops."""
        path, self.handoff = self.handoff, None
        if path is not None:
            handoff.remove(path)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/#token={self.token}"

    def serve(self) -> None:
        """Serve until ``close`` (or Ctrl-C)."""
        try:
            self.feed.start()
        except BaseException:
            self.unserved = True
            raise
        self.httpd.serve_forever(poll_interval=0.25)

    def start(self) -> Board:
        """Serve from a thread of its own (tests, benchmarks)."""
        threading.Thread(target=self.serve, name="board", daemon=True).start()
        return self

    def close(self) -> None:
        self.feed.stop()
        if not self.unserved:  # shutdown waits for serving to end: forever, if it never began
            self.httpd.shutdown()
        self.httpd.server_close()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    board: Board

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A page gone mid-answer is no error; anything else is one line, not a traceback."""
        del request, client_address
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            sys.stderr.write(f"board: {type(error).__name__}: {error}\n")


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        del format, args  # the person watches the page, not an access log

    @property
    def board(self) -> Board:
        return self.server.board

    # -- answers ------------------------------------------------------------------------

    def _headers(
        self, status: int, kind: str, length: int | None, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()

    def _send(
        self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None
    ) -> None:
        self._headers(status, kind, len(body), extra)
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: Any, status: int = HTTPStatus.OK) -> None:
        body = json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _refuse(self, status: int, why: str) -> None:
        self._send(status, (why + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    # -- checks -------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        return not self.board.loopback or self.headers.get("Host", "") in self.board.hosts

    def _token_ok(self) -> bool:
        given = self.headers.get(TOKEN_HEADER, "")
        if not given or not secrets.compare_digest(given.encode(), self.board.token.encode()):
            return False
        self.board.forget_handoff()
        return True

    def _same_origin(self) -> bool:
        origin = self.headers.get("Origin", "")
        site = self.headers.get("Sec-Fetch-Site", "same-origin")
        return site == "same-origin" and origin == f"http://{self.headers.get('Host', '')}"

    # -- requests -----------------------------------------------------------------------

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if not self._host_ok():
            return self._refuse(HTTPStatus.FORBIDDEN, "refused: not this board's address.")
        if url.path in self.board.assets:  # the page itself: no data, no token needed
            body, kind = self.board.assets[url.path]
            return self._send(HTTPStatus.OK, body, kind)
        if not self._token_ok():
            return self._refuse(
                HTTPStatus.UNAUTHORIZED,
                "refused: no valid token. Open the URL `maestro board` printed.",
            )
        if url.path == "/events":
            return self._stream()
        if url.path == "/api/state":  # what the event stream sends, for scripts and tests
            return self._send(HTTPStatus.OK, self.board.feed.state, "application/json")
        try:
            data = self._api(url.path, query)
        except MaestroError as error:
            return self._json({"error": error.message, "fix": error.fix}, HTTPStatus.BAD_REQUEST)
        except Exception as error:  # noqa: BLE001 - one request's fault, answered, not the board's
            return self._failed(error)
        if data is None:
            return self._refuse(HTTPStatus.NOT_FOUND, "no such page.")
        return self._json(data)

    do_HEAD = do_GET

    def _api(self, path: str, query: dict[str, str]) -> Any:
        ctx = self.board.ctx
        if path == "/api/task":
            return snapshot.task_detail(ctx, query.get("id", ""))
        if path == "/api/transcript":
            return snapshot.read_transcript(ctx.paths, query)
        if path == "/api/office":
            return snapshot.office(ctx.paths)
        if path == "/api/challenges":
            return snapshot.challenges(ctx)
        return None

    def do_POST(self) -> None:
        if not self._host_ok() or not self._token_ok():
            return self._refuse(HTTPStatus.UNAUTHORIZED, "refused: no valid token.")
        if not self._same_origin():
            return self._refuse(
                HTTPStatus.FORBIDDEN, "refused: actions come from the board's own page."
            )
        if urlsplit(self.path).path != "/api/action":
            return self._refuse(HTTPStatus.NOT_FOUND, "no such action.")
        length = int(self.headers.get("Content-Length", "0") or 0)
        if (
            not self.headers.get("Content-Type", "").startswith("application/json")
            or not 0 < length <= BODY_LIMIT
        ):
            return self._refuse(HTTPStatus.BAD_REQUEST, "refused: send one JSON object.")
        try:
            params = json.loads(self.rfile.read(length))
        except ValueError:
            params = None
        if not isinstance(params, dict):
            return self._refuse(HTTPStatus.BAD_REQUEST, "refused: send one JSON object.")
        try:
            return self._json(actions.perform(self.board.ctx, params))
        except MaestroError as error:
            return self._json({"error": error.message, "fix": error.fix}, HTTPStatus.BAD_REQUEST)
        except Exception as error:  # noqa: BLE001 - one request's fault, answered, not the board's
            return self._failed(error)

    def _failed(self, error: Exception) -> None:
        """A request Maestro did not foresee failing: one line on the board's terminal and
        a 500 the page shows, instead of a connection dropped with no answer."""
        said = f"{type(error).__name__}: {error}"
        sys.stderr.write(f"board: {self.command} {urlsplit(self.path).path}: {said}\n")
        fix = "try again; if it persists, `maestro status` and `maestro doctor` say more."
        return self._json(
            {"error": f"internal error: {said}", "fix": fix}, HTTPStatus.INTERNAL_SERVER_ERROR
        )

    def _stream(self) -> None:
        """The page's event stream: the state whenever it changes (at once on opening,
        so a page opened mid-run shows the run as it is), transcript notices as spokes
        print, and a comment every KEEPALIVE_S so a dead page is noticed."""
        self._headers(
            HTTPStatus.OK, "text/event-stream; charset=utf-8", None, {"Connection": "close"}
        )
        self.close_connection = True
        feed = self.board.feed
        version, notes = 0, feed.note_count
        try:
            while not feed.stopped:
                version, state, notes, fresh = feed.next(version, notes, KEEPALIVE_S)
                chunk = b"event: state\ndata: " + state + b"\n\n" if state is not None else b""
                chunk += b"".join(note + b"\n\n" for note in fresh)
                self.wfile.write(chunk or b": keep-alive\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return

"""A webhook on loopback that records what it receives, and a fake notify-send on PATH:
what the notification tests and the board's tests use."""

from __future__ import annotations

import http.server
import json
import os
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


class Receiver:
    """A webhook on 127.0.0.1: every POST's JSON body, and the status it answers
    (``status``), or no answer at all (``hang``)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.status = 200
        self.hang = False  # answer nothing (until the receiver closes)
        self.released = threading.Event()
        self.arrived = threading.Condition()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.arrived:
                    receiver.raw.append(data)
                    receiver.bodies.append(json.loads(data))
                    receiver.arrived.notify_all()
                if receiver.hang:
                    receiver.released.wait(60)
                    return
                self.send_response(receiver.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T0SECRET/B0SECRET"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count: int, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.bodies) >= count, timeout_s)
            return list(self.bodies)

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    served = Receiver()
    yield served
    served.close()


FAKE_NOTIFY_SEND = """#!{python} -IS
import json, sys
with open({log!r}, "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
"""


@pytest.fixture
def desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake notify-send first on PATH; returns the file each call's arguments go to
    (one JSON list a line)."""
    folder = tmp_path / "desktop-bin"
    folder.mkdir()
    log = tmp_path / "notify-send.calls"
    exe = folder / "notify-send"
    exe.write_text(FAKE_NOTIFY_SEND.format(python=sys.executable, log=str(log)))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

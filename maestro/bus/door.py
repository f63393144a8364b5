"""The office's door: how a confined spoke reaches the office, as itself and no other.

A session is not an environment variable a spoke can set: for each confined dispatch the
engine opens a door (``Door``), a Unix socket in a private folder that only that
dispatch's sandbox has, bound at ``sandbox.OFFICE`` (under srt, macOS: at its own path,
which ``sandbox.DOOR_VAR`` names, the only Unix socket it may reach). The spoke's store is hidden from it
(it can neither read nor write the mail or the sessions); its ``maestro mail``, ``task``
and ``session`` commands find the socket (``found``) and send their words through it
(``knock``). The engine runs them, outside the sandbox, as the door's session: the
identity is which socket the words came in on, never what the spoke's environment says.
The person at a shell has no door and acts as the person, on the store itself.

One request per connection: a JSON object ``{"words": [...]}`` (the command line after
``maestro``), at most ``MAX_REQUEST`` bytes, answered with ``{"stdout", "stderr",
"exit"}``. Only the office's commands go through (``COMMANDS``), each run as its own
process of the Maestro that dispatched the spoke, at most ``AT_ONCE`` of them at a time
per door; the door's close ends those still running. Its folder is made and removed,
and a killed engine's swept, as the network proxy's are (``socketdir``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from maestro import socketdir
from maestro.errors import MaestroError
from maestro.pids import signal_group
from maestro.process import run_process
from maestro.sandbox import DOOR_VAR, OFFICE

COMMANDS = ("mail", "task", "session")
SOCKET = "socket"
# The most a request may hold, as the engine's desk reads (engine/requests.py), and the
# most of one word, in bytes: the kernel's bound on one argument of a command line.
MAX_REQUEST = 512 * 1024
MAX_WORD = 128 * 1024 - 1
AT_ONCE = 4  # commands of one spoke running at once (a `mail wait` and a send, ...)
READ_TIMEOUT_S = 10.0  # for a request to arrive whole once connected
RUN_TIMEOUT_S = 24 * 3600.0  # a command's own bound (`mail wait --timeout`) comes first


def found(folder: Path | None = None) -> Path | None:
    """This process's door, when its sandbox has one: a socket in a folder of its own
    user's that nobody else may write (a folder of that name someone else made on the
    host is no door), at ``OFFICE`` or where ``DOOR_VAR`` says."""
    folder = folder or Path(os.environ.get(DOOR_VAR) or OFFICE)
    try:
        info = os.stat(folder)
        door = folder / SOCKET
        is_socket = stat.S_ISSOCK(os.stat(door).st_mode)
    except OSError:
        return None
    mine = info.st_uid == os.getuid() and not info.st_mode & 0o022
    return door if mine and is_socket else None


def knock(door: Path, words: Sequence[str]) -> dict[str, Any]:
    """Send ``words`` through ``door`` and return the engine's answer (stdout, stderr,
    exit), or an error of the same shape: refused here as the engine would (``check``),
    or when it cannot be reached."""
    request = json.dumps({"words": list(words)}, ensure_ascii=False).encode()
    refused = check(request)
    if isinstance(refused, dict):
        return refused
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(door))
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
            answer = json.loads(_read(conn, None))
    except (OSError, ValueError) as exc:
        return _refusal(
            f"the office's door did not answer ({exc}).",
            "the dispatch that started you has ended: finish with what you have and report it in your answer.",
        )
    return answer if isinstance(answer, dict) else _refusal("the office's door answered garbage.")


def _read(conn: socket.socket, limit: int | None) -> bytes:
    """Everything until the other side's end of writing (past ``limit``: that many + 1)."""
    chunks, size = [], 0
    while limit is None or size <= limit:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _refusal(message: str, fix: str | None = None) -> dict[str, Any]:
    line = f"maestro: error: {message}" + (f" Fix: {fix}" if fix else "")
    return {"stdout": "", "stderr": line + "\n", "exit": 1}


def check(request: bytes) -> list[str] | dict[str, Any]:
    """The words of a request, or the refusal to send back: over ``MAX_REQUEST``, not
    the request's JSON, or not one of the office's commands."""
    if len(request) > MAX_REQUEST:
        return _refusal(
            f"the request is over {MAX_REQUEST:,} bytes, the most the office reads; it was not read.",
            "send less (a long message: split it).",
        )
    try:
        words = json.loads(request).get("words")
    except (ValueError, AttributeError):
        words = None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return _refusal("the request is not what `maestro` sends through the office's door.")
    if not words or words[0] not in COMMANDS:
        return _refusal(
            "only the office's commands go through its door.",
            f"use `maestro {' | '.join(COMMANDS)} ...`.",
        )
    if any(len(w.encode()) > MAX_WORD or "\0" in w for w in words):
        return _refusal(
            f"a word of the command is over {MAX_WORD:,} bytes or holds a NUL.",
            "send less (a long message: split it).",
        )
    return words


class Door:
    """The engine's side of one dispatch's door: the office's commands it receives run by
    ``program`` (the words that start this Maestro) as the session ``env`` names
    (``MAESTRO_SESSION_ID``, set by the engine), in ``cwd``."""

    def __init__(self, program: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
        self.program, self.env, self.cwd = list(program), dict(env), cwd
        self._listener = socketdir.listen("office", SOCKET)
        self.folder = Path(self._listener.getsockname()).parent
        self._slots = threading.BoundedSemaphore(AT_ONCE)
        self._groups: set[int] = set()
        self._lock = threading.Lock()
        self._closed = False
        # A thread: the engine's own is waiting on the spoke while the spoke asks.
        threading.Thread(target=self._accept, name="office-door", daemon=True).start()

    def __enter__(self) -> Door:  # noqa: PYI034 - a final helper class
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop answering, end the commands still running, take the folder away."""
        with self._lock:
            self._closed = True
            groups = list(self._groups)
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for group in groups:
            signal_group(group, signal.SIGKILL)
        socketdir.remove(self.folder)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            if not self._slots.acquire(blocking=False):
                with conn:
                    busy = f"the office is busy with {AT_ONCE} of your commands."
                    self._send(conn, _refusal(busy, "wait for one to end."))
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(READ_TIMEOUT_S)
                try:
                    words = check(_read(conn, MAX_REQUEST))
                except OSError:
                    return
                conn.settimeout(None)
                self._send(conn, words if isinstance(words, dict) else self._run(words))
        finally:
            self._slots.release()

    def _run(self, words: list[str]) -> dict[str, Any]:
        def started(pid: int) -> None:
            with self._lock:  # its own process group: run_process starts a session
                self._groups.add(pid)
                if self._closed:
                    signal_group(pid, signal.SIGKILL)

        try:
            out = run_process(
                [*self.program, *words],
                cwd=self.cwd,
                env=self.env,
                timeout_s=RUN_TIMEOUT_S,
                on_start=started,
            )
        except MaestroError as exc:
            return _refusal(f"the office could not run the command ({exc}).")
        with self._lock:
            self._groups.discard(out.pid)
        return {"stdout": out.stdout, "stderr": out.stderr, "exit": out.exit_code}

    @staticmethod
    def _send(conn: socket.socket, answer: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # the spoke went away
            conn.sendall(json.dumps(answer, ensure_ascii=False).encode())

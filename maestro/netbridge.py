"""The first process inside a confined process's network namespace: ``python -I -S
netbridge.py SOCKET -- PROGRAM ARGS...``.

The namespace has only its own loopback, so the one way out is the Unix socket Maestro's
proxy listens on (``maestro.netproxy``), bound in at SOCKET. This listens on
``127.0.0.1:<a free port>``, leaves a forwarder process (every connection accepted there
relayed to SOCKET), points the proxy variables at it (``NO_PROXY`` empty: the loopback
the program sees is its own, nothing there needs the proxy bypassed) and becomes PROGRAM.

Small on purpose: it runs before every confined process, so it imports only what starts
fast: the C modules under Python's ``socket`` and ``selectors`` (``_socket``, ``select``)
and ``os``, about 9 ms with the interpreter, against 17 ms with those two modules (their
``enum`` and ``collections``) and 50 ms and more with ``asyncio``; and it is run without
``site``. The forwarder is detached twice over (fork, fork, the middle one exits) so
PROGRAM has no child it did not start: it is the pid namespace's init's, and ends with the
namespace when PROGRAM does. Not socat: one program fewer for the person to install, and a
few milliseconds more.
"""

from __future__ import annotations

import os
import select
import sys
from _socket import AF_INET, AF_UNIX, SOCK_STREAM, socket

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
NO_PROXY_VARS = ("NO_PROXY", "no_proxy")
CHUNK = 65536
HELD = 1 << 20  # a side stops being read while this much waits for its peer


def proxy_env(env: dict[str, str], port: int) -> dict[str, str]:
    url = f"http://127.0.0.1:{port}"
    return {**env, **dict.fromkeys(PROXY_VARS, url), **dict.fromkeys(NO_PROXY_VARS, "")}


class Relay:
    """Every connection accepted on ``listener`` joined to a new one to the Unix socket
    ``door``, bytes copied both ways, one thread, non-blocking: a side is read while its
    peer's queue is short, written while its own is not empty."""

    def __init__(self, listener: socket, door: str) -> None:
        self.listener, self.door = listener, door
        self.poll = select.poll()
        self.by_fd: dict[int, socket] = {}
        self.watched: dict[socket, int] = {}  # the events each is polled for
        self.peer: dict[socket, socket] = {}
        self.queued: dict[socket, bytearray] = {}
        self.ended: set[socket] = set()  # read to its end: closes once flushed
        self.poll.register(listener.fileno(), select.POLLIN)

    def serve(self) -> None:
        while True:
            for fd, events in self.poll.poll():
                if fd == self.listener.fileno():
                    self.accept()
                    continue
                sock = self.by_fd.get(fd)
                if sock is not None and events & (select.POLLOUT | select.POLLERR):
                    self.flush(sock)
                if sock in self.peer and events & (select.POLLIN | select.POLLHUP | select.POLLERR):
                    self.read(sock)

    def accept(self) -> None:
        try:
            # (The C socket's accept: a file descriptor; typeshed does not list it.)
            fd, _ = self.listener._accept()  # type: ignore[attr-defined]
        except OSError:
            return
        client = socket(AF_INET, SOCK_STREAM, fileno=fd)
        upstream = socket(AF_UNIX, SOCK_STREAM)
        try:
            upstream.connect(self.door)
        except OSError:
            client.close()
            upstream.close()
            return
        for one, other in ((client, upstream), (upstream, client)):
            one.setblocking(False)
            self.peer[one], self.queued[one] = other, bytearray()
        self.watch(client)
        self.watch(upstream)

    def read(self, sock: socket) -> None:
        other = self.peer[sock]
        try:
            data = sock.recv(CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.ended.add(sock)
        self.queued[other] += data
        self.flush(other)

    def flush(self, sock: socket) -> None:
        queue = self.queued[sock]
        try:
            sent = sock.send(queue) if queue else 0
        except BlockingIOError:
            sent = 0
        except OSError:
            self.close(sock)
            return
        del queue[:sent]
        if self.peer[sock] in self.ended and not queue:
            self.close(sock)  # its peer is done and all it said has been passed on
            return
        self.watch(sock)
        self.watch(self.peer[sock])

    def watch(self, sock: socket) -> None:
        wanted = (select.POLLOUT if self.queued[sock] else 0) | (
            select.POLLIN
            if sock not in self.ended and len(self.queued[self.peer[sock]]) < HELD
            else 0
        )
        registered = self.watched.get(sock)
        if registered is None and wanted:
            self.poll.register(sock.fileno(), wanted)
            self.by_fd[sock.fileno()] = sock
        elif registered is not None and not wanted:
            self.unwatch(sock)
            return
        elif registered is not None and registered != wanted:
            self.poll.modify(sock.fileno(), wanted)
        if wanted:
            self.watched[sock] = wanted

    def unwatch(self, sock: socket) -> None:
        if self.watched.pop(sock, None) is not None:
            self.poll.unregister(sock.fileno())
            del self.by_fd[sock.fileno()]

    def close(self, sock: socket) -> None:
        for one in (sock, self.peer[sock]):
            self.unwatch(one)
            one.close()
            self.ended.discard(one)
            self.peer.pop(one, None)
            self.queued.pop(one, None)


def detach(listener: socket, door: str) -> None:
    """The forwarder, started in a grandchild whose parent has already ended."""
    middle = os.fork()
    if middle:
        os.waitpid(middle, 0)
        return
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # not the program's output: the runner waits for its end
    try:
        Relay(listener, door).serve()
    finally:
        os._exit(0)


def main(argv: list[str]) -> None:
    door, program = argv[0], argv[2:]
    listener = socket(AF_INET, SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    listener.setblocking(False)
    detach(listener, door)
    port = listener.getsockname()[1]
    listener.close()  # (not inherited by the program either way: Python's are close-on-exec)
    try:
        os.execve(program[0], program, proxy_env(dict(os.environ), port))
    except OSError as exc:
        sys.stderr.write(f"maestro: cannot start {program[0]}: {exc.strerror}\n")
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])

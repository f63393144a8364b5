"""Maestro's side of a confined process's network: an allow-listing HTTP proxy.

A confined process has a network namespace of its own (``maestro.sandbox``,
``--unshare-net``): it reaches no host, no port of the machine's loopback and no abstract
Unix socket of the machine. Its one way out is a *door* of this proxy: a socket listening
on a port of its own loopback (``maestro.netns`` opens it there before the process runs),
which its proxy variables name. What comes through a door is that dispatch's, checked
against that dispatch's list, and what it was refused is told in its result. Nothing of
a door is on disk. Under srt (macOS), which has no network namespace to open a socket
in, a door is a port of the machine's 127.0.0.1 instead, the one its process may reach.

Why this mechanism: one asyncio loop, in one thread of Maestro's process, serves every
door of the process (a run's parallel dispatches, a reviewer's): a connection is a
coroutine, not a thread, and no process is added per dispatch. It starts with the first
door and lives as long as the process. Imported by every command, asyncio would cost each
about 8 ms at start (``python -X importtime``): ``sandbox.network`` imports this module
when a door opens.

It speaks HTTP/1.1 as a proxy: ``CONNECT host:port`` (a tunnel, TLS or not: Gemini CLI's
way, even to a plain-HTTP endpoint) and absolute-form requests (``POST http://host:port/``,
Claude Code's and Codex's way), each request of a keep-alive connection checked on its own
and sent up on a connection of its own (its body and its answer framed by Content-Length
or chunks; ``Upgrade`` followed as a tunnel). A connection waiting for its next request
is closed after ``WAIT_S``, one where no byte passes after ``QUIET_S``.

What a door allows: entries ``host``, ``host:port``, ``*.domain`` (its subdomains), IP
literals (``127.0.0.1:8080``, ``[::1]:8080``), URLs (their host and port); an entry
without a port allows every port. A name on the list whose address is loopback,
link-local or unspecified reaches that address only when the address itself is listed:
an allowed name is not a way to the machine's own servers (one that a DNS answer or
/etc/hosts points at 127.0.0.1). The proxy connects to the address it checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from maestro.netns import Opening


WAIT_S = 60.0  # a keep-alive connection's wait for its next request
QUIET_S = 600.0  # no byte either way (a model's streamed answer pauses, then goes on)
DIAL_S = 30.0
HEAD_LIMIT = 64 * 1024
CHUNK = 65536
CHUNKED, TO_EOF = -1, -2  # a body's framing when not a length
ADVICE = "not on the list; add it to MAESTRO_SANDBOX_HOSTS"
# Said to the proxy, or about this hop only: not passed on.
HOP = frozenset({"proxy-connection", "proxy-authorization", "keep-alive", "expect"})
REASONS = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}
DEFAULT_PORTS = {"http": 80, "https": 443}
T = TypeVar("T")


def _plain(host: str) -> str:
    host = host.strip("[]").rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def _inner(text: str) -> bool:
    """Loopback, link-local or unspecified: the machine's own, or its link's."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_link_local or address.is_unspecified


@dataclass(frozen=True)
class Rule:
    host: str  # plain, or ``*.domain``
    port: int | None  # None: every port

    def matches(self, host: str, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        return host.endswith(self.host[1:]) if self.host.startswith("*.") else host == self.host


def rule(entry: str) -> Rule:
    """An allow-list entry as a rule; ValueError when it names no host (or a bad port)."""
    text = entry.strip().lower()
    split = urlsplit(text if "://" in text else "//" + text)
    port = split.port
    if not split.hostname or split.path not in ("", "/") and "://" not in text:
        raise ValueError(f"{entry!r} is not a host, host:port or URL")
    if port is None and "://" in text:
        port = DEFAULT_PORTS.get(split.scheme)
    return Rule(_plain(split.hostname), port)


def endpoint_rules(url: str) -> list[Rule]:
    """What a configured endpoint (a base URL) allows: its host and port, and for
    ``localhost`` its loopback addresses (it names the machine's own server on purpose)."""
    try:
        named = rule(url)
    except ValueError:
        return []
    if named.host != "localhost":
        return [named]
    return [named, Rule("127.0.0.1", named.port), Rule("::1", named.port)]


class Refused(Exception):
    """Why a target may not be reached."""


@dataclass(frozen=True)
class Allowed:
    rules: tuple[Rule, ...] = ()

    @classmethod
    def of(cls, hosts: Iterable[str], endpoints: Iterable[str] = ()) -> Allowed:
        """The list of ``hosts`` entries (one that is none is left out) and of configured
        ``endpoints``."""
        rules: list[Rule] = []
        for entry in hosts:
            try:
                rules.append(rule(entry))
            except ValueError:
                continue
        for url in endpoints:
            rules += endpoint_rules(url)
        return cls(tuple(dict.fromkeys(rules)))

    def listed(self, host: str, port: int) -> bool:
        return any(r.matches(host, port) for r in self.rules)

    async def reach(self, host: str, port: int) -> list[str]:
        """The addresses ``host`` may be reached at on ``port`` (none: its name did not
        resolve); ``Refused`` when it may not be."""
        host = _plain(host)
        if not self.listed(host, port):
            raise Refused(ADVICE)
        if is_address(host):
            return [host]
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except OSError:
            return []
        found = list(dict.fromkeys(str(info[4][0]) for info in infos))
        kept = [a for a in found if not _inner(a) or self.listed(_plain(a), port)]
        if found and not kept:
            raise Refused(
                f"it resolves to {found[0]}, a loopback or link-local address not on the list"
            )
        return kept


def is_address(host: str) -> bool:
    """Whether ``host`` is an IP address (v4 or v6), not a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass
class Door:
    """One dispatch's way out: the port its proxy variables name, what it may reach, and
    what it was refused (``host:port (why)``, each once). Its listener is served once
    there is one (``Proxy.serve``): at once under srt, as its sandbox starts under bwrap,
    whose ``opening`` brings it."""

    allowed: Allowed
    port: int
    opening: Opening | None = None
    refused: list[str] = field(default_factory=list)
    server: asyncio.AbstractServer | None = None

    def refuse(self, target: str, why: str) -> None:
        line = f"{target} ({why})"
        if line not in self.refused:
            self.refused.append(line)


@dataclass
class Head:
    """A request's or response's head: its first line's words and its header fields."""

    words: list[str]
    fields: list[tuple[str, str]]
    raw: bytes

    @classmethod
    def parse(cls, raw: bytes) -> Head:
        lines = raw.decode("latin-1").split("\r\n")
        words = lines[0].split(" ", 2)
        if len(words) < 2:
            raise ValueError("not an HTTP head")
        fields = []
        for text in lines[1:]:
            if text:
                name, colon, value = text.partition(":")
                if not colon:
                    raise ValueError("not an HTTP header field")
                fields.append((name.strip(), value.strip()))
        return cls(words, fields, raw)

    def get(self, name: str) -> str:
        return ", ".join(v for n, v in self.fields if n.lower() == name).lower()

    def framing(self, otherwise: int) -> int:
        if "chunked" in self.get("transfer-encoding"):
            return CHUNKED
        length = self.get("content-length")
        return int(length.split(",")[0]) if length else otherwise

    def closes(self) -> bool:
        return "close" in self.get("connection")


async def _read(reader: asyncio.StreamReader, limit: int = CHUNK) -> bytes:
    return await asyncio.wait_for(reader.read(limit), QUIET_S)


async def _line(reader: asyncio.StreamReader, end: bytes, wait: float = QUIET_S) -> bytes:
    return await asyncio.wait_for(reader.readuntil(end), wait)


async def copy_body(src: asyncio.StreamReader, dst: asyncio.StreamWriter, framing: int) -> None:
    """A body of ``framing`` (a length, ``CHUNKED`` or ``TO_EOF``) from ``src`` to ``dst``,
    passed on as it comes (a streamed answer's events reach the client at once)."""
    if framing == CHUNKED:
        while True:
            line = await _line(src, b"\r\n")
            dst.write(line)
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while line != b"\r\n":  # the trailer fields, then the empty line
                    line = await _line(src, b"\r\n")
                    dst.write(line)
                await dst.drain()
                return
            await copy_body(src, dst, size + 2)
    left = framing
    while left != 0:
        data = await _read(src, CHUNK if left < 0 else min(left, CHUNK))
        if not data:
            if left == TO_EOF:
                return
            raise asyncio.IncompleteReadError(b"", left)
        dst.write(data)
        await dst.drain()
        left = left if left < 0 else left - len(data)


async def tunnel(
    a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    b: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """Bytes both ways until either side ends or none passes for ``QUIET_S``."""
    loop = asyncio.get_running_loop()
    last = [loop.time()]

    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        while True:
            try:
                data = await _read(src)
            except TimeoutError:
                if loop.time() - last[0] < QUIET_S:
                    continue  # the other way is busy
                return
            if not data:
                return
            last[0] = loop.time()
            dst.write(data)
            await dst.drain()

    pumps = [asyncio.ensure_future(pump(a[0], b[1])), asyncio.ensure_future(pump(b[0], a[1]))]
    done, pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in done:
        task.exception()  # (retrieved: a reset connection is an end like any other)


class Exchange:
    """One client connection through a door: its requests, one after another, each to an
    upstream connection of its own (closed with its answer: a kept one the server has
    meanwhile closed would fail a request the client cannot resend)."""

    def __init__(
        self, door: Door, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.door, self.reader, self.writer = door, reader, writer
        self.upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def serve(self) -> None:
        try:
            while await self.one():
                self.drop()
        except (TimeoutError, OSError, ValueError, EOFError, asyncio.LimitOverrunError):
            pass  # (IncompleteReadError is an EOFError: the client left)
        finally:
            self.writer.close()
            self.drop()

    async def one(self) -> bool:
        """Serve the next request; whether the connection goes on."""
        request = Head.parse(await _line(self.reader, b"\r\n\r\n", WAIT_S))
        if len(request.words) != 3:
            raise ValueError("not an HTTP request")
        method, target, version = request.words
        if method == "CONNECT":
            where = urlsplit("//" + target)
            if not where.hostname or where.port is None:
                return await self.answer(400, f"CONNECT needs a host:port, not {target!r}")
            if await self.dial(where.hostname, where.port):
                assert self.upstream is not None
                self.writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await tunnel((self.reader, self.writer), self.upstream)
            return False
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            return await self.answer(
                400, "Maestro's proxy takes CONNECT and absolute http:// requests only"
            )
        if not await self.dial(url.hostname, url.port or 80):
            return False
        assert self.upstream is not None
        up_reader, up_writer = self.upstream
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        fields = "".join(f"{n}: {v}\r\n" for n, v in request.fields if n.lower() not in HOP)
        up_writer.write(f"{method} {path} {version}\r\n{fields}\r\n".encode("latin-1"))
        if "100-continue" in request.get("expect"):
            self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await copy_body(self.reader, up_writer, request.framing(0))
        while True:
            response = Head.parse(await _line(up_reader, b"\r\n\r\n"))
            self.writer.write(response.raw)
            status = int(response.words[1])
            if status == 101:
                await tunnel((self.reader, self.writer), self.upstream)
                return False
            if status >= 200:
                break
        bodiless = method == "HEAD" or status in (204, 304)
        framing = 0 if bodiless else response.framing(TO_EOF)
        await copy_body(up_reader, self.writer, framing)
        return framing != TO_EOF and not request.closes() and not response.closes()

    async def dial(self, host: str, port: int) -> bool:
        """Connected to ``host:port`` (``upstream``) when the door allows it; else
        answered, False."""
        target = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
        try:
            addresses = await self.door.allowed.reach(host, port)
        except Refused as why:
            self.door.refuse(target, str(why))
            return await self.answer(403, f"Maestro's sandbox refused {target}: {why}")
        failure = f"{host} did not resolve"
        for address in addresses:
            try:
                self.upstream = await asyncio.wait_for(
                    asyncio.open_connection(address, port, limit=HEAD_LIMIT), DIAL_S
                )
            except (TimeoutError, OSError) as exc:
                # "Connection refused", as the client would have said it, not asyncio's
                # "Connect call failed"
                failure = os.strerror(exc.errno) if exc.errno else "no answer"
                continue
            return True
        return await self.answer(502, f"Maestro's proxy could not reach {target}: {failure}")

    def drop(self) -> None:
        if self.upstream is not None:
            self.upstream[1].close()
        self.upstream = None

    async def answer(self, status: int, text: str) -> bool:
        body = f"{text}\n".encode()
        self.writer.write(
            f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await self.writer.drain()
        return False


async def _shut(server: asyncio.AbstractServer) -> None:
    server.close()
    await server.wait_closed()


class Proxy:
    """The loop serving every door of this process, in a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="maestro-proxy", daemon=True).start()

    def call(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=DIAL_S)

    def serve(self, door: Door, listener: socket.socket) -> None:
        """Serve ``door`` on ``listener`` (closed with the door, or at once when it cannot
        be served)."""

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await Exchange(door, reader, writer).serve()

        try:
            door.server = self.call(asyncio.start_server(serve, sock=listener, limit=HEAD_LIMIT))
        except BaseException:
            listener.close()
            raise

    def close(self, door: Door) -> None:
        server = door.server
        if server is not None:
            self.call(_shut(server))
        if door.opening is not None:
            door.opening.close()


_lock = threading.Lock()
_proxies: list[Proxy] = []


def proxy() -> Proxy:
    """This process's proxy, started with its first door."""
    with _lock:
        if not _proxies:
            _proxies.append(Proxy())
        return _proxies[0]

"""Maestro's allow-listing proxy (maestro/netproxy.py), spoken to through a door as a
confined process does: every request of a connection checked, bodies and
streamed answers passed on whole, a name is no way to the machine's loopback, an idle
connection closed."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from maestro import netproxy, sandbox
from maestro.clis.codex import CodexSpoke
from maestro.config import load_settings
from maestro.errors import ConfigError
from tests.netkit import serving


@pytest.fixture
def port() -> Iterator[int]:
    with serving() as port:
        yield port


def door(*hosts: str, endpoints: tuple[str, ...] = ()) -> netproxy.Door:
    """A door served on a port of the machine's loopback (as under srt)."""
    listener = socket.create_server(("127.0.0.1", 0))
    opened = netproxy.Door(netproxy.Allowed.of(hosts, endpoints), listener.getsockname()[1])
    netproxy.proxy().serve(opened, listener)
    return opened


def client(opened: netproxy.Door) -> socket.socket:
    return socket.create_connection(("127.0.0.1", opened.port), timeout=10)


def answer(sock: socket.socket) -> bytes:
    """One response, read to its end (Content-Length or the last chunk)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        assert more, f"the proxy closed the connection after {data!r}"
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    if b"chunked" in head.lower():
        while not body.endswith(b"0\r\n\r\n"):
            body += sock.recv(65536)
    else:
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        while len(body) < length:
            body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_every_request_of_a_kept_alive_connection_is_checked(port):
    opened = door(f"127.0.0.1:{port}")
    try:
        sock = client(opened)
        ask = "GET http://{}/{} HTTP/1.1\r\nHost: {}\r\n\r\n"
        sock.sendall(ask.format(f"127.0.0.1:{port}", "one", "x").encode())
        first = answer(sock)
        sock.sendall(ask.format(f"127.0.0.1:{port}", "two", "x").encode())
        second = answer(sock)
        sock.sendall(ask.format("example.com", "three", "example.com").encode())
        third = answer(sock)
    finally:
        netproxy.proxy().close(opened)
    assert first.startswith(b"HTTP/1.1 200") and first.endswith(b"served /one")
    assert second.startswith(b"HTTP/1.1 200") and second.endswith(b"served /two")
    assert third.startswith(b"HTTP/1.1 403")
    assert b"refused example.com:80: not on the list; add it to MAESTRO_SANDBOX_HOSTS" in third
    assert opened.refused == ["example.com:80 (not on the list; add it to MAESTRO_SANDBOX_HOSTS)"]


def test_a_server_that_closes_after_each_answer_still_serves_the_next_request():
    """A kept-alive client, a server that hangs up after every answer without saying so:
    each request goes up on a connection of its own."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            with conn:
                while b"\r\n\r\n" not in conn.recv(65536):
                    pass
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nanswer")

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    opened = door(f"127.0.0.1:{port}")
    try:
        sock = client(opened)
        got = []
        for _ in range(2):
            sock.sendall(f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            got.append(answer(sock))
        server.join(timeout=10)
    finally:
        netproxy.proxy().close(opened)
        listener.close()
    assert [g.endswith(b"answer") for g in got] == [True, True]


def test_a_listed_server_that_is_not_there_is_a_502_that_says_why():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    opened = door(f"127.0.0.1:{dead}")
    try:
        sock = client(opened)
        sock.sendall(f"GET http://127.0.0.1:{dead}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = answer(sock)
    finally:
        netproxy.proxy().close(opened)
    assert got.startswith(b"HTTP/1.1 502")
    assert got.endswith(f"could not reach 127.0.0.1:{dead}: Connection refused\n".encode())
    assert opened.refused == []  # listed: not a refusal of Maestro's


def test_a_body_goes_up_and_a_streamed_answer_comes_back_whole(port):
    opened = door(f"127.0.0.1:{port}")
    try:
        sock = client(opened)
        body = b'{"model": "m"}'
        sock.sendall(
            f"POST http://127.0.0.1:{port}/v1/messages HTTP/1.1\r\nHost: x\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        got = answer(sock)
    finally:
        netproxy.proxy().close(opened)
    assert got.startswith(b"HTTP/1.1 200")
    assert got.endswith(b'6\r\ndata: \r\ne\r\n{"model": "m"}\r\n2\r\n\n\n\r\n0\r\n\r\n')


def test_a_listed_name_is_no_way_to_the_machines_loopback(port):
    named = door(f"localhost:{port}")
    also = door(f"localhost:{port}", f"127.0.0.1:{port}")
    configured = door(endpoints=(f"http://localhost:{port}/v1",))
    said = []
    try:
        for opened in (named, also, configured):
            sock = client(opened)
            sock.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
            head = sock.recv(65536)
            if head.startswith(b"HTTP/1.1 200"):
                sock.sendall(b"GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n")
                head = answer(sock)
            said.append(head)
    finally:
        for opened in (named, also, configured):
            netproxy.proxy().close(opened)
    assert said[0].startswith(b"HTTP/1.1 403")
    (refused,) = named.refused  # (127.0.0.1 or ::1, as the machine lists them)
    assert refused.startswith(f"localhost:{port} (it resolves to ")
    assert refused.endswith(", a loopback or link-local address not on the list)")
    assert said[1].endswith(b"served /x") and said[2].endswith(b"served /x")


def test_an_idle_connection_is_closed(port, monkeypatch):
    monkeypatch.setattr(netproxy, "WAIT_S", 0.3)
    opened = door(f"127.0.0.1:{port}")
    try:
        sock = client(opened)
        start = time.monotonic()
        assert sock.recv(100) == b""  # closed, without a word
        waited = time.monotonic() - start
    finally:
        netproxy.proxy().close(opened)
    assert waited < 5


def test_the_list_takes_hosts_ports_domains_and_addresses():
    allowed = netproxy.Allowed.of(
        ["pypi.org", "files.example.com:443", "*.npmjs.org", "[::1]:8080", "10.0.0.7"],
        ["https://gateway.example.net/v1", "not a url"],
    )
    assert allowed.listed("pypi.org", 8443)
    assert allowed.listed("files.example.com", 443) and not allowed.listed("files.example.com", 80)
    assert allowed.listed("registry.npmjs.org", 443) and not allowed.listed("npmjs.org.evil", 443)
    assert allowed.listed("::1", 8080) and allowed.listed("10.0.0.7", 22)
    assert allowed.listed("gateway.example.net", 443)
    assert not allowed.listed("gateway.example.net", 80)


def test_a_setting_that_names_no_host_is_refused_in_one_line(project, temp_home, monkeypatch):
    monkeypatch.setenv("MAESTRO_SANDBOX_HOSTS", "pypi.org,https://:443")
    with pytest.raises(ConfigError) as caught:
        sandbox.rules(load_settings(project), os.environ)
    assert "MAESTRO_SANDBOX_HOSTS holds 'https://:443'" in str(caught.value)


def test_codex_reaches_the_endpoint_its_config_chooses(temp_home):
    home = temp_home / ".codex"
    home.mkdir()
    (home / "config.toml").write_text(
        'model_provider = "fake"\n[model_providers.fake]\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    env = {"HOME": str(temp_home), "CODEX_HOME": str(home), "OPENAI_BASE_URL": "http://gw:1"}
    assert CodexSpoke().endpoints(env) == ["http://gw:1", "http://127.0.0.1:9/v1"]

"""The network of a confined process (maestro/sandbox.py, maestro/netproxy.py,
maestro/netbridge.py), with the real bwrap and offline: it reaches nothing of the machine
but its door to Maestro's proxy, which lets through what its list names and says what it
refused."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from maestro import netproxy, sandbox
from maestro.process import run_process
from tests.netkit import serving


@pytest.fixture
def server() -> Iterator[int]:
    """A plain-HTTP server on the machine's loopback: its port."""
    with serving() as port:
        yield port


@pytest.fixture
def rules() -> sandbox.Rules:
    probed, why = sandbox.probe(os.environ)
    assert probed is not None, why
    return probed


def python(code: str, rules: sandbox.Rules, door: Path | None, cwd: Path) -> subprocess.Popen[str]:
    """``code`` run by Python, confined, reaching out through ``door`` (None: no way out)."""
    policy = sandbox.Policy(cwd=cwd, env=dict(os.environ), proxy=door)
    argv, env = sandbox.wrap([sys.executable, "-c", textwrap.dedent(code)], policy, rules)
    return subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, text=True)


def said(code: str, rules: sandbox.Rules, door: Path | None, cwd: Path) -> str:
    out, _ = python(code, rules, door, cwd).communicate(timeout=60)
    return out


TRY = """
    import socket
    def attempt(name, family, address, kind=socket.SOCK_STREAM):
        s = socket.socket(family, kind)
        s.settimeout(3)
        try:
            s.connect(address)
            print(name, "REACHED")
        except OSError as exc:
            print(name, "refused:", exc)
"""


def test_a_confined_process_reaches_nothing_of_the_machine(rules, server, tmp_path):
    abstract = f"\0maestro-test-{uuid.uuid4().hex}"
    # (A path socket is a file: one in a folder the process sees is reached whatever its
    # network; the machine's /tmp, where most are, it does not see.)
    path = Path(tempfile.mkdtemp(prefix="maestro-test-", dir="/tmp")) / "s"
    listeners = []
    for family, address in ((socket.AF_UNIX, abstract), (socket.AF_UNIX, str(path))):
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.bind(address)
        listener.listen()
        listeners.append(listener)
    resolver = next(
        (
            line.split()[1]
            for line in Path("/etc/resolv.conf").read_text().splitlines()
            if line.startswith("nameserver")
        ),
        "127.0.0.53",
    )
    code = (
        TRY
        + f"""
    attempt("loopback", socket.AF_INET, ("127.0.0.1", {server}))
    attempt("raw-ip", socket.AF_INET, ("192.0.2.1", 80))
    attempt("resolver", socket.AF_INET, ({resolver!r}, 53))
    attempt("abstract", socket.AF_UNIX, {abstract!r})
    attempt("path", socket.AF_UNIX, {str(path)!r})
    try:
        print("dns", socket.getaddrinfo("example.com", 80))
    except OSError as exc:
        print("dns refused:", exc)
    """
    )
    out = said(code, rules, None, tmp_path)
    for listener in listeners:
        listener.close()
    shutil.rmtree(path.parent)
    assert "REACHED" not in out, out
    for name in ("loopback", "raw-ip", "resolver", "abstract", "path", "dns"):
        assert f"{name} refused:" in out, out
    # The same attempts from the machine itself reach what is there: the refusals are
    # the sandbox's.
    with socket.create_connection(("127.0.0.1", server), timeout=3):
        pass


def test_two_confined_processes_serve_the_same_port_at_once(rules, tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]  # held by the machine all along, too
    code = f"""
    import socket, time
    s = socket.socket()
    s.bind(("127.0.0.1", {port}))
    s.listen()
    print("bound", flush=True)
    time.sleep(2)
    """
    both = [python(code, rules, None, tmp_path) for _ in range(2)]
    outs = [p.communicate(timeout=60)[0] for p in both]
    taken.close()
    assert outs == ["bound\n", "bound\n"], outs
    assert [p.returncode for p in both] == [0, 0]


CALLS = """
    import http.client, os, urllib.request, urllib.error
    def get(url):
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return answer.read().decode()
        except urllib.error.HTTPError as exc:
            return str(exc.code) + " " + exc.read().decode().strip()
    print("plain:", get("http://127.0.0.1:{port}/one"))
    proxy = os.environ["HTTP_PROXY"].rsplit(":", 1)
    tunnel = http.client.HTTPConnection("127.0.0.1", int(proxy[1]), timeout=10)
    tunnel.set_tunnel("127.0.0.1", {port})
    tunnel.request("GET", "/two")
    print("connect:", tunnel.getresponse().read().decode())
    print("other:", get("http://127.0.0.1:{other}/three"))
    print("named:", get("http://example.com/four"))
"""


def test_through_its_door_it_reaches_what_is_listed_and_no_more(rules, server, tmp_path):
    listed = replace_hosts(rules, (f"127.0.0.1:{server}",))
    with serving() as other, sandbox.network(listed) as door:
        assert door is not None
        calls = CALLS.replace("{port}", str(server)).replace("{other}", str(other))
        out = said(calls, listed, door.path, tmp_path)
    assert "plain: served /one" in out, out
    assert "connect: served /two" in out, out
    assert f"other: 403 Maestro's sandbox refused 127.0.0.1:{other}" in out
    assert "named: 403 Maestro's sandbox refused example.com:80" in out
    assert sandbox.refusals(door) == (
        f"network: refused 127.0.0.1:{other} ({netproxy.ADVICE}), example.com:80 ({netproxy.ADVICE})"
    )
    assert not door.path.parent.exists()  # the door is gone with its dispatch


def replace_hosts(rules: sandbox.Rules, hosts: tuple[str, ...]) -> sandbox.Rules:
    return sandbox.Rules(rules.program, rules.hide, rules.write, hosts)


def test_its_bridge_costs_it_no_output_and_keeps_its_exit_code(rules, tmp_path):
    with sandbox.network(rules) as door:
        assert door is not None
        policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ), proxy=door.path)
        argv, env = sandbox.wrap(["/bin/sh", "-c", "echo out; echo err >&2; exit 7"], policy, rules)
        out = run_process(argv, cwd=tmp_path, env=env, timeout_s=30)
        missing = run_process(
            sandbox.wrap(["/nonexistent/program"], policy, rules)[0],
            cwd=tmp_path,
            env=env,
            timeout_s=30,
        )
    assert (out.exit_code, out.stdout, out.stderr) == (7, "out\n", "err\n")
    assert missing.exit_code == 127 and "cannot start /nonexistent/program" in missing.stderr


def test_it_sees_no_other_dispatchs_door(rules, server, tmp_path, monkeypatch):
    """Each door lets through its own dispatch's list: another's, which may list more,
    is not in its sight, wherever the temporary folder is."""
    monkeypatch.setattr(tempfile, "tempdir", "/var/tmp")
    wide = replace_hosts(rules, (f"127.0.0.1:{server}",))
    with sandbox.network(wide) as other, sandbox.network(rules) as own:
        assert other is not None and own is not None
        code = (
            TRY
            + f"""
    attempt("other-door", socket.AF_UNIX, {str(other.path)!r})
    attempt("own-door", socket.AF_UNIX, {str(own.path)!r})
    """
        )
        out = said(code, rules, own.path, tmp_path)
    assert "other-door refused:" in out and "own-door REACHED" in out, out


def test_its_bridge_passes_a_large_exchange_whole_both_ways(rules, server, tmp_path):
    """8 MiB up and the same back (its bridge holds at most 1 MiB for a slow side, so
    both directions wait on each other): every byte arrives, in order."""
    listed = replace_hosts(rules, (f"127.0.0.1:{server}",))
    code = f"""
    import hashlib, os, urllib.request
    body = os.urandom(8 << 20)
    answer = urllib.request.urlopen(
        urllib.request.Request("http://127.0.0.1:{server}/", data=body), timeout=60
    ).read()
    print(answer == b"data: " + body + b"\\n\\n", len(answer))
    """
    with sandbox.network(listed) as door:
        assert door is not None
        out = said(code, listed, door.path, tmp_path)
    assert out.split() == ["True", str((8 << 20) + 8)], out

"""The network of a confined process (maestro/sandbox.py, maestro/netproxy.py,
maestro/netns.py), with the real bwrap and offline: it reaches nothing of the machine
but its door to Maestro's proxy, which lets through what its list names and says what it
refused."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from maestro import netns, netproxy, sandbox
from maestro.errors import SpokeError
from maestro.process import run_process
from tests.helpers import new_pid_namespace
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


def python(
    code: str, rules: sandbox.Rules, door: netproxy.Door | None, cwd: Path
) -> subprocess.Popen[str]:
    """``code`` run by Python, confined, reaching out through ``door`` (None: no way out)."""
    policy = sandbox.placed(sandbox.Policy(cwd=cwd, env=dict(os.environ)), door, None)
    argv, env = sandbox.wrap([sys.executable, "-c", textwrap.dedent(code)], policy, rules)
    start = sandbox.starting(door)
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=start.get("stdin", subprocess.DEVNULL),
        stdout=subprocess.PIPE,
        text=True,
        pass_fds=start.get("pass_fds", ()),
    )
    if start["on_start"] is not None:
        start["on_start"](proc.pid)
    return proc


def said(code: str, rules: sandbox.Rules, door: netproxy.Door | None, cwd: Path) -> str:
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
        out = said(calls, listed, door, tmp_path)
    assert "plain: served /one" in out, out
    assert "connect: served /two" in out, out
    assert f"other: 403 Maestro's sandbox refused 127.0.0.1:{other}" in out
    assert "named: 403 Maestro's sandbox refused example.com:80" in out
    assert sandbox.refusals(door) == (
        f"network: refused 127.0.0.1:{other} ({netproxy.ADVICE}), example.com:80 ({netproxy.ADVICE})"
    )
    assert door.server is not None and not door.server.is_serving()  # gone with its dispatch


def replace_hosts(rules: sandbox.Rules, hosts: tuple[str, ...]) -> sandbox.Rules:
    return sandbox.Rules(rules.program, rules.hide, rules.write, hosts)


def test_its_way_out_is_open_before_it_runs_and_costs_it_no_output_nor_its_exit_code(
    rules, tmp_path
):
    """Its first act, a connection to its proxy port, is answered: bwrap held it back
    until the door listened in its namespace."""
    first = (
        "import os, socket; socket.create_connection(('127.0.0.1', "
        "int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1])), timeout=5).close(); "
        "print('out'); os.write(2, b'err\\n'); raise SystemExit(7)"
    )
    with sandbox.network(rules) as door:
        policy = sandbox.placed(sandbox.Policy(cwd=tmp_path, env=dict(os.environ)), door, None)
        argv, env = sandbox.wrap([sys.executable, "-c", first], policy, rules)
        out = run_process(argv, cwd=tmp_path, env=env, timeout_s=30, **sandbox.starting(door))
    assert (out.exit_code, out.stdout, out.stderr) == (7, "out\n", "err\n")


def test_a_bwrap_that_ends_before_it_starts_the_program_says_why(rules, tmp_path):
    """bwrap refuses a folder removed since its command was written: its own words, at
    once (nothing waits for a sandbox that never came)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    with sandbox.network(rules) as door:
        policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ), writable=[gone])
        argv, env = sandbox.wrap(["/bin/true"], sandbox.placed(policy, door, None), rules)
        gone.rmdir()
        out = run_process(argv, cwd=tmp_path, env=env, timeout_s=30, **sandbox.starting(door))
    assert out.exit_code == 1 and "bwrap: Can't find source path" in out.stderr, out


def test_a_way_out_that_cannot_be_opened_stops_the_sandbox_before_its_program_runs(
    rules, tmp_path, monkeypatch
):
    def refused(net: int) -> socket.socket:
        raise PermissionError(1, "Operation not permitted (setns net)")

    monkeypatch.setattr(netns, "_listen_in", refused)
    ran = tmp_path / "ran"
    with sandbox.network(rules) as door:
        policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ), writable=[tmp_path])
        argv, env = sandbox.wrap(
            ["/bin/touch", str(ran)], sandbox.placed(policy, door, None), rules
        )
        with pytest.raises(SpokeError) as caught:
            run_process(argv, cwd=tmp_path, env=env, timeout_s=30, **sandbox.starting(door))
    assert "could not open the confined process's way out" in caught.value.message
    assert "Operation not permitted (setns net)" in caught.value.message
    assert "maestro doctor" in caught.value.fix
    time.sleep(1)  # (a sandbox left waiting would run it once its door closed)
    assert not ran.exists()


def test_a_sandbox_that_never_says_it_started_is_stopped_in_one_line(rules, tmp_path, monkeypatch):
    monkeypatch.setattr(netns, "SAID_S", 0.5)
    silent = tmp_path / "bwrap"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    stuck = dataclasses.replace(rules, program=str(silent))
    with sandbox.network(stuck) as door:
        policy = sandbox.placed(sandbox.Policy(cwd=tmp_path, env=dict(os.environ)), door, None)
        argv, env = sandbox.wrap(["/bin/true"], policy, stuck)
        began = time.monotonic()
        with pytest.raises(SpokeError) as caught:
            run_process(argv, cwd=tmp_path, env=env, timeout_s=30, **sandbox.starting(door))
    assert "bwrap said nothing of its sandbox in 0.5s" in caught.value.message
    assert time.monotonic() - began < 10  # stopped, not waited for


def test_it_reaches_its_own_door_only(rules, server, tmp_path):
    """Two dispatches at once, one whose list names the server: each process's port is
    its own dispatch's door (the same number, in namespaces of their own), and the other
    door's list is no way there."""
    wide = replace_hosts(rules, (f"127.0.0.1:{server}",))
    code = f"""
    import urllib.request, urllib.error
    try:
        print(urllib.request.urlopen("http://127.0.0.1:{server}/x", timeout=10).read().decode())
    except urllib.error.HTTPError as exc:
        print(exc.code)
    """
    with sandbox.network(wide) as other, sandbox.network(rules) as own:
        both = [python(code, wide, other, tmp_path), python(code, rules, own, tmp_path)]
        outs = [p.communicate(timeout=60)[0].strip() for p in both]
    assert outs == ["served /x", "403"], outs


def test_its_door_passes_a_large_exchange_whole_both_ways(rules, server, tmp_path):
    """8 MiB up and the same back: every byte arrives, in order."""
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
        out = said(code, listed, door, tmp_path)
    assert out.split() == ["True", str((8 << 20) + 8)], out


# A process started in a pid namespace of its own, the machine's /proc still mounted (as a
# command in Codex's sandbox is): it opens a door and runs a confined Python through it.
IN_PID_NAMESPACE = """
import os, sys
from pathlib import Path
from maestro import sandbox
from maestro.process import run_process
rules, why = sandbox.probe(os.environ)
assert rules is not None, why
listed = sandbox.Rules(rules.program, hosts=("127.0.0.1:" + sys.argv[1],))
with sandbox.network(listed) as door:
    policy = sandbox.placed(sandbox.Policy(cwd=Path.cwd(), env=dict(os.environ)), door, None)
    code = "import urllib.request as u; print(u.urlopen('http://127.0.0.1:%s/x').read().decode())"
    argv, env = sandbox.wrap([sys.executable, "-c", code % sys.argv[1]], policy, listed)
    out = run_process(argv, cwd=Path.cwd(), env=env, timeout_s=30, **sandbox.starting(door))
print(os.getpid(), os.readlink("/proc/self"), out.exit_code, out.stdout.strip(), out.stderr[-300:])
"""


def test_its_way_out_opens_where_proc_numbers_another_pid_namespace(rules, server, tmp_path):
    prefix = new_pid_namespace()
    out = subprocess.run(
        [*prefix, sys.executable, "-c", IN_PID_NAMESPACE, str(server)],
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    pid, proc_self, exit_code, answer = (out.stdout.split() + ["", "", "", ""])[:4]
    assert pid != proc_self, out.stdout  # /proc numbers this process otherwise
    assert (exit_code, answer) == ("0", "served"), out.stdout + out.stderr


@pytest.mark.parametrize("said", [b"", b"stop\n", b"go"], ids=["end", "other", "no-newline"])
def test_the_gate_starts_its_program_on_go_alone(tmp_path, said):
    """What the program waits at in its sandbox: the pipe's end (an engine gone before
    its way out opened) or any other word leaves it unstarted."""
    ran = tmp_path / "ran"
    gated = netns.Opening.gated(["/bin/sh", "-c", 'touch "$0"', str(ran)])
    done = subprocess.run(gated, input=said, capture_output=True, check=False)
    assert done.returncode == 125 and b"its way out was not opened" in done.stderr
    assert not ran.exists()


def test_on_go_the_gate_becomes_its_program_with_nothing_to_read(tmp_path):
    gated = netns.Opening.gated(["/bin/sh", "-c", 'echo "$$"; cat'])
    gate = subprocess.Popen(gated, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out, err = gate.communicate(b"go\nmore\n")
    # The same process (exec), and what came after `go` never reaches it.
    assert (gate.returncode, out, err) == (0, f"{gate.pid}\n".encode(), None)


# An engine that dies while its confined process waits at its gate for its way out: its
# way out never opens (the joining hangs), and the engine is killed outright meanwhile.
# The sandbox ends with it, and the program never starts (the gate's own part is the
# tests above). It is killed once the gate is there (bwrap's pid 1 has started it): an
# engine killed in the microseconds between bwrap's two writes, its info and its
# child's leave to go on, leaves that child waiting forever (docs/sandbox.md, *What is
# not confined yet*), which a loaded machine widened here to a failure now and then.
DYING_ENGINE = """
import os, sys, time
from pathlib import Path
from maestro import netns, sandbox
from maestro.process import run_process

def hangs(pid):
    children = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + 30
    while not children.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.01)
    print("held", flush=True)
    time.sleep(60)

rules, why = sandbox.probe(os.environ)
assert rules is not None, why
netns._namespace = hangs
with sandbox.network(rules) as door:
    policy = sandbox.Policy(cwd=Path.cwd(), env=dict(os.environ), writable=[Path.cwd()])
    policy = sandbox.placed(policy, door, None)
    argv, env = sandbox.wrap(["/bin/touch", sys.argv[1]], policy, rules)
    run_process(argv, cwd=Path.cwd(), env=env, timeout_s=60, **sandbox.starting(door))
"""


def test_an_engine_killed_while_its_sandbox_waits_never_lets_the_program_start(rules, tmp_path):
    ran = tmp_path / "ran"
    engine = subprocess.Popen(
        [sys.executable, "-c", DYING_ENGINE, str(ran)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert engine.stdout is not None
    assert engine.stdout.readline() == "held\n"
    engine.kill()
    engine.wait()
    time.sleep(1)  # (a sandbox let go by the engine's end would have run it by now)
    assert not ran.exists()
    left = subprocess.run(["pgrep", "-f", str(ran)], capture_output=True, text=True, check=False)
    assert left.stdout == "", left.stdout  # nothing of that sandbox is left waiting


def test_a_setuid_bwrap_is_named_when_no_way_out_opens(tmp_path, monkeypatch):
    def refused(net: int) -> socket.socket:
        raise PermissionError(1, "Operation not permitted (setns user)")

    monkeypatch.setattr(netns, "_listen_in", refused)
    found = shutil.which("bwrap")
    assert found is not None
    for setuid in (False, True):
        copy = tmp_path / ("setuid" if setuid else "plain") / "bwrap"
        copy.parent.mkdir()
        shutil.copy(found, copy)
        copy.chmod(0o4755 if setuid else 0o755)
        probed, why = sandbox.probe({"PATH": f"{copy.parent}:{os.defpath}"})
        assert probed is None
        assert "cannot open a way out in bwrap's network namespace" in why, why
        assert ("installed setuid" in why) is setuid, why

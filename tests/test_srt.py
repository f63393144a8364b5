"""Confinement by Anthropic's sandbox runtime (srt), Maestro's sandbox on macOS
(maestro/sandbox.py, ``srt_settings``), tried with the real srt on Linux, where srt
confines with bubblewrap: the policy a bwrap-confined process has keeps the same things
out of its reach, its way out is Maestro's proxy, and srt's own pitfalls (its exit 0 on
SIGTERM, its placeholder files) are not the process's result."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from maestro import netproxy, sandbox, socketdir
from maestro.config import load_settings
from maestro.install.doctor import sandbox_check
from maestro.process import ProcessOutcome, run_process
from tests.engine.runkit import left_running
from tests.netkit import serving
from tests.test_netsandbox import CALLS, TRY

pytestmark = pytest.mark.srt


@pytest.fixture
def server() -> Iterator[int]:
    with serving() as port:
        yield port


def confined(
    argv: list[str], policy: sandbox.Policy, rules: sandbox.Rules, door: netproxy.Door | None = None
) -> ProcessOutcome:
    """``argv`` run confined by ``rules`` as ``policy`` says, as a dispatch runs it."""
    with sandbox.bounded(rules) as bound:
        wrapped, env = sandbox.wrap(argv, sandbox.placed(policy, door, bound), rules)
        return run_process(wrapped, cwd=policy.cwd, env=env, timeout_s=60)


def shell(script: str, policy: sandbox.Policy, rules: sandbox.Rules) -> str:
    out = confined(["/bin/sh", "-c", script], policy, rules)
    return out.stdout + out.stderr


def python(code: str, policy: sandbox.Policy, rules: sandbox.Rules, door: netproxy.Door) -> str:
    out = confined([sys.executable, "-c", textwrap.dedent(code)], policy, rules, door)
    return out.stdout + out.stderr


def test_a_hostile_script_writes_only_its_folders_and_reads_no_secret(temp_home, tmp_path, srt):
    rules = replace(srt, hide=sandbox.expand(sandbox.SECRETS, os.environ))
    work, project, other = tmp_path / "work", tmp_path / "project", temp_home / "other-repo"
    for folder in (work, project, other, temp_home / ".ssh"):
        folder.mkdir()
    (temp_home / ".bashrc").write_text("# mine\n")
    (temp_home / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    (project / "main.py").write_text("print('mine')\n")
    # A CLI's state folder, writable, its config read-only in it; a read-only folder in
    # the work holding a deeper writable one (the state folder in the person's tree, a
    # private git dir in it): srt's denials win at any depth, bwrap's deeper binds.
    state = temp_home / ".claude"
    config = sandbox.pre_create(state, ["settings.json", "hooks/"])
    kept, scratch = work / "kept", work / "kept" / "runs" / "scratch"
    scratch.mkdir(parents=True)
    (kept / "plan.yaml").write_text("mine\n")
    (kept / "runs" / "log").write_text("mine\n")
    script = f"""
        echo pwned >> {temp_home}/.bashrc && echo WROTE-BASHRC
        echo pwned > {other}/x && echo WROTE-OTHER
        echo pwned >> {project}/main.py && echo WROTE-PROJECT
        echo pwned > /tmp/maestro-srt-escape && echo WROTE-HOST-TMP
        cat {temp_home}/.ssh/id_rsa
        echo '{{"hooks": 1}}' > {state}/settings.json && echo WROTE-SETTINGS
        echo x > {state}/hooks/run.sh && echo WROTE-HOOK
        echo x > {state}/session.json && echo WROTE-STATE
        echo x > {kept}/plan.yaml && echo WROTE-KEPT
        echo x > {kept}/runs/log && echo WROTE-KEPT-DEEPER
        echo x > {scratch}/HEAD && echo WROTE-SCRATCH
        echo ok > done && echo WROTE-WORK
        echo x > "$TMPDIR/t" && echo "WROTE-TMP $TMPDIR"
        pwd
    """
    policy = sandbox.Policy(
        cwd=work,
        env=dict(os.environ),
        writable=[work, state, scratch],
        read_only=[*config, kept],
    )
    said = shell(script, policy, rules)
    for done in ("WROTE-WORK", "WROTE-STATE", "WROTE-SCRATCH", "WROTE-TMP"):
        assert done in said, said
    for escape in ("BASHRC", "OTHER", "PROJECT", "HOST-TMP", "SETTINGS", "HOOK", "KEPT"):
        assert f"WROTE-{escape}" not in said, said
    assert "SECRET KEY" not in said
    assert f"\n{work}\n" in f"\n{said}"  # it runs where it was asked to
    tmp = said.split("WROTE-TMP ")[1].split()[0]
    assert "maestro-srt-" in tmp
    assert not Path(tmp).exists()  # its own temporary folder, gone with it
    assert (work / "done").read_text() == "ok\n" and (state / "session.json").exists()
    assert (temp_home / ".bashrc").read_text() == "# mine\n"
    assert (project / "main.py").read_text() == "print('mine')\n"
    assert (state / "settings.json").read_text() == "{}\n"
    assert (kept / "plan.yaml").read_text() == "mine\n" and (
        kept / "runs" / "log"
    ).read_text() == "mine\n"
    assert not (other / "x").exists() and not Path("/tmp/maestro-srt-escape").exists()


def test_a_process_reads_no_other_confined_process_s_files(tmp_path, srt):
    policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ))
    with sandbox.bounded(srt) as theirs:
        assert theirs is not None and theirs.folder is not None
        (theirs.folder / "tmp" / "notes").write_text("theirs\n")
        said = shell(
            f"cat {theirs.folder}/tmp/notes; echo mine > $TMPDIR/notes && cat $TMPDIR/notes",
            policy,
            srt,
        )
    assert "theirs" not in said and "mine" in said, said


def test_through_its_door_it_reaches_what_is_listed_and_no_more(srt, server, tmp_path):
    """Its way out is a port of Maestro's proxy that srt lets it reach alone: a listed
    loopback server through it (absolute-form and CONNECT), another refused and named,
    the machine's loopback not at all without it."""
    listed = replace(srt, hosts=(f"127.0.0.1:{server}",))
    policy = sandbox.Policy(cwd=tmp_path, env={**os.environ, "NO_PROXY": "127.0.0.1"})
    with serving() as other, sandbox.network(listed) as door:
        assert door is not None and door.port is not None and door.opening is None
        calls = CALLS.replace("{port}", str(server)).replace("{other}", str(other))
        direct = TRY + f'    attempt("direct", socket.AF_INET, ("127.0.0.1", {server}))\n'
        out = python(calls, policy, listed, door) + python(direct, policy, listed, door)
    assert "plain: served /one" in out, out
    assert "connect: served /two" in out, out
    assert f"other: 403 Maestro's sandbox refused 127.0.0.1:{other}" in out
    assert "named: 403 Maestro's sandbox refused example.com:80" in out
    assert "direct refused:" in out and "REACHED" not in out, out
    assert sandbox.refusals(door) == (
        f"network: refused 127.0.0.1:{other} ({netproxy.ADVICE}), example.com:80 ({netproxy.ADVICE})"
    )


def test_it_reaches_its_office_door_where_it_is(srt, tmp_path):
    """No /tmp of its own has the door at sandbox.OFFICE: it is told where its door is,
    and may reach it (on macOS the one Unix socket it may reach)."""
    listener = socketdir.listen("office", "socket")
    folder = Path(listener.getsockname()).parent

    def answer() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"the office answers")

    threading.Thread(target=answer, daemon=True).start()
    code = """
    import socket
    from maestro.bus import door
    found = door.found()
    print("found", found)
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(found))
        print(s.recv(100).decode())
    """
    policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ), door=folder)
    try:
        with sandbox.network(srt) as door:
            assert door is not None
            said = python(code, policy, srt, door)
    finally:
        listener.close()
        socketdir.remove(folder)
    assert f"found {folder}/socket" in said and "the office answers" in said, said


def test_its_exit_status_is_the_program_s_and_srt_signalled_is_no_success(srt, tmp_path):
    """srt answers 0 when a SIGTERM ended it: a process whose srt was signalled from
    outside reads as killed, never as a success; the program's own status passes."""
    policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ))
    out = confined(["/bin/sh", "-c", "echo out; echo err >&2; exit 7"], policy, srt)
    assert (out.exit_code, out.stdout, out.stderr) == (7, "out\n", "err\n")
    killed = confined(["/bin/sh", "-c", "kill -9 $$"], policy, srt)
    assert killed.exit_code == 128 + signal.SIGKILL, killed.stderr
    with sandbox.bounded(srt) as bound:
        argv, env = sandbox.wrap(["sleep", "30"], sandbox.placed(policy, None, bound), srt)
        proc = subprocess.Popen(argv, cwd=tmp_path, env=env, start_new_session=True)
        try:
            srt_pid = _child(proc.pid, b"srt")
            time.sleep(1.5)  # it has started its program
            os.kill(srt_pid, signal.SIGTERM)
            stopped = proc.wait(timeout=30)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    assert stopped == -signal.SIGTERM


def _child(parent: int, name: bytes, wait_s: float = 10.0) -> int:
    """The child of ``parent`` whose command line holds ``name``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                if not entry.name.isdigit():
                    continue
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == parent and name in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except (OSError, ValueError, IndexError):
                continue
        time.sleep(0.02)
    raise AssertionError(f"no child {name!r} of {parent}")


def test_srt_killed_leaves_nothing_in_the_worktree(srt, tmp_path):
    """srt started in a worktree makes placeholder files there (.bashrc, .idea, ...) and,
    killed, leaves them: then `git add -A` fails. It starts in the process's own folder."""
    repo, wt = tmp_path / "repo", tmp_path / "wt"
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(
        [*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "one"], check=True
    )
    subprocess.run(
        [*git, "-C", str(repo), "worktree", "add", "-q", "--detach", str(wt)], check=True
    )
    before = sorted(p.name for p in wt.iterdir())
    policy = sandbox.Policy(cwd=wt, env=dict(os.environ), writable=[wt])
    with sandbox.bounded(srt) as bound:
        argv, env = sandbox.wrap(["sleep", "30"], sandbox.placed(policy, None, bound), srt)
        proc = subprocess.Popen(argv, cwd=wt, env=env, start_new_session=True)
        _child(proc.pid, b"srt")
        time.sleep(1.5)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert sorted(p.name for p in wt.iterdir()) == before
    status = subprocess.run(
        ["git", "-C", str(wt), "status", "--porcelain"], check=True, capture_output=True, text=True
    )
    assert status.stdout == ""


def test_srt_missing_is_refused_naming_how_to_install_it(project, monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "BACKEND", sandbox.SRT)
    monkeypatch.setenv("PATH", str(tmp_path))
    probed, why = sandbox.probe(os.environ)
    assert probed is None and why == "Anthropic's sandbox runtime (srt) is not installed"
    fix = sandbox.unavailable(why).fix or ""
    assert "npm install -g @anthropic-ai/sandbox-runtime" in fix and "--no-sandbox" in fix
    check = sandbox_check(load_settings(project), dict(os.environ))
    assert check.level == "fail" and "srt" in check.detail
    assert "npm install -g @anthropic-ai/sandbox-runtime" in (check.fix or "")


def test_doctor_names_srt_where_it_confines(project, srt):
    check = sandbox_check(load_settings(project), dict(os.environ))
    assert check.level == "ok", check
    assert "Anthropic's sandbox runtime (srt)" in check.detail and srt.program in check.detail
    assert "temporary folder unbounded" in check.detail


def test_at_its_time_limit_everything_it_started_ends(srt, tmp_path):
    """No pid namespace on macOS: at the time limit its process group is stopped, srt
    and all it started with it."""
    policy = sandbox.Policy(cwd=tmp_path, env=dict(os.environ))
    with sandbox.bounded(srt) as bound:
        argv, env = sandbox.wrap(
            ["/bin/sh", "-c", "sleep 3019 & sleep 3019"], sandbox.placed(policy, None, bound), srt
        )
        out = run_process(argv, cwd=tmp_path, env=env, timeout_s=3, grace_s=1)
    assert out.timed_out
    assert left_running(b"sleep\x003019") == []

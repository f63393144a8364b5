"""The one process runner: stdin, process groups, deadlines, large outputs, aborts."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from maestro import sandbox
from maestro.errors import SpokeError
from maestro.pids import boot_id, pid_namespace, proc_cmdline
from maestro.process import ExecutableNotFound, run_process, spawn_detached
from maestro.spokes.contract import DispatchRequest
from maestro.spokes.registry import get_spoke

PY = sys.executable


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone_soon(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_captures_output_exit_code_and_duration(tmp_path):
    out = run_process(
        [PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        cwd=tmp_path,
        timeout_s=30,
    )
    assert (out.stdout, out.stderr, out.exit_code, out.timed_out, out.aborted) == (
        "out\n",
        "err\n",
        3,
        False,
        False,
    )
    assert 0 < out.duration_s < 30


def test_stdin_is_dev_null(tmp_path):
    code = "import os, stat; s = os.fstat(0); print(stat.S_ISCHR(s.st_mode) and s.st_rdev == os.stat(os.devnull).st_rdev)"
    assert run_process([PY, "-c", code], cwd=tmp_path, timeout_s=30).stdout == "True\n"
    # Reading stdin ends at once instead of hanging like `codex exec` on an open pipe.
    assert (
        run_process(
            [PY, "-c", "import sys; print(len(sys.stdin.read()))"], cwd=tmp_path, timeout_s=10
        ).stdout
        == "0\n"
    )


def test_own_process_group_and_on_start(tmp_path):
    seen = []
    out = run_process(
        [PY, "-c", "import os; print(os.getpgid(0) == os.getpid())"],
        cwd=tmp_path,
        timeout_s=30,
        on_start=seen.append,
    )
    assert out.stdout == "True\n"
    assert seen == [out.pid]


def test_large_output_on_both_pipes_does_not_deadlock(tmp_path):
    code = (
        "import sys\n"
        "chunk = 'y' * 1023 + '\\n'\n"
        "for _ in range(12 * 1024):\n"
        "    sys.stdout.write(chunk); sys.stderr.write(chunk)\n"
    )
    lines = []
    out = run_process(
        [PY, "-c", code],
        cwd=tmp_path,
        timeout_s=60,
        on_stdout_line=lambda line: lines.append(len(line)) and False,
    )
    assert not out.timed_out and out.exit_code == 0
    assert len(out.stdout) == len(out.stderr) == 12 * 1024 * 1024
    assert len(lines) == 12 * 1024 and set(lines) == {1023}


def test_timeout_stops_a_process_that_ignores_sigterm(tmp_path):
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('started', flush=True); time.sleep(60)"
    started = time.monotonic()
    out = run_process([PY, "-c", code], cwd=tmp_path, timeout_s=1.0, grace_s=0.5)
    assert out.timed_out and out.exit_code == -9
    assert out.stdout == "started\n"
    assert time.monotonic() - started < 10
    assert not alive(out.pid)


def test_timeout_kills_the_whole_process_group(fake_clis, project):
    # The fake claude ignores SIGTERM, and so does the child it starts: only a SIGKILL to
    # the group ends both.
    fake_clis.script(
        "claude",
        [{"child": {"ignore_term": True, "sleep": 120}, "ignore_term": True, "hang": True}],
    )
    out = run_process(
        ["claude", "-p", "x", "--output-format", "json"], cwd=project, timeout_s=1.5, grace_s=0.5
    )
    call = fake_clis.runs("claude")[0]
    assert out.timed_out
    assert gone_soon(call["pid"]) and gone_soon(call["child_pid"])


def test_at_the_deadline_sigterm_reaches_the_program_in_a_sandbox(tmp_path):
    """bwrap would end at SIGTERM and take its program with it by SIGKILL: the program
    inside hears the SIGTERM instead, and may clean up. A program whose own child keeps a
    sandbox still hears it itself."""
    heard = "import pathlib, signal, sys, time\n"
    heard += "def term(*_):\n    pathlib.Path(sys.argv[1]).write_text('TERM')\n    sys.exit(3)\n"
    heard += "signal.signal(signal.SIGTERM, term)\nprint('started', flush=True)\ntime.sleep(60)\n"
    policy = sandbox.Policy(cwd=tmp_path, env={"PATH": os.defpath}, writable=[tmp_path])
    rules = sandbox.Rules(shutil.which("bwrap") or "bwrap")
    argv, env = sandbox.wrap([PY, "-c", heard, str(tmp_path / "inside")], policy, rules)
    out = run_process(argv, cwd=tmp_path, env=env, timeout_s=1.5, grace_s=3)
    assert out.timed_out and out.stdout == "started\n" and out.exit_code == 3, out
    assert (tmp_path / "inside").read_text() == "TERM"

    keeper = f"trap 'echo TERM > {tmp_path}/keeper; exit 4' TERM; {shlex.join(argv)} & wait"
    out = run_process(["sh", "-c", keeper], cwd=tmp_path, env=env, timeout_s=1.5, grace_s=3)
    assert out.timed_out and out.exit_code == 4, out
    assert (tmp_path / "keeper").read_text() == "TERM\n"


def test_a_background_child_left_behind_is_cleaned_up(fake_clis, project):
    fake_clis.script("claude", [{"child": {"ignore_term": False, "sleep": 120}, "text": "done"}])
    started = time.monotonic()
    result = get_spoke("claude").dispatch(DispatchRequest(prompt="x", cwd=project, timeout_s=60))
    assert result.success and result.text == "done"
    assert time.monotonic() - started < 20  # not the child's 120 s, nor the 60 s deadline
    assert gone_soon(fake_clis.runs("claude")[0]["child_pid"])


def test_on_stdout_line_can_abort(tmp_path):
    code = "import time\nfor i in range(100):\n    print(i, flush=True); time.sleep(0.05)\n"
    seen = []

    def watch(line: str) -> bool:
        seen.append(line)
        return line == "3"

    out = run_process(
        [PY, "-c", code], cwd=tmp_path, timeout_s=30, on_stdout_line=watch, grace_s=0.5
    )
    assert out.aborted and not out.timed_out
    assert seen[:4] == ["0", "1", "2", "3"] and len(seen) < 20
    assert out.duration_s < 5


def test_on_stderr_line_can_stop_the_process(tmp_path):
    code = (
        "import sys, time\nprint('warming up', file=sys.stderr, flush=True)\n"
        "print('Attempt 1 failed', file=sys.stderr, flush=True)\ntime.sleep(60)\nprint('late')\n"
    )
    out = run_process(
        [PY, "-c", code],
        cwd=tmp_path,
        timeout_s=30,
        grace_s=0.5,
        on_stderr_line=lambda line: line.startswith("Attempt"),
    )
    assert out.stopped_on_stderr and not out.aborted and not out.timed_out
    assert out.stderr == "warming up\nAttempt 1 failed\n" and out.stdout == ""
    assert out.duration_s < 5


def test_a_silent_stdout_is_reported_every_quiet_interval(tmp_path):
    """Three reports, then the process answers: it waits for the third (a file the test
    writes) rather than for a time its own start, slow on a loaded machine, would shift."""
    quiet: list[float] = []
    go = tmp_path / "go"

    def heard(after: float) -> None:
        quiet.append(after)
        if len(quiet) == 3:
            go.touch()

    code = (
        "import os, sys, time; print('waiting for network', file=sys.stderr, flush=True)\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\nprint('done')"
    )
    out = run_process([PY, "-c", code], cwd=tmp_path, timeout_s=30, on_quiet=heard, quiet_s=0.3)
    assert out.stdout == "done\n" and out.stderr == "waiting for network\n"
    assert len(quiet) == 3 and quiet[0] >= 0.3
    gaps = [later - sooner for sooner, later in zip([0.0, *quiet], quiet, strict=False)]
    assert all(0.3 <= gap < 0.3 + 0.25 for gap in gaps), gaps


def test_output_on_stdout_keeps_the_quiet_report_away(tmp_path):
    quiet: list[float] = []
    code = "import time\nfor _ in range(10):\n    print('event', flush=True); time.sleep(0.1)"
    out = run_process(
        [PY, "-c", code], cwd=tmp_path, timeout_s=30, on_quiet=quiet.append, quiet_s=0.4
    )
    assert out.stdout.count("event") == 10 and quiet == []


def test_stderr_is_kept_whole_when_watched(tmp_path):
    code = "import sys\nsys.stderr.write('a' * 100000 + '\\nno newline at the end')\n"
    out = run_process(
        [PY, "-c", code], cwd=tmp_path, timeout_s=30, on_stderr_line=lambda line: False
    )
    assert out.stderr == "a" * 100000 + "\nno newline at the end" and not out.stopped_on_stderr


def test_an_error_in_the_line_callback_surfaces(tmp_path):
    def broken(line: str) -> bool:
        raise ValueError("bad watcher")

    with pytest.raises(ValueError, match="bad watcher"):
        run_process([PY, "-c", "print(1)"], cwd=tmp_path, timeout_s=30, on_stdout_line=broken)


def test_missing_executable(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ExecutableNotFound, match="'nope-cli' was not found on PATH"):
        run_process(["nope-cli", "--version"], cwd=tmp_path, timeout_s=5)


@pytest.mark.parametrize(
    ("cli", "hint"),
    [
        ("claude", "npm install -g @anthropic-ai/claude-code"),
        ("gemini", "npm install -g @google/gemini-cli"),
        ("codex", "npm install -g @openai/codex"),
    ],
)
def test_missing_cli_names_its_install_command(fake_clis, project, cli, hint):
    fake_clis.uninstall(cli)
    with pytest.raises(SpokeError) as caught:
        get_spoke(cli).dispatch(DispatchRequest(prompt="x", cwd=project, timeout_s=10))
    message = str(caught.value)
    assert f"the {cli} CLI ({cli}) is not installed or not on PATH" in message
    assert f"`{hint}`" in message and "\n" not in message


def test_missing_working_directory(tmp_path):
    with pytest.raises(SpokeError, match="does not exist"):
        run_process([PY, "-c", "pass"], cwd=tmp_path / "gone", timeout_s=5)


def test_not_executable(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(SpokeError):
        run_process([str(script)], cwd=tmp_path, timeout_s=5)


def test_an_argument_over_the_systems_limit_names_the_prompt_not_the_executable(tmp_path):
    # Linux caps one argument at 128 KiB; a prompt travels as one argument.
    with pytest.raises(SpokeError) as info:
        run_process([PY, "-c", "pass", "x" * 200_000], cwd=tmp_path, timeout_s=5)
    message = str(info.value)
    assert "too long" in message and "200,000 bytes" in message
    assert "executable program" not in message and "\n" not in message


# -- the /proc readers and the detached start ----------------------------------------


def test_proc_readers_see_a_child_and_nothing_of_a_gone_one(tmp_path):
    import subprocess

    code = "import time; print('up', flush=True); time.sleep(30)"
    child = subprocess.Popen(
        [PY, "-c", code, "--marker"],
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout.readline() == b"up\n"  # past exec: /proc shows its own argv
        assert proc_cmdline(child.pid)[:4] == [PY.encode(), b"-c", code.encode(), b"--marker"]
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    assert proc_cmdline(child.pid) is None
    assert pid_namespace().startswith("pid:[") and len(boot_id()) == 36


def test_spawn_detached_outlives_its_caller_in_its_own_session(tmp_path):
    import os

    output = tmp_path / "run" / "engine.log"
    output.parent.mkdir()
    output.write_text("before\n")
    read, write = os.pipe()
    code = (
        "import os, sys, time; print(os.getsid(0) == os.getpid(), flush=True); "
        f"os.write({write}, b'x'); print(sys.stdin.read() == '', file=sys.stderr, flush=True)"
    )
    try:
        pid = spawn_detached(
            [PY, "-c", code], cwd=tmp_path, env={}, output=output, pass_fds=(write,)
        )
        assert os.read(read, 1) == b"x"  # the handed-over descriptor reached it
    finally:
        os.close(read)
        os.close(write)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    # Appended to, never truncated; stdout and stderr both; stdin is /dev/null.
    assert output.read_text() == "before\nTrue\nTrue\n"


def test_spawn_detached_names_a_missing_executable(tmp_path):
    with pytest.raises(ExecutableNotFound):
        spawn_detached(["no-such-tool"], cwd=tmp_path, env={"PATH": ""}, output=tmp_path / "o")


def test_a_nul_in_an_argument_is_a_spoke_error_not_a_crash_finding_10(tmp_path):
    with pytest.raises(SpokeError, match="NUL character"):
        run_process([PY, "-c", "pass", "a\x00b"], cwd=tmp_path, timeout_s=5)

"""What /proc says of a process, where /proc numbers pids as Maestro's namespace does and
where it does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import new_pid_namespace

# Run in a pid namespace of its own with the machine's /proc: every question about a
# process is asked with this namespace's pid, and SIGTERM at a deadline must still reach
# the program inside a sandbox, not bwrap (nor a process /proc numbers the same).
FOREIGN_PROC = """
import errno, json, os, shutil, signal, subprocess, sys, time
from pathlib import Path
from maestro import pids, sandbox
from maestro.bus.liveness import ProcessMark
from maestro.process import run_process

# Group 2 (this namespace's first child), whose leader ends and leaves a member behind;
# a sibling namespace has a group 2 too, alive throughout.
orphaned = subprocess.Popen(["sh", "-c", "sleep 60 & exit 0"], start_new_session=True)
orphaned.wait()
seen = {"leaderless": [orphaned.pid, pids.group_alive(orphaned.pid)]}
os.killpg(orphaned.pid, signal.SIGKILL)  # (a zombie of this process's now: gone)
deadline = time.monotonic() + 5
while pids.group_alive(orphaned.pid) and time.monotonic() < deadline:
    time.sleep(0.02)
seen["leaderless"].append(pids.group_alive(orphaned.pid))
os.waitpid(-1, 0)

seen.update(level=pids.proc_level(), me=pids.proc_stat(os.getpid()).name)
sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
mark = ProcessMark.of(sleeper.pid)
seen["stat"] = pids.proc_stat(sleeper.pid).name
seen["cmdline"] = pids.proc_cmdline(sleeper.pid)[0].decode()
seen["alive"] = [pids.pid_alive(sleeper.pid), pids.group_alive(sleeper.pid), mark.alive()]
sleeper.kill()
sleeper.wait()
seen["ended"] = [pids.pid_alive(sleeper.pid), pids.group_alive(sleeper.pid), mark.alive()]
child = "from maestro import pids; print(*pids.ancestors())"
seen["ancestors"] = [pids.ancestors(), subprocess.run(
    [sys.executable, "-c", child], capture_output=True, text=True
).stdout.split()]

tmp = Path(sys.argv[1])
heard = "import pathlib, signal, sys, time\\n"
heard += "def term(*_):\\n    pathlib.Path(sys.argv[1]).write_text('TERM')\\n    sys.exit(3)\\n"
heard += "signal.signal(signal.SIGTERM, term)\\nprint('started', flush=True)\\ntime.sleep(60)\\n"
policy = sandbox.Policy(cwd=tmp, env={"PATH": os.defpath}, writable=[tmp])
rules = sandbox.Rules(shutil.which("bwrap") or "bwrap")
argv, env = sandbox.wrap([sys.executable, "-c", heard, str(tmp / "inside")], policy, rules)
out = run_process(argv, cwd=tmp, env=env, timeout_s=1.5, grace_s=5)
seen["deadline"] = [out.timed_out, out.exit_code, (tmp / "inside").exists()]

def no_pidfd(pid):
    raise OSError(errno.ENOSYS, "pidfd_open")

os.pidfd_open = no_pidfd  # (Linux before 5.3): /proc cannot be asked, and says nothing
running = subprocess.Popen(["sleep", "60"], start_new_session=True)
seen["no_pidfd"] = [pids.group_alive(running.pid), pids.proc_stat(running.pid)]
running.kill()
running.wait()
print(json.dumps(seen))
"""


def test_a_process_is_asked_about_by_its_own_pid_where_proc_numbers_another_namespace(
    tmp_path,
):
    prefix = new_pid_namespace()
    ready = tmp_path / "sibling"
    group_2 = f"setsid sh -c 'touch {ready}; exec sleep 60' & wait"
    sibling = subprocess.Popen([prefix[0], "--kill-child", *prefix[1:], "sh", "-c", group_2])
    try:
        deadline = time.monotonic() + 10
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        done = subprocess.run(
            [*prefix, sys.executable, "-c", FOREIGN_PROC, str(tmp_path)],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        sibling.kill()  # (and with it its namespace: --kill-child)
        sibling.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["level"] == 1  # /proc is the machine's: the case under test
    # A group whose leader has gone lives while a member does, and only its own members
    # count: not the sibling namespace's group of the same number.
    assert seen["leaderless"] == [2, True, False], seen
    me = Path(sys.executable).name[:15]  # (a process's name: what it was started as)
    assert (seen["me"], seen["stat"], seen["cmdline"]) == (me, "sleep", "sleep"), seen
    assert seen["alive"] == [True, True, True] and seen["ended"] == [False, False, False]
    # Its ancestors are those in its own pid namespace: not unshare, nor what started it.
    assert seen["ancestors"] == [[], [me]], seen
    # Where /proc cannot be asked, a group counts as alive while it can be signalled.
    assert seen["no_pidfd"] == [True, None], seen
    # The program inside the sandbox heard SIGTERM itself and cleaned up.
    assert seen["deadline"] == [True, 3, True], seen


def test_here_proc_numbers_pids_as_this_process_does():
    from maestro import pids

    assert pids.proc_level() == 0
    assert pids.proc_cmdline(os.getpid()) is not None
    assert pids.proc_stat(os.getppid()) is not None

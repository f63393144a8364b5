"""The run lock: liveness from the kernel's flock, the holder record read whole."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from maestro.engine.rundir import RunLock
from maestro.paths import ProjectPaths

# Engines start one after another in a child process, each writing its holder record,
# while this process reads the lock as `maestro wait` does.
STARTS = 300
_ENGINES = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from maestro.engine.rundir import RunLock
    from maestro.paths import ProjectPaths

    paths = ProjectPaths(Path(sys.argv[1]))
    for n in range(int(sys.argv[2])):
        lock = RunLock(paths)
        run_id = f"20261126T000000Z-{n:04x}"
        fd, env = lock.hand_over(run_id)       # the detaching command takes it...
        heir = RunLock(paths)
        import os
        os.environ.update(env)
        heir.acquire(run_id)                   # ...and the engine inherits it (same fd here)
        heir.release()
    """
)


def test_a_reader_never_sees_a_held_lock_without_its_holder(tmp_path):
    paths = ProjectPaths(tmp_path)
    paths.machine_dir.mkdir(parents=True)
    with RunLock(paths).held("20261125T000000Z-0000"):  # a project that has run before
        pass
    engines = subprocess.Popen([sys.executable, "-c", _ENGINES, str(tmp_path), str(STARTS)])
    empty = seen = 0
    lock = RunLock(paths)
    try:
        while engines.poll() is None:
            holder = lock.holder()
            if holder is not None:
                seen += 1
                if not holder.get("run_id"):
                    empty += 1
    finally:
        engines.wait(timeout=60)
    assert engines.returncode == 0
    assert seen > 0, "the reader never caught an engine holding the lock"
    assert empty == 0, f"{empty} of {seen} reads of a held lock had no holder"


def test_alive_is_true_from_hand_over_to_release(tmp_path):
    paths = ProjectPaths(tmp_path)
    lock = RunLock(paths)
    assert lock.holder() is None
    with lock.held("20261126T000000Z-aaaa"):
        assert RunLock(paths).alive("20261126T000000Z-aaaa")
        assert not RunLock(paths).alive("20261126T000001Z-bbbb")
    time.sleep(0)
    assert not RunLock(paths).alive("20261126T000000Z-aaaa")
    assert RunLock(paths).holder() is None

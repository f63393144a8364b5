"""The folders of a dispatch's sockets (maestro/socketdir.py): the office's door's, each
removed when its dispatch ends; those of an engine killed outright are swept when the
next is made, those of a live engine never."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from maestro import sandbox, socketdir
from maestro.bus import door

# An engine with a dispatch's door open, which it never closes.
ENGINE = """
from pathlib import Path
import time
from maestro.bus.door import Door
office = Door(["true"], {}, Path.cwd())
print(office.folder, flush=True)
time.sleep(120)
"""


def engine() -> tuple[subprocess.Popen[str], list[Path]]:
    started = subprocess.Popen([sys.executable, "-c", ENGINE], stdout=subprocess.PIPE, text=True)
    assert started.stdout is not None
    folders = [Path(f) for f in started.stdout.readline().split()]
    assert len(folders) == 1 and all(f.is_dir() for f in folders), folders
    return started, folders


def killed(started: subprocess.Popen[str]) -> None:
    started.kill()
    started.wait()


def test_a_killed_engines_socket_folders_are_swept_by_the_next_door(tmp_path):
    first, first_folders = engine()
    second, second_folders = engine()
    try:
        killed(first)
        with door.Door(["true"], {}, tmp_path) as office:
            assert office.folder.is_dir()
        assert [f for f in first_folders if f.exists()] == []
        assert all(f.is_dir() for f in second_folders)  # its engine lives
        killed(second)
        with door.Door(["true"], {}, tmp_path) as later:
            assert later.folder.is_dir()
        assert [f for f in second_folders if f.exists()] == []
        assert not office.folder.exists() and not later.folder.exists()
    finally:
        for started in (first, second):
            killed(started)


def test_a_folder_is_private_and_names_its_maker(tmp_path):
    assert socketdir.ROOT == sandbox.TMP  # a sandbox's own /tmp hides every other socket
    with door.Door(["true"], {}, tmp_path) as office:
        assert office.folder.stat().st_mode & 0o777 == 0o700
        kind, pid = office.folder.name.split("-")[1:3]
        assert (kind, int(pid)) == ("office", os.getpid())


def test_a_recycled_pid_is_no_maker_and_another_namespaces_is_not_judged(monkeypatch, tmp_path):
    monkeypatch.setattr(socketdir, "ROOT", tmp_path)
    pid, start, space = socketdir.owner().split("-")
    kept = [
        f"maestro-office-{pid}-{start}-{space}-live",
        f"maestro-office-1-1-{int(space) + 1}-elsewhere",  # a pid there means nothing here
        "maestro-office-0-0-0-unknown",  # made where /proc could not say
        f"maestro-check-1-1-{space}-notours",
        "maestro-office",
    ]
    recycled = f"maestro-office-{pid}-{int(start) + 1}-{space}-recycled"
    for name in (*kept, recycled):
        (tmp_path / name).mkdir()
    socketdir.sweep()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)

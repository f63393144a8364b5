"""Atomic writes on a full disk: a one-line error naming the file and the disk, and the
file as it was."""

import errno
import os

import pytest
import yaml

from maestro.errors import DiskFull
from maestro.fsutil import atomic_write


def _full_disk(monkeypatch, code=errno.ENOSPC):
    """The kernel's answer when the data reaches the disk and there is no room for it."""

    def fsync(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.ENOSPC, "the disk is full"), (errno.EDQUOT, "the disk quota is exceeded")],
)
def test_a_full_disk_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch, code, words):
    target = tmp_path / "plan.md"
    target.write_text("old content\n")
    _full_disk(monkeypatch, code)
    with pytest.raises(DiskFull) as caught:
        atomic_write(target, "new content that does not fit\n")
    message = str(caught.value)
    assert f"cannot write {target}: {words} (the filesystem mounted at " in message
    assert (
        "free)" in message
        and "kept its previous content" in message
        and "Fix: free some space on" in message
    )
    assert "\n" not in message
    assert target.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.md"]


def test_other_write_errors_are_not_called_a_full_disk(tmp_path, monkeypatch):
    def fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError) as caught:
        atomic_write(tmp_path / "x", "data")
    assert not isinstance(caught.value, DiskFull) and caught.value.errno == errno.EIO


def _plan_input(tmp_path, title):
    source = tmp_path / f"{title}.yaml"
    source.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "goal": "Add a greeting module",
                "tasks": [
                    {
                        "id": 1,
                        "title": title,
                        "specialist": "code",
                        "files": ["src/app.py"],
                        "criteria": ["the module defines greet"],
                        "validation": "test -f src/app.py",
                    }
                ],
            }
        )
    )
    return str(source)


def test_plan_on_a_full_disk_is_a_one_line_error_and_keeps_the_plan(
    cli, project, tmp_path, monkeypatch
):
    assert cli("plan", "--from", _plan_input(tmp_path, "Write the first module"), "--yes").code == 0
    plan = project / ".ai" / "MAESTRO.md"
    before = plan.read_bytes()
    _full_disk(monkeypatch)
    res = cli("plan", "--from", _plan_input(tmp_path, "Write another module"), "--yes")
    assert res.code == 1, res.err
    assert (
        res.err.count("\n") == 1 and "Traceback" not in res.err and "internal error" not in res.err
    )
    assert "MAESTRO.md: the disk is full" in res.err and "kept its previous content" in res.err
    assert plan.read_bytes() == before
    assert not [p for p in plan.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_full_disk_outside_atomic_writes_is_a_user_error_not_a_crash(cli, project, monkeypatch):
    import maestro.cli.config as cmd

    def append(args, ctx):  # an append (events.jsonl, a lock file) hitting the full disk
        raise OSError(
            errno.ENOSPC, "No space left on device", str(project / ".ai" / "events.jsonl")
        )

    monkeypatch.setattr(cmd, "run", append)
    res = cli("config")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "events.jsonl: the disk is full" in res.err and "crash" not in res.err


def test_a_full_disk_without_a_file_name_names_the_projects_disk(cli, project, monkeypatch):
    import maestro.cli.config as cmd

    def write_in_place(args, ctx):  # os.pwrite on an open descriptor carries no file name
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cmd, "run", write_in_place)
    res = cli("config")
    assert res.code == 1 and res.err.count("\n") == 1
    assert res.err.startswith(
        "maestro: error: a write failed: the disk is full (the filesystem mounted at /"
    )

"""The user's state folder (``~/.local/state/maestro``) holds what Maestro runs and
trusts: the spokes' shim, the plan's history, who each session is. One a spoke or another
user could write is refused by every command, in one line naming the fix, and nothing is
written there."""

from __future__ import annotations

import os
import stat

import pytest

from maestro.paths import user_state_dir
from tests.engine.runkit import task, write_plan

COMMANDS = [
    ("run",),
    ("status",),
    ("session", "list"),
    ("mail", "send", "--to", "user", "--message", "hello"),
    ("plan", "--from", "../plan-input.yaml", "--yes"),
]


def contents(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


@pytest.fixture
def planned(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="sim")])
    return project


@pytest.fixture
def state_home(temp_home):
    """The user's state folder, moved aside so that a test can put something in its place."""
    folder = user_state_dir()
    folder.rename(folder.with_name("maestro-before"))
    return folder


def refused(res, *words):
    assert res.code == 1 and res.err.count("\n") == 1 and "Fix:" in res.err, res.err
    for word in words:
        assert word in res.err, (word, res.err)


@pytest.mark.parametrize("argv", COMMANDS)
def test_a_state_folder_linked_into_the_projects_state_is_refused(cli, planned, state_home, argv):
    mail = planned / ".ai" / "maestro" / "mail"  # where a spoke's `maestro mail` writes
    mail.mkdir(parents=True, exist_ok=True)
    state_home.symlink_to(mail)
    before = contents(mail)
    refused(
        cli(*argv), f"state folder {state_home} lies inside the project", "where spokes can write"
    )
    assert contents(mail) == before


@pytest.mark.parametrize("argv", COMMANDS)
@pytest.mark.parametrize("mode", [0o777, 0o770], ids=["0777", "0770"])
def test_a_state_folder_others_may_write_is_refused(cli, planned, state_home, argv, mode):
    state_home.mkdir()
    state_home.chmod(mode)
    refused(cli(*argv), "can be written by other users", f"chmod go-w {state_home}")
    assert contents(state_home) == []


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a folder to another user")
def test_a_state_folder_of_another_user_is_refused(cli, planned, state_home):
    state_home.mkdir(mode=0o700)
    os.chown(state_home, 65534, 65534)
    refused(cli("run"), "belongs to another user (uid 65534)", "sudo -H")
    assert contents(state_home) == []


def test_a_link_to_a_folder_of_ones_own_elsewhere_is_followed(cli, planned, state_home, tmp_path):
    own = tmp_path / "my-state"
    own.mkdir(mode=0o700)
    state_home.symlink_to(own)
    assert cli("run").code == 0
    assert (own / "projects").is_dir() and (own / "shims").is_dir()


def test_the_folder_maestro_makes_is_the_users_alone(cli, planned, state_home):
    assert cli("run").code == 0
    assert stat.S_IMODE(state_home.stat().st_mode) == 0o700


def test_a_state_folder_linked_into_the_work_tree_or_another_projects_state_is_refused(
    cli, planned, state_home, tmp_path
):
    src = planned / "src"
    src.mkdir()
    state_home.symlink_to(src)
    refused(cli("status"), f"lies inside the project {planned}")
    state_home.unlink()
    other = tmp_path / "other" / ".ai" / "maestro" / "sessions"
    other.mkdir(parents=True)
    state_home.symlink_to(other)
    refused(cli("status"), f"lies inside the project {tmp_path / 'other'}")
    assert contents(src) == contents(other) == []


def test_a_project_holding_the_home_folder_holds_the_state_folder_too(cli, temp_home, monkeypatch):
    """Maestro run in the home folder itself: its state folder is in that project of
    necessity, which is not refused."""
    monkeypatch.chdir(temp_home)
    assert cli("plan", "--example", "plan.yaml").code == 0
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    assert cli("status").code == 0
    assert (user_state_dir() / "projects").is_dir()

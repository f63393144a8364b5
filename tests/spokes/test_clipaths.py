"""Spoke CLIs found where the user's PATH is known, used from a shell whose PATH lacks
them (a Codex hub's login shell, HOSTS.md section 5): simulated here by a PATH without
the fakes' folder."""

from __future__ import annotations

import json
import os
import shutil

from maestro.paths import user_state_dir
from maestro.spokes import clipaths
from maestro.spokes.registry import detect_available
from tests.engine.runkit import plan, step, task, write_plan

LOGIN_PATH = "/usr/bin:/bin"  # what a login profile leaves: no folder of the user's own


def login_shell(**extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": LOGIN_PATH, "CODEX_CI": "1", **extra}


def test_a_cli_found_on_path_is_found_from_a_shell_without_it(fake_clis):
    assert "claude" not in detect_available(login_shell())  # nothing recorded yet
    detect_available()  # the user's shell: the fakes are on PATH
    found = detect_available(login_shell())
    assert sorted(found) == ["claude", "codex", "gemini", "sim"]
    assert found["claude"].path == str(fake_clis.path("claude"))


def test_the_record_is_the_users_own_file_outside_the_project(fake_clis, project):
    detect_available()
    record = user_state_dir() / "cli-paths.json"
    assert json.loads(record.read_text())["claude"] == str(fake_clis.path("claude"))
    assert record.stat().st_mode & 0o777 == 0o600
    assert not (project / ".ai").exists()


def test_a_path_hit_wins_over_the_record(fake_clis, tmp_path):
    detect_available()
    other = tmp_path / "other-bin"
    other.mkdir()
    shutil.copy2(fake_clis.path("claude"), other / "claude")
    found = detect_available(login_shell(PATH=f"{other}:{LOGIN_PATH}"))
    assert found["claude"].path == str(other / "claude")
    assert found["gemini"].path == str(fake_clis.path("gemini"))  # not on that PATH


def test_a_recorded_cli_that_is_gone_or_not_executable_is_not_used(fake_clis):
    detect_available()
    fake_clis.uninstall("gemini")
    fake_clis.path("codex").chmod(0o644)
    assert sorted(detect_available(login_shell())) == ["claude", "sim"]


def test_a_record_others_could_write_is_not_read(fake_clis):
    detect_available()
    record = user_state_dir() / "cli-paths.json"
    record.chmod(0o622)
    assert "claude" not in detect_available(login_shell())


def test_a_spokes_lookups_record_nothing(fake_clis):
    detect_available({**os.environ, "MAESTRO_SPOKE": "1"})
    assert clipaths.recorded(os.environ) == {}
    assert "claude" not in detect_available(login_shell())


def test_install_records_the_clis_of_the_users_shell(cli, project, fake_clis):
    assert cli("install", "--host", "codex").code == 0
    assert clipaths.recorded(os.environ)["gemini"] == str(fake_clis.path("gemini"))


def test_a_run_from_a_shell_without_the_clis_starts_the_recorded_one(
    cli, project, runenv, monkeypatch
):
    write_plan(cli, project, [task(1, tool="claude")])  # planned in the user's shell
    runenv.script("claude", [step()])
    monkeypatch.setenv("PATH", LOGIN_PATH)
    monkeypatch.setenv("CODEX_CI", "1")
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert plan(project).task("1").status == "done"
    (call,) = runenv.runs("claude")
    # The spoke's PATH is the one it was given, then the CLI's own folder (a node CLI's
    # `#!/usr/bin/env node` may need the node beside it).
    assert call["env"]["PATH"].endswith(f"{LOGIN_PATH}:{runenv.bin_dir}")

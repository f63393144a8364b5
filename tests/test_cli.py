import json

import pytest
import yaml

from maestro import __version__
from maestro.commands import COMMANDS


def test_version(cli, capsys):
    assert cli("--version").code == 0
    assert __version__ in capsys.readouterr().out


def test_help_lists_every_command(cli, capsys):
    assert cli("--help").code == 0
    out = capsys.readouterr().out
    for spec in COMMANDS:
        assert spec.name in out


def test_each_command_has_help_with_examples(cli, capsys):
    for spec in COMMANDS:
        assert cli(spec.name, "--help").code == 0, spec.name
        out = capsys.readouterr().out
        assert "examples:" in out and f"maestro {spec.name}" in out, spec.name


def test_wrong_flag_is_one_line_exit_1(cli, capsys):
    assert cli("config", "--bogus").code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "maestro config --help" in err


def test_unknown_command_exit_1(cli, capsys):
    assert cli("nosuch").code == 1
    assert "Fix:" in capsys.readouterr().err


def test_config_bad_value_names_setting_source_and_allowed(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_LOG", "loud")
    res = cli("config")
    assert res.code == 1
    assert (
        "MAESTRO_LOG" in res.err
        and "environment" in res.err
        and "off, summary, detailed" in res.err
    )
    assert "Traceback" not in res.err


def test_config_precedence_env_dotenv_file_default(cli, project, monkeypatch):
    (project / ".ai").mkdir()
    (project / ".ai" / "maestro.toml").write_text(
        "max_concurrent = 5\nmax_retries = 4\nlog = 'summary'\n"
    )
    (project / ".env").write_text("MAESTRO_MAX_RETRIES=1\nMAESTRO_LOG=detailed\n")
    monkeypatch.setenv("MAESTRO_LOG", "off")
    res = cli("config", "--json")
    assert res.code == 0
    body = json.loads(res.out)
    assert body["maestro_format"] == 1 and body["ok"] is True
    rows = {r["key"]: r for r in body["data"]["settings"]}
    assert rows["max_concurrent"]["value"] == 5 and rows["max_concurrent"]["source"].endswith(
        "maestro.toml"
    )
    assert rows["max_retries"]["value"] == 1 and rows["max_retries"]["source"] == ".env"
    assert rows["log"]["value"] == "off" and rows["log"]["source"] == "environment"
    assert rows["stagger_delay"]["source"] == "default"


def test_config_file_bad_value_names_file(cli, project):
    (project / ".ai").mkdir()
    (project / ".ai" / "maestro.toml").write_text("validation_strictness = 'harsh'\n")
    res = cli("config")
    assert res.code == 1 and "maestro.toml" in res.err and "strict, normal, lenient" in res.err


def test_json_error_envelope(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "0")
    res = cli("config", "--json")
    assert res.code == 1
    body = json.loads(res.out)
    assert body["ok"] is False and body["error"]["type"] == "ConfigError"


def test_unexpected_error_exits_70_with_log(cli, project, monkeypatch, temp_home):
    # 70 (EX_SOFTWARE), not 3: `maestro run` exits 3 when all is done but a change was
    # withheld, and a script must tell the two apart.
    import maestro.cli.config as cmd

    def boom(args, ctx):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cmd, "run", boom)
    res = cli("config")
    assert res.code == 70
    assert "kaboom" in res.err and "crash-" in res.err and "Traceback" not in res.err
    logs = list((temp_home / ".local" / "state" / "maestro" / "crash").glob("crash-*.log"))
    assert logs and "RuntimeError" in logs[0].read_text()


def test_ctrl_c_exits_130(cli, project, monkeypatch):
    import maestro.cli.config as cmd

    def interrupted(args, ctx):
        raise KeyboardInterrupt

    monkeypatch.setattr(cmd, "run", interrupted)
    assert cli("config").code == 130


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_project_flag_to_a_missing_folder_or_a_file_is_one_line_and_creates_nothing(
    cli, tmp_path, monkeypatch, kind
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "goal": "g",
                "tasks": [
                    {
                        "id": 1,
                        "title": "Write the module",
                        "specialist": "code",
                        "files": ["a.py"],
                        "criteria": ["it exists"],
                        "validation": "test -f a.py",
                    }
                ],
            }
        )
    )
    target = "typo/dir" if kind == "missing" else "afile"
    if kind == "file":
        (tmp_path / "afile").write_text("x\n")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    res = cli("-C", target, "plan", "--from", "plan.yaml", "--yes")
    problem = "does not exist" if kind == "missing" else "is a file, not a folder"
    assert res.code == 1 and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert (
        res.err.startswith(f"maestro: error: -C {target}: ")
        and problem in res.err
        and "Fix:" in res.err
    )
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no mistyped folder tree


def test_project_dir_variable_to_a_missing_folder_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MAESTRO_PROJECT_DIR", str(tmp_path / "gone"))
    res = cli("status")
    assert res.code == 1 and "MAESTRO_PROJECT_DIR" in res.err and "does not exist" in res.err
    assert res.err.count("\n") == 1


@pytest.mark.parametrize("name", [".ai/maestro.toml", ".env"])
def test_a_settings_file_that_is_not_utf8_names_the_encoding(cli, project, name):
    (project / ".ai").mkdir()
    line = 'log = "caf\xe9"\n' if name.endswith("toml") else "MAESTRO_LOG=caf\xe9\n"
    (project / name).write_bytes(line.encode("latin-1"))
    res = cli("config")
    assert res.code == 1 and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert "is not UTF-8 text (byte 0xe9" in res.err and "save it in the UTF-8 encoding" in res.err
    assert "permission" not in res.err


@pytest.mark.parametrize("value", ["../elsewhere", "sub/../../elsewhere", "ABS"])
def test_a_state_dir_outside_the_project_is_refused(cli, project, tmp_path, monkeypatch, value):
    outside = tmp_path / "elsewhere"
    monkeypatch.setenv("MAESTRO_STATE_DIR", str(outside) if value == "ABS" else value)
    res = cli("status")
    assert res.code == 1 and res.err.count("\n") == 1 and "MAESTRO_STATE_DIR" in res.err
    assert "outside the project" in res.err and "MAESTRO_STATE_DIR_OUTSIDE=1" in res.err
    assert not outside.exists()


def test_an_absolute_state_dir_outside_the_project_is_used_when_said_so(
    cli, project, tmp_path, monkeypatch
):
    outside = tmp_path / "elsewhere"
    monkeypatch.setenv("MAESTRO_STATE_DIR", str(outside))
    monkeypatch.setenv("MAESTRO_STATE_DIR_OUTSIDE", "1")
    res = cli("config", "--json")
    assert res.code == 0, res.err
    rows = {r["key"]: r for r in json.loads(res.out)["data"]["settings"]}
    assert rows["state_dir"]["value"] == str(outside) and rows["state_dir_outside"]["value"] is True
    # The flag does not let a relative path wander off: leaving must be spelled out.
    monkeypatch.setenv("MAESTRO_STATE_DIR", "../elsewhere")
    assert cli("status").code == 1


def test_a_state_dir_inside_the_project_needs_no_flag(cli, project, monkeypatch):
    monkeypatch.setenv("MAESTRO_STATE_DIR", str(project / "state"))
    assert cli("config").code == 0
    monkeypatch.setenv("MAESTRO_STATE_DIR", "nested/../state")
    assert cli("config").code == 0

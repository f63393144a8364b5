"""Settings: one typed attribute per setting, so mypy checks every use of one."""

from __future__ import annotations

import dataclasses
import typing

from maestro.config import Settings, load_settings
from maestro.defaults import SETTINGS

KINDS = {"str": str, "bool": bool, "int": int, "float": float, "list": tuple, "enum": str}


def test_every_setting_has_a_typed_attribute_and_no_other():
    typed = {f.name for f in dataclasses.fields(Settings) if not f.init}
    assert typed == {s.key for s in SETTINGS}


def test_typed_attributes_carry_the_values_read(project, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "5")
    monkeypatch.setenv("MAESTRO_DISABLED_AGENTS", "coder, tester")
    settings = load_settings(project)
    assert settings.max_concurrent == 5 and settings.source("max_concurrent") == "environment"
    assert settings.disabled_agents == ("coder", "tester")
    hints = typing.get_type_hints(Settings)
    for setting in SETTINGS:
        value = getattr(settings, setting.key)
        assert value is None or isinstance(value, KINDS[setting.kind]), setting.key
        assert setting.key in hints


def test_a_subfolder_maestro_kept_state_in_stays_the_project_after_archive(tmp_path):
    """`maestro archive` takes .ai/MAESTRO.md away; the next command in that subfolder of
    a repository must not plan at the repository's top."""
    from maestro.paths import find_project_root

    top = tmp_path / "top"
    (top / ".git").mkdir(parents=True)
    sub = top / "sub"
    (sub / "src").mkdir(parents=True)
    assert find_project_root(sub / "src", env={}) == top  # never planned here: the repository
    (sub / ".ai" / "maestro").mkdir(parents=True)
    assert find_project_root(sub / "src", env={}) == sub
    # Outside any repository, a folder Maestro once ran in (a HOME, say) claims nothing.
    home = tmp_path / "home"
    (home / ".ai" / "maestro").mkdir(parents=True)
    (home / "notes").mkdir()
    assert find_project_root(home / "notes", env={}) == home / "notes"


def test_a_setting_that_is_gone_says_why_and_how_to_fix_the_file(cli, project):
    """A config file written for an earlier version still sets `wake_interval`: every
    command says in one line that it is gone and to delete it."""
    config = project / ".ai" / "maestro.toml"
    config.parent.mkdir(parents=True)
    config.write_text("wake_interval = 300\n")
    res = cli("config")
    assert res.code == 1 and "Traceback" not in res.err
    assert "'wake_interval'" in res.err and "is gone" in res.err and "delete it" in res.err

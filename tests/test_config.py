"""Settings: one typed attribute per setting, so mypy checks every use of one."""

from __future__ import annotations

import dataclasses
import typing

from maestro.config import SETTINGS, Settings, load_settings

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

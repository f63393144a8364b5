from __future__ import annotations

import pytest

from maestro import commands as registry
from maestro.agents.catalog import load_catalog
from maestro.config import load_settings
from tests.prompts.helpers import PINNED_COMMANDS


@pytest.fixture
def pinned_commands(monkeypatch):
    monkeypatch.setattr(registry, "COMMANDS", PINNED_COMMANDS)
    return PINNED_COMMANDS


@pytest.fixture
def catalog(tmp_path):
    return load_catalog(load_settings(tmp_path, {}))

from __future__ import annotations

from pathlib import Path

import pytest

from maestro.config import load_settings


@pytest.fixture
def write_agent(project: Path):
    def write(name: str, text: str) -> Path:
        path = project / ".ai" / "agents" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def settings_for(project: Path):
    """Settings of the temp project with the given environment and config file text."""

    def make(env: dict[str, str] | None = None, toml: str | None = None):
        if toml is not None:
            config = project / ".ai" / "maestro.toml"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(toml, encoding="utf-8")
        return load_settings(project, env or {})

    return make

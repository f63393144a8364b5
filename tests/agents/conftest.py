from __future__ import annotations

from pathlib import Path

import pytest

from maestro.config import load_settings


def persona(name: str, tools: list[str], *, body: str | None = None, **extra: object) -> str:
    """A persona file's text with the required frontmatter, overridable per key."""
    meta = {
        "name": name,
        "description": f'"{name} does one thing"',
        "kind": "local",
        "model": "gemini-2.5-pro",
        "temperature": 0.2,
        "max_turns": 10,
        "timeout_mins": 4,
        **extra,
    }
    lines = ["---"] + [f"{k}: {v}" for k, v in meta.items() if v is not None]
    lines += ["tools:"] + [f"  - {t}" for t in tools] + ["---", ""]
    sections = ("Role", "Methodology", "Decision Frameworks", "Output Contract", "Anti-Patterns", "Downstream Consumers")
    text = body if body is not None else "\n\n".join(f"## {s}\n\n{name} text for {s}." for s in sections)
    return "\n".join(lines) + text + "\n"


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

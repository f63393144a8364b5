"""Helpers the agent tests import."""

from __future__ import annotations


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
    sections = (
        "Role",
        "Methodology",
        "Decision Frameworks",
        "Output Contract",
        "Anti-Patterns",
        "Downstream Consumers",
    )
    text = (
        body
        if body is not None
        else "\n\n".join(f"## {s}\n\n{name} text for {s}." for s in sections)
    )
    return "\n".join(lines) + text + "\n"

"""Bundled data (commands, skills, agents, protocols), read through importlib.resources."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

BUNDLES = ("commands", "skills", "agents", "protocols")


def bundle(kind: str) -> Traversable:
    if kind not in BUNDLES:
        raise ValueError(f"unknown bundle {kind!r}")
    return files("maestro._bundled").joinpath(kind)


def read_text(kind: str, *parts: str) -> str:
    node = bundle(kind)
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


def list_files(kind: str, suffix: str = "") -> list[Traversable]:
    """Files directly in a bundle folder, sorted by name."""
    folder = bundle(kind)
    if not folder.is_dir():
        return []
    return sorted(
        (item for item in folder.iterdir() if item.is_file() and item.name.endswith(suffix)),
        key=lambda item: item.name,
    )

"""The genuine host-CLI outputs in tests/fixtures/host-samples, read by name."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "host-samples"


@dataclass(frozen=True)
class Sample:
    name: str
    cli: str
    argv: list[str]
    exit_code: int
    timed_out: bool
    stdout: str
    stderr: str
    meta: dict[str, Any]


def read_sample(name: str) -> Sample:
    meta_path = SAMPLES / f"{name}.meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"no host sample {name!r} in {SAMPLES}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))

    def text(suffix: str) -> str:
        path = SAMPLES / f"{name}.{suffix}"
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    return Sample(
        name,
        meta["cli"],
        meta["argv"],
        meta["rc"],
        meta["timed_out"],
        text("stdout"),
        text("stderr"),
        meta,
    )


def sample_names(cli: str | None = None) -> list[str]:
    names = sorted(p.name[: -len(".meta.json")] for p in SAMPLES.glob("*.meta.json"))
    return [n for n in names if cli is None or n.startswith(cli + "_")]

"""What `maestro doctor` looks at (``Situation``) and what it finds (``Check``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A sign-in as each CLI's files show it (Spoke.sign_in): not signed in is a warning, as
# the CLI may be one this user never dispatches to.
SIGNED = {
    True: ("ok", "signed in"),
    False: ("warn", "not signed in"),
    None: ("info", "sign-in unknown"),
}


@dataclass
class Check:
    area: str  # hosts | installs | hubs | pitfalls
    name: str
    level: str
    detail: str
    fix: str | None = None


@dataclass
class Situation:
    """What doctor looks at; tests build one by hand."""

    project_root: Path
    project_manifest: Path
    machine_dir: Path  # the project's .ai/maestro
    env: dict[str, str]
    available: dict[str, Any]  # name -> Availability(name, path, version)
    euid: int


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(g) for g in match.groups() if g is not None) if match else None

"""The oldest release of each dependency that pyproject.toml allows, as pip constraints:
.ci/run installs Maestro with them (`python -m tests.lower_bounds > constraints.txt`,
then `pip install -c constraints.txt .`) and runs a few test files, so a lower bound
that does not install or does not work fails CI instead of a user's install."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BOUND = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~][^;]*)?$")


def lowest(requirement: str) -> str:
    """``name>=1.2,<2`` -> ``name==1.2``; a requirement without ``>=`` is refused."""
    found = _BOUND.match(requirement.strip())
    bound = re.search(r">=\s*([^,;\s]+)", requirement)
    if not found or not bound:
        raise ValueError(f"dependency {requirement!r} has no lower bound (>=): give it one")
    return f"{found.group(1)}=={bound.group(1)}"


def constraints(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return [lowest(requirement) for requirement in project["dependencies"]]


if __name__ == "__main__":
    print("\n".join(constraints()))

"""Keeping every installed path inside its install root.

A relative path from a renderer or from a (possibly hand-edited) manifest is joined to
the root only if it has no ``..`` and no absolute part, and only if following every
symlink on the way still lands inside the root. The real path is what gets written, so
a symlinked CLAUDE.md -> AGENTS.md is edited in place and stays a symlink.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from maestro.errors import InstallError


def inside(root: Path, rel: str) -> Path:
    """The real path of ``root/rel``; InstallError if it would leave ``root``."""
    pure = PurePosixPath(rel)
    if (
        not rel
        or pure.is_absolute()
        or "\\" in rel
        or any(part in ("..", "") for part in rel.split("/"))
    ):
        raise InstallError(
            f"refusing the path {rel!r}: install paths must be relative and may not use '..'.",
            "if it came from the install manifest, restore the manifest or delete its entry.",
        )
    real_root = root.resolve()
    real = (real_root / pure).resolve()
    if real != real_root and real_root not in real.parents:
        raise InstallError(
            f"refusing {root / pure}: a symlink on the way leads outside {root} (to {real}).",
            "replace the symlink with a real folder or file, or install at the other --scope.",
        )
    return real

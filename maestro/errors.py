"""One user-facing error base. The CLI's handler turns these into one line and exit 1."""

from __future__ import annotations

from pathlib import Path

# How a newer Maestro is had: the installer again (uv, pipx or its own venv; there is no
# package index entry to upgrade from).
UPGRADE = "upgrade Maestro (run installers/install.sh again from an up-to-date clone)"


class MaestroError(Exception):
    """An error the user can fix. Its text names the thing, the problem and the fix."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        fix: str | None = None,
        *,
        file: str | Path | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.file = str(file) if file is not None else None
        self.line = line

    def where(self) -> str:
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}: " if self.line else f"{self.file}: "

    def __str__(self) -> str:
        text = f"{self.where()}{self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        # One line, whatever the message carried in.
        return " ".join(text.split())

    def to_dict(self) -> dict[str, object]:
        return {
            "type": type(self).__name__,
            "message": self.message,
            "fix": self.fix,
            "file": self.file,
            "line": self.line,
        }


class ConfigError(MaestroError):
    """A setting has a bad value."""


class PlanError(MaestroError):
    """The plan file or a plan input is invalid."""


class StateConflict(MaestroError):
    """The plan file changed on disk in a way the pending change cannot be re-applied to."""


class NotFound(MaestroError):
    """A named thing (task, agent, file) does not exist."""


class SpokeError(MaestroError):
    """A spoke CLI is missing or could not be started."""


class InstallError(MaestroError):
    """The installer refused to touch a file."""


class DiskFull(MaestroError):
    """A write failed for want of space (ENOSPC) or quota (EDQUOT): the user frees some,
    nothing in Maestro is wrong. Built by ``fsutil.disk_full``, which names the disk."""

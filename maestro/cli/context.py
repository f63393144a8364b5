"""What a command gets: where it runs, its settings, and its streams."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from maestro.config import Settings, load_settings
from maestro.errors import MaestroError
from maestro.formatting import colour_wanted
from maestro.fsutil import ignore_in_git
from maestro.paths import ProjectPaths


@dataclass
class Context:
    cwd: Path = field(default_factory=Path.cwd)
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    json: bool = False
    _settings: Settings | None = None
    _had_machine_dir: bool = True  # before this command: only a folder it makes is marked

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.cwd, self.env)
            self._had_machine_dir = self._settings.paths.machine_dir.is_dir()
        return self._settings

    @property
    def paths(self) -> ProjectPaths:
        return self.settings.paths

    def keep_state_out_of_git(self) -> None:
        """After a command that made the machine folder (``.ai/maestro``): it is out of
        git's view; the plan and the log beside it stay the person's. (A run marks it when
        it starts, whoever made it; a command that only reads writes nothing.)"""
        if self._settings is not None and not self._had_machine_dir:
            ignore_in_git(self._settings.paths.machine_dir)

    def interactive(self) -> bool:
        try:
            return self.stdin.isatty() and self.stdout.isatty()
        except (AttributeError, ValueError):
            return False

    def text(self, given: str | None) -> str:
        """A message: ``given`` (``--message``), else what stdin holds; never empty."""
        text = given
        if text is None:
            if self.interactive():
                raise MaestroError("no message given.", 'add --message "..." or pipe the text in.')
            text = self.stdin.read()
        if not text.strip():
            raise MaestroError(
                "the message is empty.", 'give the text with --message "..." or on stdin.'
            )
        return str(text).rstrip("\n")

    def colour(self) -> bool:
        """Colour status words? On a terminal, never under NO_COLOR or TERM=dumb."""
        return not self.json and colour_wanted(self.stdout, self.env)

    def confirm(self, question: str) -> bool:
        """Ask yes/no on the terminal. Never asks when not interactive (returns False)."""
        if not self.interactive():
            return False
        self.stdout.write(f"{question} [y/N] ")
        self.stdout.flush()
        answer = self.stdin.readline().strip().lower()
        return answer in ("y", "yes")

    def emit(self, line: str) -> None:
        """Progress for humans while a command works; silent under --json."""
        if not self.json:
            self.stdout.write(line + "\n")
            self.stdout.flush()


@dataclass
class Result:
    """What every command returns; the renderer prints it as text or as a JSON envelope."""

    command: str
    data: dict[str, Any]
    text: str
    exit_code: int = 0

"""Every filesystem location Maestro uses, from one place, overridable by environment.

Project files live under the state dir (default ``.ai``) of the project root. The project
root is ``$MAESTRO_PROJECT_DIR`` if set, else the nearest ancestor of the working
directory holding the state dir or a ``.git``, else the working directory.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from maestro.errors import ConfigError
from maestro.fsutil import make_private

DEFAULT_STATE_DIR = ".ai"
# An id that names a folder or file (a session's, a run's): one name, never a path.
ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


def _environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def find_project_root(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    environ = _environ(env)
    if environ.get("MAESTRO_PROJECT_DIR"):
        root = Path(environ["MAESTRO_PROJECT_DIR"]).expanduser().resolve()
        if not root.is_dir():
            problem = "is a file, not a folder" if root.exists() else "does not exist"
            raise ConfigError(
                f"MAESTRO_PROJECT_DIR={environ['MAESTRO_PROJECT_DIR']!r}: {root} {problem}.",
                "point it at the project's folder, or unset it to use the current folder.",
            )
        return root
    start = (cwd or Path.cwd()).resolve()
    state = environ.get("MAESTRO_STATE_DIR") or DEFAULT_STATE_DIR
    kept: Path | None = None  # the nearest folder Maestro kept state in (its plan archived)
    for folder in (start, *start.parents):
        if (folder / state / "MAESTRO.md").is_file():
            return folder
        if (folder / ".git").exists():
            # A project in a subfolder of a repository stays one after its plan is archived.
            return kept or folder
        if kept is None and (folder / state / "maestro").is_dir():
            kept = folder
    return start


def _through_link(path: Path) -> Path:
    """A file Maestro rewrites whole, by replacing it: when it is a symbolic link, its
    target, so the write goes where the link points instead of replacing the link with a
    copy (``config`` refuses a link that leads out of the project)."""
    return path.resolve() if path.is_symlink() else path


@dataclass(frozen=True)
class ProjectPaths:
    """Locations inside one project."""

    root: Path
    state_dir_name: str = DEFAULT_STATE_DIR

    @property
    def state_dir(self) -> Path:
        path = Path(self.state_dir_name)
        return path if path.is_absolute() else self.root / path

    @property
    def plan(self) -> Path:
        return _through_link(self.state_dir / "MAESTRO.md")

    @property
    def log(self) -> Path:
        return _through_link(self.state_dir / "MAESTRO-LOG.md")

    @property
    def config_file(self) -> Path:
        return self.state_dir / "maestro.toml"

    @property
    def dotenv(self) -> Path:
        return self.root / ".env"

    @property
    def machine_dir(self) -> Path:
        """Machine state: runs, sessions, mail, locks."""
        return self.state_dir / "maestro"

    @property
    def private_dir(self) -> Path:
        """Maestro's own records of this project, those it later reads as truth: the
        versions of the plan it wrote, the files runs left, who each session is, what it
        installed. Never in the state dir, whose ``maestro/`` a spoke may write (a Codex
        spoke is given it with ``--add-dir``, for the mailbox; a process it leaves behind
        goes on writing there), but in the user's state folder, one folder per project:
        the project folder's name and a hash of its state dir's full path."""
        state = str(self.state_dir.resolve())
        name = re.sub(r"[^A-Za-z0-9._-]", "", self.root.name)[:32] or "project"
        key = hashlib.sha256(state.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return user_state_dir() / "projects" / f"{name}-{key}"

    @property
    def runs_dir(self) -> Path:
        return self.machine_dir / "runs"

    @property
    def archive_dir(self) -> Path:
        return self.state_dir / "archive"

    @property
    def project_agents_dir(self) -> Path:
        return self.state_dir / "agents"

    @property
    def install_manifest(self) -> Path:
        """What ``maestro install`` wrote in this project: install and uninstall remove the
        files it lists, so it is one of Maestro's own records (``private_dir``)."""
        return self.private_dir / "install-manifest.json"


def user_home(env: Mapping[str, str] | None = None) -> Path:
    return Path(_environ(env).get("HOME") or Path.home()).expanduser()


def user_state_dir(env: Mapping[str, str] | None = None, *, create: bool = False) -> Path:
    """Per-user state: Maestro's own records of each project (``private_dir``), the
    ``maestro`` its spokes' shells run, where it found the CLIs, crash logs, the user-scope
    install manifest. With ``create`` it is made first, each missing level readable and
    writable by this user alone; one that cannot be made (HOME is no folder this user can
    write) is refused in one line."""
    environ = _environ(env)
    if environ.get("MAESTRO_HOME"):
        folder = Path(environ["MAESTRO_HOME"]).expanduser()
    else:
        base = _xdg(environ, "XDG_STATE_HOME") or str(user_home(environ) / ".local" / "state")
        folder = Path(base) / "maestro"
    if create:
        try:
            make_private(folder)
        except OSError as exc:
            raise ConfigError(
                f"Maestro's state folder {folder} cannot be made ({exc.strerror}: {exc.filename}).",
                "set HOME to your home folder, or MAESTRO_HOME to a folder you can write.",
            ) from None
    return folder


def _xdg(environ: Mapping[str, str], name: str) -> str | None:
    """An XDG base folder from the environment; a relative one is ignored, as the XDG
    specification says (it would name a folder in whatever project the command runs in)."""
    value = environ.get(name)
    return value if value and Path(value).is_absolute() else None

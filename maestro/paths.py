"""Every filesystem location Maestro uses, from one place, overridable by environment.

Project files live under the state dir (default ``.ai``) of the project root. The project
root is ``$MAESTRO_PROJECT_DIR`` if set, else the nearest ancestor of the working
directory holding the state dir or a ``.git``, else the working directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
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
        return user_state_dir(project=self) / "projects" / f"{name}-{key}"

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


def user_state_dir(
    env: Mapping[str, str] | None = None,
    *,
    create: bool = False,
    project: ProjectPaths | None = None,
) -> Path:
    """Per-user state: Maestro's own records of each project (``private_dir``), the
    ``maestro`` its spokes' shells run, where it found the CLIs, crash logs, the user-scope
    install manifest. Maestro runs and trusts what it keeps there, so the folder must be
    this user's alone (``_check_own``; ``project``: the one at work, which is checked as
    well). With ``create`` it is made first, each missing level readable and writable by
    this user alone; one that cannot be made (HOME is no folder this user can write) is
    refused in one line, as is one that fails the check."""
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
    _check_own(folder, environ, project)
    return folder


def _check_own(folder: Path, environ: Mapping[str, str], project: ProjectPaths | None) -> None:
    """Refuse a user state folder that a spoke or another user could write: one inside a
    project's state dir or the project at work (where spokes write: the mail, the
    sessions, the work tree), or leading there by a symbolic link; one owned by another
    user (``sudo`` with HOME kept); one that others may write. A link to a folder of the
    user's own elsewhere is followed. A folder not made yet has only its place to check."""
    real = Path(os.path.realpath(folder))
    inside = _project_holding(real, environ, project)
    if inside is not None:
        raise ConfigError(
            f"Maestro's state folder {folder} lies inside the project {inside} (at {real}), "
            "where spokes can write.",
            "make it a folder of its own outside every project (remove the link), or set "
            "MAESTRO_HOME to one.",
        )
    try:
        info = real.stat()
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(
            f"Maestro's state folder {folder} is a file, not a folder.",
            f"move {real} elsewhere (Maestro then makes the folder), or set MAESTRO_HOME to a "
            "folder of your own.",
        )
    if info.st_uid != os.getuid():
        raise ConfigError(
            f"Maestro's state folder {folder} belongs to another user (uid {info.st_uid}).",
            "set HOME to your own home folder (`sudo -H`), or MAESTRO_HOME to a folder of yours.",
        )
    if info.st_mode & 0o022:
        raise ConfigError(
            f"Maestro's state folder {folder} can be written by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}).",
            f"run `chmod go-w {real}`, or set MAESTRO_HOME to a folder of your own.",
        )


def _project_holding(
    path: Path, environ: Mapping[str, str], project: ProjectPaths | None
) -> Path | None:
    """The project ``path`` lies in: the one at work, by its state dir or its work tree
    (unless that holds the home folder too: Maestro run in ``~`` or ``/``), or any
    project by its state dir, a ``.ai`` holding ``MAESTRO.md`` or ``maestro/``."""
    if project is not None:
        root = project.root.resolve()
        if path.is_relative_to(project.state_dir.resolve()) or (
            path.is_relative_to(root) and not user_home(environ).resolve().is_relative_to(root)
        ):
            return project.root
    for folder in (path, *path.parents):
        if folder.name == DEFAULT_STATE_DIR and (
            (folder / "MAESTRO.md").is_file() or (folder / "maestro").is_dir()
        ):
            return folder.parent
    return None


def _xdg(environ: Mapping[str, str], name: str) -> str | None:
    """An XDG base folder from the environment; a relative one is ignored, as the XDG
    specification says (it would name a folder in whatever project the command runs in)."""
    value = environ.get(name)
    return value if value and Path(value).is_absolute() else None

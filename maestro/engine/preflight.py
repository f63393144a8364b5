"""Refusing up front, in one line, what cannot work where Maestro was started.

A host's shell tool may run Maestro in a sandbox (Codex: each command in its own PID and
network namespaces, read-only by default). There a run is doomed before it starts: the
state cannot be written, a detached engine dies with the command that started it, or
the spokes cannot reach their providers. Each verb that starts spokes asks here first,
before it writes anything, and gets one error naming the host's flag or setting that
works. The host facts live in each CLI's module (``maestro.clis``, its ``Host``).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from maestro.errors import MaestroError
from maestro.install.host import hub_sandbox
from maestro.paths import ProjectPaths, user_state_dir

_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


class CannotRunHere(MaestroError):
    """This environment cannot do what was asked (a sandbox, a read-only project)."""


def writable(folder: Path) -> bool:
    """Can a file be created in ``folder`` (or, if it does not exist yet, in the nearest
    folder above it)? Tried for real: a mount, a sandbox or an ACL may say no where the
    mode bits say yes. The probe file is removed at once."""
    probe_dir = folder
    while not probe_dir.is_dir() and probe_dir != probe_dir.parent:
        probe_dir = probe_dir.parent
    try:
        fd, name = tempfile.mkstemp(prefix=".maestro-probe-", dir=probe_dir)
    except OSError as exc:
        if exc.errno in _READ_ONLY:
            return False
        raise
    os.close(fd)
    os.unlink(name)
    return True


def refuse_doomed(
    paths: ProjectPaths,
    env: Mapping[str, str],
    *,
    detach: bool = False,
    network: bool = True,
    write: bool = True,
) -> None:
    """Raise CannotRunHere if this run cannot work here. ``detach``: the engine must
    outlive this command; ``network``: spokes that call a provider will be started;
    ``write``: the project's state will be written."""
    sandbox = hub_sandbox(env)
    problems = []
    if write and not writable(paths.machine_dir):
        problems.append(f"{paths.root} cannot be written here")
    if sandbox is not None:
        if detach and not sandbox.keeps_detached:
            problems.append("a detached engine would be stopped when this command ends")
        if network and not sandbox.network:
            problems.append("spokes would have no network to reach their models")
    if not problems:
        user_state_dir(env, create=True)  # where the shim the spokes' shells run is kept
        return
    where = f"{sandbox.host}'s command sandbox" if sandbox else "this environment"
    fix = sandbox.fix if sandbox else f"run Maestro where {paths.root} can be written."
    raise CannotRunHere(f"{where} cannot run this: {'; '.join(problems)}.", fix)


def read_only_error(exc: OSError, env: Mapping[str, str]) -> MaestroError:
    """A write refused by a read-only file system, as one line with the fix."""
    sandbox = hub_sandbox(env)
    what = exc.filename or "a file"
    if sandbox is not None:
        return CannotRunHere(
            f"cannot write {what}: {sandbox.host}'s command sandbox is read-only here.", sandbox.fix
        )
    return CannotRunHere(
        f"cannot write {what}: the file system is read-only here.",
        "run Maestro where the project can be written (check the mount or the sandbox).",
    )

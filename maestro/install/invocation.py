"""How the installed command files run Maestro, whatever environment it lives in.

A host's shell tool runs commands with the host's PATH, which need not contain the
virtualenv, pipx venv or ``~/.local/bin`` Maestro was installed into. So the command
files never say a bare ``maestro``: install time finds a command line that runs *this*
Maestro from a shell with only the system PATH, and renders it into every file.

Candidates, first that works wins:
1. the ``maestro`` script next to the running interpreter (venv, pipx; pipx's link in
   ``~/.local/bin`` first, being shorter);
2. the ``maestro`` script in the interpreter's user scripts folder (``pip install --user``);
3. ``<python> -P -m maestro`` (``-P``: the current folder cannot shadow the package);
4. the same with ``PYTHONPATH`` set, for a source checkout that was never installed.
Each candidate is proved by running ``<candidate> --version`` from ``/`` with the system
PATH and no ``PYTHONPATH``, expecting this version.
"""

from __future__ import annotations

import os
import shlex
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

from maestro import __version__
from maestro.errors import InstallError, MaestroError
from maestro.process import run_process

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def _script(folder: str | None) -> Path | None:
    script = Path(folder) / "maestro" if folder else None
    return script if script and script.is_file() and os.access(script, os.X_OK) else None


def candidates() -> list[list[str]]:
    own = _script(sysconfig.get_path("scripts"))
    user = _script(sysconfig.get_path("scripts", f"{os.name}_user"))
    found: list[list[str]] = []
    if own and user and user.resolve() == own.resolve():
        # pipx links ~/.local/bin/maestro to its venv's script: the same program, and a
        # shorter path costs fewer tokens in every command file.
        found.append([str(user)])
    found += [[str(script)] for script in dict.fromkeys(s for s in (own, user) if s)]
    found.append(_module())
    found.append(["env", f"PYTHONPATH={_source()}", *_module()])
    return found


def _module() -> list[str]:
    return [sys.executable, "-P", "-m", "maestro"]


def _source() -> str:
    """The folder holding the ``maestro`` package (site-packages, or a source checkout)."""
    return str(Path(__file__).resolve().parent.parent.parent)


def here() -> list[str]:
    """The words that run this very Maestro, found without running anything: the script
    installed beside this interpreter, else this interpreter with the package's folder on
    PYTHONPATH (a source checkout). For the ``maestro`` on a spoke's PATH
    (``bus.workers.spoke_env``), which a dispatch must not wait on a proof to write."""
    own = _script(sysconfig.get_path("scripts"))
    if own is not None:
        return [str(own)]
    return ["env", f"PYTHONPATH={_source()}", *_module()]


def runs(argv: list[str], *, shell_path: str = SYSTEM_PATH) -> bool:
    """Does ``argv --version`` print this Maestro's version from a bare shell?"""
    env = {"PATH": shell_path, "HOME": os.environ.get("HOME", "/"), "LANG": "C.UTF-8"}
    try:
        outcome = run_process([*argv, "--version"], cwd="/", env=env, timeout_s=60, grace_s=1.0)
    except MaestroError:
        return False
    return outcome.exit_code == 0 and outcome.stdout.strip() == f"maestro {__version__}"


def current() -> str:
    """The shell words that started this very process, for a command line Maestro tells
    its caller to run next (``next:``): the same program, so a host's rule that allowed
    this call (Claude's ``allowed-tools``, Gemini's ``--allowed-tools``) allows that one.
    The forms are those of :func:`candidates`; nothing is run to prove them."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "maestro" and script.is_file():
        return shlex.quote(str(script.absolute()))
    source = _source()
    if source in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        return shlex.join(["env", f"PYTHONPATH={source}", *_module()])
    return shlex.join(_module())


@lru_cache(maxsize=1)
def resolve() -> str:
    """The shell words that run this Maestro, proved to work without the caller's PATH."""
    tried = candidates()
    for argv in tried:
        if runs(argv):
            return shlex.join(argv)
    raise InstallError(
        "found no way to run this Maestro from a shell without the current PATH "
        f"(tried: {'; '.join(shlex.join(a) for a in tried)}).",
        "install Maestro with pipx or pip (installers/install.sh does), then run `maestro install` again.",
    )

"""The command files run Maestro by a command line proved to work without the caller's
PATH: a host's shell may not have the venv Maestro lives in."""

import os
import stat
import subprocess
import sysconfig

import pytest

from maestro import __version__
from maestro.install import invocation


@pytest.fixture(autouse=True)
def fresh():
    invocation.resolve.cache_clear()
    yield
    invocation.resolve.cache_clear()


def shell(command, cwd):
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"]}
    return subprocess.run(
        ["sh", "-c", command],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_resolved_invocation_runs_from_a_bare_shell(tmp_path):
    words = invocation.resolve()
    done = shell(f"{words} --version", tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"maestro {__version__}", done.stderr
    done = shell(f"{words} skill maestro-route", tmp_path)
    assert done.returncode == 0 and "Routing a task" in done.stdout


def _script(folder, body):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "maestro"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_script_printing_another_version_is_not_used(tmp_path, monkeypatch):
    fake = _script(tmp_path / "bin", "echo 'maestro 0.0.1'\n")
    monkeypatch.setattr(sysconfig, "get_path", lambda name, scheme=None: str(fake.parent))
    words = invocation.resolve()
    assert str(fake) not in words and "-m maestro" in words


def test_pipx_link_is_preferred_to_the_long_venv_path(tmp_path, monkeypatch):
    venv_script = _script(
        tmp_path / "pipx/venvs/maestro-orchestra/bin", f"echo 'maestro {__version__}'\n"
    )
    link_dir = tmp_path / "local-bin"
    link_dir.mkdir()
    (link_dir / "maestro").symlink_to(venv_script)
    paths = {None: str(venv_script.parent), f"{os.name}_user": str(link_dir)}
    monkeypatch.setattr(sysconfig, "get_path", lambda name, scheme=None: paths[scheme])
    assert invocation.resolve() == str(link_dir / "maestro")


def test_nothing_runs_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(invocation, "runs", lambda argv, **kw: False)
    from maestro.errors import InstallError

    with pytest.raises(InstallError, match="found no way to run this Maestro") as caught:
        invocation.resolve()
    assert "install.sh" in caught.value.fix

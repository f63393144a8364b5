"""installers/install.sh: POSIX sh (shellcheck), the pipx and the pip routes, and the
hand-over to `maestro install`. Offline: pipx and python are stand-ins that record their
arguments and "install" a `maestro` running this source tree. With MAESTRO_TEST_NETWORK=1
a real `pip install --user` of this tree into a temporary HOME runs too (needs PyPI)."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "installers" / "install.sh"
WRAPPER = f'#!/bin/sh\nexec env PYTHONPATH="{REPO}" "{sys.executable}" -m maestro "$@"\n'


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def run(home: Path, tools: Path, *args: str, **env: str):
    base = {"HOME": str(home), "PATH": f"{tools}:/usr/bin:/bin", "MAESTRO_SOURCE": str(REPO), **env}
    return subprocess.run(
        ["sh", str(SCRIPT), *args],
        cwd=home,
        env=base,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shellcheck_posix_sh():
    done = subprocess.run(
        ["shellcheck", "-s", "sh", str(SCRIPT)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def fake_pipx(tools: Path, home: Path) -> Path:
    log = tools / "pipx.log"
    executable(
        tools / "pipx",
        f"""#!/bin/sh
echo "$@" >> "{log}"
case "$1" in
  install) mkdir -p "$HOME/.local/bin" && cat > "$HOME/.local/bin/maestro" <<'EOF'
{WRAPPER}EOF
    chmod +x "$HOME/.local/bin/maestro" ;;
  environment) echo "$HOME/.local/bin" ;;
esac
""",
    )
    return log


def test_pipx_route_then_maestro_install(home, tmp_path):
    tools = tmp_path / "tools"
    log = fake_pipx(tools, home)
    done = run(home, tools, "--host", "claude", "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines()[0] == f"install --force {REPO}"
    plan = home / ".claude/commands/maestro/plan.md"
    assert plan.is_file()
    # Which command line the files carry depends on the environment Maestro runs in (a
    # real pipx link resolves to the running interpreter's own script); what must hold
    # is that it runs this Maestro from a shell without the installer's PATH.
    invocation = re.search(r"`([^`]+?) plan --schema`", plan.read_text()).group(1)
    bare = subprocess.run(
        [*shlex.split(invocation), "--version"],
        cwd="/",
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert bare.returncode == 0 and bare.stdout.startswith("maestro "), bare.stderr
    assert "In Claude Code: /maestro:plan <goal>" in done.stdout


def test_without_arguments_it_only_installs(home, tmp_path):
    tools = tmp_path / "tools"
    fake_pipx(tools, home)
    done = run(home, tools)
    assert done.returncode == 0
    assert f"Next: {home}/.local/bin/maestro install --host" in done.stdout
    assert not (home / ".claude").exists()


def test_pip_route_when_there_is_no_pipx(home, tmp_path):
    tools = tmp_path / "tools"
    log = tools / "python.log"
    executable(
        tools / "fakepython",
        f"""#!/bin/sh
echo "$@" >> "{log}"
if [ "$1" = "-c" ]; then echo "$HOME/.local/bin"; exit 0; fi
mkdir -p "$HOME/.local/bin" && cat > "$HOME/.local/bin/maestro" <<'EOF'
{WRAPPER}EOF
chmod +x "$HOME/.local/bin/maestro"
""",
    )
    done = run(home, tools, "--host", "gemini", "--scope", "user", PYTHON="fakepython")
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines()[0] == f"-m pip install --user --upgrade {REPO}"
    assert (home / ".gemini/commands/maestro/run.toml").is_file()


def test_pip_failure_names_the_fix(home, tmp_path):
    tools = tmp_path / "tools"
    executable(
        tools / "fakepython",
        "#!/bin/sh\necho 'error: externally-managed-environment' >&2\nexit 1\n",
    )
    done = run(home, tools, "--host", "claude", PYTHON="fakepython")
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "Fix: install pipx (apt install pipx, or brew install pipx) and run this again."
    )


def test_bad_maestro_options_come_back_as_maestro_errors(home, tmp_path):
    tools = tmp_path / "tools"
    fake_pipx(tools, home)
    done = run(home, tools, "--host", "vim")
    assert done.returncode == 1 and "invalid choice" in done.stderr


@pytest.mark.skipif(
    os.environ.get("MAESTRO_TEST_NETWORK") != "1", reason="set MAESTRO_TEST_NETWORK=1 (needs PyPI)"
)
def test_real_pip_user_install_into_a_temporary_home(home, tmp_path):
    base = getattr(sys, "_base_executable", sys.executable)  # pip refuses --user inside a venv
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "python3").symlink_to(base)
    done = run(home, tools, "--host", "codex", "--scope", "user")
    assert done.returncode == 0, done.stderr[-2000:]
    skill = home / ".codex/skills/maestro/SKILL.md"
    assert skill.is_file()
    status = subprocess.run(
        ["sh", "-c", f"{home}/.local/bin/maestro skill route"],
        cwd=home,
        check=False,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert status.returncode == 0 and "Routing a task" in status.stdout


def test_pipx_failure_names_the_fix(home, tmp_path):
    tools = tmp_path / "tools"
    executable(tools / "pipx", "#!/bin/sh\necho 'Fatal error from pip' >&2\nexit 1\n")
    done = run(home, tools, "--host", "claude")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("install.sh: pipx could not install") and "Fix:" in last

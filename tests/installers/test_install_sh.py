"""installers/install.sh: POSIX sh (shellcheck), the uv, pipx and virtual-environment
routes, and the hand-over to `maestro install`. Offline: uv, pipx and python are
stand-ins that record their arguments and "install" a `maestro` running this source
tree. With MAESTRO_TEST_NETWORK=1 the README's first command runs for real (needs PyPI)
under Debian's "externally managed" python3, and the demo's hints run after it as printed.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maestro import __version__

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "installers" / "install.sh"
WRAPPER = f'#!/bin/sh\nexec env PYTHONPATH="{REPO}" "{sys.executable}" -m maestro "$@"\n'


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def run(home: Path, tools: Path, *args: str, script: Path = SCRIPT, **env: str):
    base = {"HOME": str(home), "PATH": f"{tools}:/usr/bin:/bin", "MAESTRO_SOURCE": str(REPO), **env}
    return subprocess.run(
        ["sh", str(script), *args],
        cwd=home,
        env={k: v for k, v in base.items() if v is not None},
        capture_output=True,
        text=True,
        timeout=300,
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


def fake_tool(tools: Path, name: str, install: str, bin_query: str) -> Path:
    """A uv or pipx: ``install`` puts a maestro in ~/.local/bin, ``bin_query`` prints it."""
    log = tools / f"{name}.log"
    executable(
        tools / name,
        f"""#!/bin/sh
echo "$@" >> "{log}"
case "$*" in
  "{install}"*) mkdir -p "$HOME/.local/bin" && cat > "$HOME/.local/bin/maestro" <<'EOF'
{WRAPPER}EOF
    chmod +x "$HOME/.local/bin/maestro" ;;
  "{bin_query}") echo "$HOME/.local/bin" ;;
esac
""",
    )
    return log


def fake_pipx(tools: Path) -> Path:
    return fake_tool(tools, "pipx", "install", "environment --value PIPX_BIN_DIR")


def fake_uv(tools: Path) -> Path:
    return fake_tool(tools, "uv", "tool install", "tool dir --bin")


def test_pipx_route_then_maestro_install(home, tmp_path):
    tools = tmp_path / "tools"
    log = fake_pipx(tools)
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


def test_uv_first_and_the_clone_by_default(home, tmp_path):
    tools = tmp_path / "tools"
    uv, pipx = fake_uv(tools), fake_pipx(tools)
    done = run(home, tools, MAESTRO_SOURCE=None)
    assert done.returncode == 0, done.stderr
    # The clone holding the script, built again on every run (an upgrade after a pull).
    assert uv.read_text().splitlines() == [
        f"tool install --force --reinstall {REPO}",
        "tool dir --bin",
    ]
    assert not pipx.exists()


def test_without_arguments_it_installs_and_says_how_to_reach_it(home, tmp_path):
    tools = tmp_path / "tools"
    fake_pipx(tools)
    done = run(home, tools)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0] == f"Installed maestro {__version__}: {home}/.local/bin/maestro"
    assert lines[1] == (
        f'{home}/.local/bin is not on PATH: export PATH="{home}/.local/bin:$PATH" here and in '
        "your shell startup file."
    )
    assert lines[2].startswith("Next: maestro demo")
    assert not (home / ".claude").exists()
    on_path = run(home, tools, PATH=f"{home}/.local/bin:{tools}:/usr/bin:/bin")
    assert "not on PATH" not in on_path.stdout


def refusing_python(tools: Path) -> Path:
    """A python3 as Debian's: pip refuses to install into it (PEP 668), `-m venv` makes a
    virtual environment whose own pip installs (here: a `maestro` running this tree)."""
    log = tools / "python.log"
    venv_python = f"""#!/bin/sh
echo "venv: $@" >> "{log}"
bin=$(dirname "$0")
cat > "$bin/maestro" <<'EOF'
{WRAPPER}EOF
chmod +x "$bin/maestro"
"""
    executable(
        tools / "python3",
        f"""#!/bin/sh
echo "$@" >> "{log}"
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin" && cat > "$3/bin/python" <<'OUTER'
{venv_python}OUTER
  chmod +x "$3/bin/python"; exit 0
fi
echo 'error: externally-managed-environment' >&2
exit 1
""",
    )
    return log


def test_externally_managed_python_gets_a_venv_and_a_link_on_path(home, tmp_path):
    tools = tmp_path / "tools"
    log = refusing_python(tools)
    data = tmp_path / "data"
    done = run(home, tools, "--host", "gemini", "--scope", "user", XDG_DATA_HOME=str(data))
    assert done.returncode == 0, done.stderr
    venv = data / "maestro/venv"
    assert log.read_text().splitlines() == [
        f"-m venv {venv}",
        f"venv: -m pip install --upgrade {REPO}",
    ]
    link = home / ".local/bin/maestro"
    assert link.is_symlink() and link.readlink() == venv / "bin/maestro"
    assert (home / ".gemini/commands/maestro/run.toml").is_file()
    # A new shell with ~/.local/bin on PATH finds it by name.
    found = subprocess.run(
        ["sh", "-c", "cd / && maestro --version"],
        env={"HOME": str(home), "PATH": f"{home}/.local/bin:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.returncode == 0 and found.stdout == f"maestro {__version__}\n", found.stderr
    again = run(home, tools, XDG_DATA_HOME=str(data))  # an upgrade: same venv, same link
    assert again.returncode == 0 and link.readlink() == venv / "bin/maestro"


def test_a_maestro_in_the_way_is_not_replaced(home, tmp_path):
    tools = tmp_path / "tools"
    refusing_python(tools)
    executable(home / ".local/bin/maestro", "#!/bin/sh\necho someone else's\n")
    done = run(home, tools)
    assert done.returncode == 1
    assert "is not this installer's link" in done.stderr and "Fix:" in done.stderr
    assert "someone else's" in (home / ".local/bin/maestro").read_text()


def test_venv_failure_names_the_fix(home, tmp_path):
    tools = tmp_path / "tools"
    executable(tools / "fakepython", "#!/bin/sh\necho 'ensurepip is not available' >&2\nexit 1\n")
    done = run(home, tools, "--host", "claude", PYTHON="fakepython")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("install.sh: fakepython could not make a virtual environment")
    assert "apt install python3-venv" in last


def test_outside_a_clone_without_a_source_says_how_to_name_one(home, tmp_path):
    alone = tmp_path / "install.sh"
    shutil.copy(SCRIPT, alone)
    done = run(home, tmp_path / "tools", script=alone, MAESTRO_SOURCE=None)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "MAESTRO_SOURCE=git+https://" in done.stderr


def test_piped_to_sh_it_installs_no_clone_it_happens_to_sit_in(home, tmp_path):
    tools = tmp_path / "tools"
    log = fake_pipx(tools)
    done = subprocess.run(
        ["sh"],
        input=SCRIPT.read_text(),
        cwd=REPO / "installers",  # `dirname sh`/.. would be this repository
        env={"HOME": str(home), "PATH": f"{tools}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "MAESTRO_SOURCE=git+https://" in done.stderr
    assert not log.exists()


def test_bad_maestro_options_come_back_as_maestro_errors(home, tmp_path):
    tools = tmp_path / "tools"
    fake_pipx(tools)
    done = run(home, tools, "--host", "vim")
    assert done.returncode == 1 and "invalid choice" in done.stderr


def test_pipx_failure_names_the_fix(home, tmp_path):
    tools = tmp_path / "tools"
    executable(tools / "pipx", "#!/bin/sh\necho 'Fatal error from pip' >&2\nexit 1\n")
    done = run(home, tools, "--host", "claude")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("install.sh: pipx could not install") and "Fix:" in last


def _externally_managed(python: str) -> bool:
    """A python3 of 3.11+ that refuses pip installs into itself (PEP 668)."""
    probe = (
        "import sys, sysconfig, pathlib; sys.exit(sys.version_info < (3, 11) or not "
        "pathlib.Path(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED').exists())"
    )
    return subprocess.run([python, "-c", probe], check=False).returncode == 0


def _hints(text: str) -> list[str]:
    return re.findall(r"`((?:maestro|cd) [^`]+)`", text)


@pytest.mark.skipif(
    os.environ.get("MAESTRO_TEST_NETWORK") != "1", reason="set MAESTRO_TEST_NETWORK=1 (needs PyPI)"
)
@pytest.mark.skipif(
    not _externally_managed("/usr/bin/python3"),
    reason="needs an externally managed /usr/bin/python3 (PEP 668), as Debian's",
)
def test_readme_first_command_then_the_demos_hints_verbatim(home, tmp_path):
    """A fresh copy of this tree, Debian's python3 (pip refuses it), no uv, no pipx: the
    README's first command, then what the demo prints to try next, each as printed, with
    the PATH the README's command left in its shell."""
    from tests.test_readme import setup_commands

    clone = tmp_path / "clone"
    shutil.copytree(
        REPO,
        clone,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "__pycache__", "*.egg-info", "build"
        ),
    )
    command = setup_commands()[0]
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    first = subprocess.run(
        ["sh", "-c", f'{command} && echo "PATH=$PATH"'],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    assert "finished: 6 done" in first.stdout
    env["PATH"] = first.stdout.splitlines()[-1].removeprefix("PATH=")
    tried, hints = [], _hints(first.stdout)
    while hints:
        hint = hints.pop(0)
        done = subprocess.run(
            ["sh", "-c", hint], cwd=home, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (hint, done.stderr)
        tried.append(hint)
        hints += [h for h in _hints(done.stdout) if h not in tried and h not in hints]
    assert any(h.startswith("cd ") and h.endswith("&& maestro status") for h in tried), tried

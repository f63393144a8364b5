"""The README's promise to a newcomer: exactly two set-up commands, and CI runs its test command."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Set up\n(.*?)(?=^## )", text, re.MULTILINE | re.DOTALL).group(1)
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.DOTALL)]


def test_exactly_two_setup_commands_install_and_demo_then_tests():
    install, tests = setup_commands()
    # The installer puts `maestro` in ~/.local/bin; the same shell then finds it by name, so
    # the demo's hints (`cd ... && maestro status`) work as printed.
    assert install.startswith("sh installers/install.sh && ")
    assert 'export PATH="$HOME/.local/bin:$PATH"' in install and install.endswith("&& maestro demo")
    assert "'.[test]'" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command():
    _, tests = setup_commands()
    command = tests.split("&&")[-1].strip().replace(".venv/bin/", "")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command in ci.splitlines()


def test_readme_installs_the_cli_versions_the_real_host_tests_pin():
    from tests.realcli.hostenv import npm_specs

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [
        ln.strip() for ln in text.splitlines() if ln.strip().startswith("npm install --prefix")
    ]
    assert line.split()[4:] == npm_specs()


def test_readme_states_the_execution_logs_default():
    from maestro.defaults import SETTINGS_BY_KEY

    assert SETTINGS_BY_KEY["log"].default == "summary"
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "execution log, one row per dispatch by default" in text
    assert "MAESTRO_LOG=off` writes none" in text

"""Environments for running the real host CLIs against the fake model server (HOSTS.md
section 4): a fresh HOME per case, the base URL pointed at the loopback server, and every
background call (updates, telemetry, error reports) switched off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PINNED = {"claude": "2.1.332", "gemini": "0.61.0", "codex": "0.171.0"}
NPM_PACKAGES = {
    "claude": "@anthropic-ai/claude-code",
    "gemini": "@google/gemini-cli",
    "codex": "@openai/codex",
}


# Read at import: the suite's autouse fixture clears MAESTRO_* from each test's environment.
REALCLI_DIR = os.environ.get("MAESTRO_REALCLI_DIR")
# CI sets it: a pinned CLI that is missing or of another version fails instead of skipping.
REQUIRED = os.environ.get("MAESTRO_REQUIRE_REALCLI") == "1"
# .ci/run's look-ahead sets it: the prefix holds each CLI's newest release, which the
# tests run whatever its version (what users who install today get) instead of the pins.
NEWEST = os.environ.get("MAESTRO_REALCLI_NEWEST") == "1"


def npm_specs(versions: Mapping[str, str] = PINNED) -> list[str]:
    """What `npm install` needs for these versions of the CLIs (the pins unless told):
    package@version, one each."""
    return [f"{NPM_PACKAGES[name]}@{version}" for name, version in versions.items()]


def newest() -> dict[str, str]:
    """Each CLI's newest release, as the npm registry's `latest` tag names it."""
    return {
        name: subprocess.run(
            ["npm", "view", package, "version"],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
        for name, package in NPM_PACKAGES.items()
    }


def outdated(prefix: Path, versions: Mapping[str, str] = PINNED) -> list[str]:
    """The specs (of the pins unless told) an npm prefix does not hold at exactly their
    version."""
    stale = []
    for name, version in versions.items():
        manifest = prefix / "node_modules" / NPM_PACKAGES[name] / "package.json"
        try:
            installed = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        except (OSError, ValueError):
            installed = None
        if installed != version or not (prefix / "node_modules" / ".bin" / name).exists():
            stale.append(f"{NPM_PACKAGES[name]}@{version}")
    return stale


def cli_dir() -> Path | None:
    """The npm prefix holding the pinned CLIs: $MAESTRO_REALCLI_DIR/node_modules/.bin."""
    base = REALCLI_DIR
    if not base:
        return None
    folder = Path(base) / "node_modules" / ".bin"
    return folder if folder.is_dir() else None


def executable(name: str) -> Path | None:
    folder = cli_dir()
    path = folder / name if folder else None
    return path if path and path.exists() else None


def base_env(home: Path, path_dirs: list[str]) -> dict[str, str]:
    keep = {k: os.environ[k] for k in ("LANG", "TERM") if k in os.environ}
    # Each case's own temporary folder, inside its HOME: Codex refuses to make the helper
    # its bubblewrap sandbox runs (codex-linux-sandbox) in a CODEX_HOME under the
    # temporary folder, and the case's HOME is under the suite's (tmp_path).
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return {
        **keep,
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PATH": os.pathsep.join(path_dirs),
        "NO_COLOR": "1",
    }


def claude_env(home: Path, url: str, path_dirs: list[str]) -> dict[str, str]:
    return {
        **base_env(home, path_dirs),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        # The suite may run as root (containers); the Bash tool still needs no bypass.
        "IS_SANDBOX": "1",
    }


def gemini_env(home: Path, url: str, path_dirs: list[str]) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "settings.json").exists():
        (folder / "settings.json").write_text(json.dumps(settings))
    return {
        **base_env(home, path_dirs),
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": "fake-key",
    }


def codex_env(home: Path, url: str, path_dirs: list[str]) -> dict[str, str]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    config = codex_home / "config.toml"
    if not config.exists():
        config.write_text(
            'model = "gpt-5.5"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n\n'
            "[model_providers.fake]\n"
            f'name = "Fake"\nbase_url = "{url}/v1"\nenv_key = "FAKE_API_KEY"\nwire_api = "responses"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n\n"
            "[analytics]\nenabled = false\n\n[features]\nplugins = false\n"
        )
    return {**base_env(home, path_dirs), "CODEX_HOME": str(codex_home), "FAKE_API_KEY": "fake-key"}


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 90) -> Outcome:
    proc = subprocess.run(
        argv,
        check=False,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def node_dir() -> str:
    node = shutil.which("node")
    return str(Path(node).parent) if node else "/usr/bin"


def needs(name: str) -> Path:
    """The pinned CLI ``name``, or skip the test saying how to get it."""
    missing = pytest.fail if REQUIRED else pytest.skip
    exe = executable(name)
    if exe is None:
        missing(
            f"{name} not installed: set MAESTRO_REALCLI_DIR to an npm prefix holding the pinned CLIs"
        )
    assert exe is not None
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": node_dir() + ":/usr/bin:/bin", "HOME": home}
        version = run([str(exe), "--version"], cwd=Path(home), env=env).stdout
    if PINNED[name] not in version and not NEWEST:
        missing(f"{name} is {version.strip()!r}, these tests pin {PINNED[name]}")
    return exe


def shell_path() -> list[str]:
    """The host's PATH: its own folder, node, the system; not Maestro's venv."""
    return [str(cli_dir()), node_dir(), "/usr/bin", "/bin"]


if __name__ == "__main__":  # for .ci/run: `python -m tests.realcli.hostenv [--newest] [PREFIX]`
    import sys

    # The pinned specs, or with --newest each CLI's newest release; with a prefix, only
    # those it lacks (nothing when it is up to date).
    args = sys.argv[1:]
    versions = newest() if args[:1] == ["--newest"] else PINNED
    prefix = [a for a in args if a != "--newest"]
    print("\n".join(outdated(Path(prefix[0]), versions) if prefix else npm_specs(versions)))

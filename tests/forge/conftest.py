"""A FakeHub per test, a project whose ``origin`` is its repository, and the environment
that lets the real gh and git trust it and sign in to it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from maestro.forge import Forge
from tests.forge.fakehub import TOKEN, FakeHub


@pytest.fixture(scope="session")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the openssl CLI."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        + [
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
def hub(gh_cli, certificate, tmp_path, monkeypatch):
    """The fake, running; the test fails if gh asked it anything it does not know."""
    cert, key = certificate
    fake = FakeHub(tmp_path / "hub", cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # gh (Go's crypto/x509 reads it on Linux)
    monkeypatch.setenv("GIT_SSL_CAINFO", str(cert))
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", TOKEN)  # gh's sign-in for a host not github.com
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # gh caches run logs under $TMPDIR/gh-cli-cache
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "GH_REPO", "GH_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield fake
    fake.stop()
    assert not fake.unknown, fake.unknown


@pytest.fixture
def repo(hub, tmp_path) -> Path:
    """A project with one commit on main, its ``origin`` the fake's repository, main pushed."""
    root = tmp_path / "proj"
    root.mkdir()
    git = ["git", "-C", str(root)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "README.md").write_text("app\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    subprocess.run([*git, "remote", "add", "origin", hub.url], check=True)
    subprocess.run([*git, "push", "-q", "origin", "main"], check=True, env=os.environ)
    return root


def commit(root: Path, branch: str, name: str, text: str) -> str:
    """A commit on ``branch`` (made from main when new) changing ``name``; its sha."""
    git = ["git", "-C", str(root)]
    exists = subprocess.run(
        [*git, "rev-parse", "-q", "--verify", branch], capture_output=True, check=False
    )
    subprocess.run(
        [*git, "checkout", "-q", *([] if exists.returncode == 0 else ["-b"]), branch], check=True
    )
    (root / name).write_text(text)
    subprocess.run([*git, "add", name], check=True)
    subprocess.run([*git, "commit", "-q", "-m", f"change {name}"], check=True)
    return subprocess.check_output([*git, "rev-parse", "HEAD"], text=True).strip()


@pytest.fixture
def forge(repo) -> Forge:
    return Forge(repo, timeout=20)

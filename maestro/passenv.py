"""The environment Maestro gives every process it starts for a plan: an allow-list.

A spoke is an agent with a shell, and a validation command is the plan's: neither gets
the person's whole environment (a ``GITHUB_TOKEN``, cloud keys, an npm token, a database
URL), only the names below, a spoke's CLI its own (``Spoke.env_names``), and those of the
``sandbox_env`` setting. A name ending in ``*`` stands for every name it begins.
Whatever Maestro sets for the process itself (its session, the spoke marker, a private
git dir, TMPDIR) is added after this filter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Who the process runs as, where, and how it prints; Maestro's own settings and marks.
BASE = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "MAESTRO_*",
    # Who a commit is by, and where the person's git settings are.
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_GLOBAL",
    # How the network is reached (unconfined, a CLI behind a proxy reaches its model
    # through it; confined, Maestro's own proxy replaces it) and which certificates are
    # trusted there.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "NODE_USE_ENV_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
)
# Where the person's toolchains are: what a build or test in a spoke's shell needs.
TOOLCHAINS = (
    "JAVA_HOME",
    "MAVEN_HOME",
    "M2_HOME",
    "GRADLE_HOME",
    "GRADLE_USER_HOME",
    "ANDROID_HOME",
    "ANDROID_SDK_ROOT",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "GOTOOLCHAIN",
    "CGO_ENABLED",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "CONDA_EXE",
    "PYTHONPATH",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "UV_CACHE_DIR",
    "PIP_CACHE_DIR",
    "NODE_PATH",
    "NODE_OPTIONS",
    "NVM_DIR",
    "NVM_BIN",
    "PNPM_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "VOLTA_HOME",
    "GEM_HOME",
    "GEM_PATH",
    "RBENV_ROOT",
    "DOTNET_ROOT",
    "LD_LIBRARY_PATH",
    "PKG_CONFIG_PATH",
    "CC",
    "CXX",
)


def matches(name: str, patterns: Iterable[str]) -> bool:
    """``name`` is one of ``patterns``, or begins one ending in ``*``."""
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns if p)


def allowed(env: Mapping[str, str], *extra: str) -> dict[str, str]:
    """The entries of ``env`` a process Maestro starts may have: the base set, the
    toolchains' and ``extra`` (names, or prefixes ending in ``*``)."""
    patterns = (*BASE, *TOOLCHAINS, *extra)
    return {k: v for k, v in env.items() if matches(k, patterns)}

"""Helpers the installer tests import."""

from __future__ import annotations

FIXED_INVOCATION = "/opt/maestro venv/bin/maestro"  # a space, so quoting shows in snapshots
# pipx's link (what installers/install.sh gives), and a worst case: a venv deep in a long home.
TYPICAL_INVOCATION = "/home/alice/.local/bin/maestro"
LONG_INVOCATION = (
    "/home/someone-with-a-long-name/.local/share/pipx/venvs/maestro-orchestra/bin/maestro"
)

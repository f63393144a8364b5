"""Shared helpers for the installer tests."""

from __future__ import annotations

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

FIXED_INVOCATION = "/opt/maestro venv/bin/maestro"  # a space, so quoting shows in snapshots
# pipx's link (what installers/install.sh gives), and a worst case: a venv deep in a long home.
TYPICAL_INVOCATION = "/home/alice/.local/bin/maestro"
LONG_INVOCATION = "/home/someone-with-a-long-name/.local/share/pipx/venvs/maestro-orchestra/bin/maestro"


class TextFile(SingleFileSnapshotExtension):
    """One readable text file per snapshot."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextFile)

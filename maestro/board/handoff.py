"""The page `maestro board` opens a browser on: a private file that sends the browser on
to the board's URL, token and all. A browser's command line is public (every user of the
machine reads it in the process list), so the token never goes there: only this file's
path does, and the file is readable by its owner alone (0600, in a 0700 folder of its
own) and removed as soon as the board's page has used the token, or when the board stops.
"""

from __future__ import annotations

import contextlib
import html
import os
import tempfile
from pathlib import Path

PAGE = """<!doctype html>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0;url={url}">
<title>Maestro board</title>
<p><a href="{url}">Open the board</a></p>
"""


def write(url: str) -> Path:
    """A new private file that redirects to ``url``."""
    folder = Path(tempfile.mkdtemp(prefix="maestro-board-"))  # 0700
    path = folder / "open.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(PAGE.format(url=html.escape(url, quote=True)))
    return path


def remove(path: Path) -> None:
    """The file and its folder gone (either may be already)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    with contextlib.suppress(OSError):
        path.parent.rmdir()

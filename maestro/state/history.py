"""The versions of the plan Maestro wrote, so a save from an older copy can be merged.

A person may keep `.ai/MAESTRO.md` open in an editor while a run goes on, add a note
and save: the editor writes its old buffer, in which a task the run has finished since
is still pending. Compared with that file alone, the engine's newer state looks like
something the person undid. With the versions Maestro wrote since the plan was made,
the store finds the one the person's copy started from and merges three ways
(``PlanStore``): the person's changes stay, the engine's newer fields come back.

``.ai/maestro/plan-history/``: ``latest.md`` holds the exact bytes Maestro wrote last (a
file on disk that differs from it was saved by someone else), and one gzipped JSON file
per version holds its content (the parse-cache form), oldest first by sequence number.
It only ever adds safety: a history that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from maestro.fsutil import atomic_write
from maestro.state import cache
from maestro.state.model import Plan

# Versions kept: a run writes about two per dispatch, so a few hundred reach back over a
# long run (an editor buffer opened before it started). ~8 KB each for 100 tasks.
KEEP = 400
_SUFFIX = ".json.gz"


class History:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.latest_path = folder / "latest.md"

    def latest(self) -> bytes | None:
        """The bytes Maestro wrote last, or None when it has not written this plan."""
        try:
            return self.latest_path.read_bytes()
        except OSError:
            return None

    def _files(self) -> list[Path]:
        try:
            return sorted(self.folder.glob("*" + _SUFFIX))
        except OSError:
            return []

    def record(self, data: bytes, plan: Plan, content: dict[str, Any] | None = None) -> None:
        """Remember ``data`` (the file as written) and its content as the newest version
        (``content``: ``cache.to_json(plan)``, when the caller has it already)."""
        import gzip

        with contextlib.suppress(OSError):
            files = self._files()
            digest = hashlib.sha256(data).hexdigest()[:16]
            if not (files and files[-1].name.endswith(f"-{digest}{_SUFFIX}")):
                seq = int(files[-1].name.split("-", 1)[0]) + 1 if files else 1
                body = json.dumps(
                    cache.to_json(plan) if content is None else content,
                    ensure_ascii=False,
                    separators=(",", ":"),
                ).encode("utf-8")
                atomic_write(
                    self.folder / f"{seq:08d}-{digest}{_SUFFIX}",
                    gzip.compress(body, mtime=0),
                    durable=False,
                )
                files.append(self.folder / "new")
                for old in files[: max(0, len(files) - KEEP)]:
                    old.unlink(missing_ok=True)
            atomic_write(self.latest_path, data, durable=False)

    def versions(self) -> Iterator[Plan]:
        """The recorded versions' content, newest first (unreadable ones skipped)."""
        import gzip
        import zlib

        for path in reversed(self._files()):
            try:
                yield cache.from_json(json.loads(gzip.decompress(path.read_bytes())))
            except (OSError, zlib.error, ValueError, EOFError, KeyError, TypeError, AttributeError):
                continue

    def clear(self) -> None:
        """Forget every version (a new plan, or the plan archived)."""
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)

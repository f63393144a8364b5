"""The versions of the plan Maestro wrote, so a save from an older copy can be merged.

A person may keep `.ai/MAESTRO.md` open in an editor while a run goes on, add a note
and save: the editor writes its old buffer, in which a task the run has finished since
is still pending. Compared with that file alone, the engine's newer state looks like
something the person undid. With the versions Maestro wrote since the plan was made,
the store finds the one the person's copy started from and merges three ways
(``PlanStore``): the person's changes stay, the engine's newer fields come back.

``plan-history/`` in the project's private folder (``ProjectPaths.private_dir``, in the
user's state folder): ``latest.md`` holds the exact bytes Maestro wrote last (a file on
disk that differs from it was saved by someone else), and one gzipped JSON file per
version holds its content (``to_json``), oldest first by sequence number. What a merge
takes from a version goes into the plan and runs (a validation command, a task's files),
so the history lies where no spoke reaches, never under ``.ai/maestro/``, and is read
only from a folder of the user's own (``private_folder``). It only ever adds safety: a
history that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

from maestro.fsutil import atomic_write, private_folder, read_private
from maestro.state import model as m

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
        return read_private(self.latest_path)

    def _files(self) -> list[Path]:
        if not private_folder(self.folder):
            return []
        try:
            return sorted(self.folder.glob("*" + _SUFFIX))
        except OSError:
            return []

    def record(self, data: bytes, plan: m.Plan) -> None:
        """Remember ``data`` (the file as written) and its content as the newest version."""
        import gzip

        if not private_folder(self.folder, create=True):
            return  # a spoke's sandbox, a read-only home: no history, no merge
        with contextlib.suppress(OSError):
            files = self._files()
            digest = hashlib.sha256(data).hexdigest()[:16]
            if not (files and files[-1].name.endswith(f"-{digest}{_SUFFIX}")):
                seq = int(files[-1].name.split("-", 1)[0]) + 1 if files else 1
                body = json.dumps(to_json(plan), ensure_ascii=False, separators=(",", ":")).encode(
                    "utf-8"
                )
                atomic_write(
                    self.folder / f"{seq:08d}-{digest}{_SUFFIX}",
                    gzip.compress(body, mtime=0),
                    durable=False,
                )
                files.append(self.folder / "new")
                for old in files[: max(0, len(files) - KEEP)]:
                    old.unlink(missing_ok=True)
            atomic_write(self.latest_path, data, durable=False)

    def versions(self) -> Iterator[m.Plan]:
        """The recorded versions' content, newest first (unreadable ones skipped)."""
        import gzip
        import zlib

        for path in reversed(self._files()):
            try:
                yield from_json(json.loads(gzip.decompress(path.read_bytes())))
            except (OSError, zlib.error, ValueError, EOFError, KeyError, TypeError, AttributeError):
                continue

    def clear(self) -> None:
        """Forget every version (a new plan, or the plan archived)."""
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


# -- a version's content as JSON ------------------------------------------------------
def _names(cls: type) -> list[str]:
    return [f.name for f in fields(cls) if f.name != "layout"]


_TASK, _CHALLENGE, _REVIEW = _names(m.Task), _names(m.Challenge), _names(m.Review)


def _finding(f: m.Finding) -> list[Any]:
    return [f.text, f.task, f.severity]


def _usage(u: m.Usage) -> list[int]:
    return [u.input, u.output, u.cached]


def _record(obj: Any, names: list[str]) -> dict[str, Any]:
    out = {}
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, m.Usage):
            value = _usage(value)
        elif isinstance(value, m.Receipt):
            value = [
                value.diff_stat,
                value.files_changed,
                value.validation,
                value.validation_exit,
                value.commit,
                value.diff_sha,
                value.change,
            ]
        elif name == "findings":
            value = (
                {k: [_finding(f) for f in v] for k, v in value.items()}
                if isinstance(value, dict)
                else [_finding(f) for f in value]
            )
        out[name] = value
    return out


def to_json(plan: m.Plan) -> dict[str, Any]:
    return {
        "goal": plan.goal,
        "title": plan.title,
        "format_version": plan.format_version,
        "tasks": [_record(t, _TASK) for t in plan.tasks],
        "challenges": [_record(c, _CHALLENGE) for c in plan.challenges],
        "reviews": [_record(r, _REVIEW) for r in plan.reviews],
        "log": [[e.time, e.task, e.tool, e.action, e.outcome, e.tokens, e.cost] for e in plan.log],
        "source": [plan.source.hub, plan.source.time] if plan.source else None,
    }


def _task(d: dict[str, Any]) -> m.Task:
    d["usage"] = m.Usage(*d["usage"])
    if d["receipt"] is not None:
        d["receipt"] = m.Receipt(*d["receipt"])
    return m.Task(**d)


def _challenge(d: dict[str, Any]) -> m.Challenge:
    d["usage"] = m.Usage(*d["usage"])
    d["findings"] = {k: [m.Finding(*f) for f in v] for k, v in d["findings"].items()}
    return m.Challenge(**d)


def _review(d: dict[str, Any]) -> m.Review:
    d["usage"] = m.Usage(*d["usage"])
    d["findings"] = [m.Finding(*f) for f in d["findings"]]
    return m.Review(**d)


def from_json(d: dict[str, Any]) -> m.Plan:
    return m.Plan(
        goal=d["goal"],
        title=d["title"],
        format_version=d["format_version"],
        tasks=[_task(t) for t in d["tasks"]],
        challenges=[_challenge(c) for c in d["challenges"]],
        reviews=[_review(r) for r in d["reviews"]],
        log=[m.LogEntry(*e) for e in d["log"]],
        source=m.Source(*d["source"]) if d["source"] else None,
    )

"""A reviewer's or a challenger's streamed output, kept for the board as a task attempt's
is in its run's folder: one file per dispatch, named by its session, in the reviews' or
the challenges' folder of the project's state (``.ai/maestro/reviews/<session>.stream.jsonl``,
``.ai/maestro/challenges/<session>.stream.jsonl``), and beside it ``<session>.json``: what
the board lists it by (its CLI, when it began, a review's task and round) and, once the
answer is recorded in the plan, the review's or the challenge's id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from maestro import clock
from maestro.fsutil import atomic_write
from maestro.paths import ProjectPaths

KINDS = ("reviews", "challenges")
SUFFIX = ".stream.jsonl"


def stream_file(paths: ProjectPaths, kind: str, session_id: str, **about: Any) -> Path:
    """Where the dispatch of session ``session_id`` streams to, its description written."""
    folder = paths.machine_dir / kind
    folder.mkdir(parents=True, exist_ok=True)
    about = {"session": session_id, "started": clock.iso(), **about}
    atomic_write(folder / f"{session_id}.json", json.dumps(about) + "\n", durable=False)
    return folder / f"{session_id}{SUFFIX}"


def about_file(stream: Path) -> Path:
    return stream.with_name(stream.name.removesuffix(SUFFIX) + ".json")


def recorded(stream: Path, record_id: str) -> None:
    """The review or challenge recorded from the answer streamed to ``stream``. A
    description that is gone or does not read (the state folder is within a spoke's
    reach) is written anew around the id."""
    try:
        about = json.loads(about_file(stream).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        about = None
    if not isinstance(about, dict):
        about = {"session": stream.name.removesuffix(SUFFIX)}
    about["id"] = record_id
    atomic_write(about_file(stream), json.dumps(about) + "\n", durable=False)

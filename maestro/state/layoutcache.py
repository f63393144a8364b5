"""The full parse of a plan file, its layout included, kept for the next process.

An edit needs the person's text as the parser read it (the layout), which the JSON
parse cache (cache.py) does not hold: so every process that changed the plan parsed it
with mistune first, about 18 ms for a small plan and its import, on the way from `maestro
run` to its first spoke. This keeps the last full parse of each plan file, pickled, in
the user's cache folder: one file per plan file, replaced at each new parse, so the
folder holds as many files as the user has projects.

Pickle runs code named in the file it loads, so it reads only a file of the user's own,
which nobody else may write, in a folder of the user's own (fsutil.read_own), at an
absolute path: never a project's (a cloned repository could carry any file there). The
key is the file's bytes, the parser's version and code (cache.code_stamp: an install
from a checkout changes the parser without a new version), the field names of the model
and of the layout, and Maestro's version; it heads the file and is compared before
anything is unpickled. A file that cannot be read or does not hold what the key names is
a miss: the caller parses, as it would without this.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import fields
from pathlib import Path

from maestro import __version__
from maestro.fsutil import read_own, write_cache
from maestro.paths import user_cache_dir
from maestro.state import cache
from maestro.state.markdown import layout as lay
from maestro.state.model import Plan

_LAYOUT = hashlib.sha256(
    repr(
        [
            [f.name for f in fields(c)]
            for c in (lay.FieldPiece, lay.TextPiece, lay.RecordLayout, lay.Chunk, lay.PlanLayout)
        ]
    ).encode()
).hexdigest()[:16]


def key(data: bytes, parser_version: int, display: str) -> str:
    return f"{cache.cache_key(data, parser_version)}:{_LAYOUT}:{__version__}:{display}"


def path_for(plan_file: Path) -> Path:
    """Where the parse of ``plan_file`` is kept (one per plan file)."""
    name = hashlib.sha256(str(plan_file.resolve()).encode()).hexdigest()[:24]
    return user_cache_dir() / "plans" / f"{name}.pickle"


def read(path: Path, wanted: str) -> Plan | None:
    data = read_own(path)
    if data is None:
        return None
    head, _, body = data.partition(b"\n")
    if head != wanted.encode("utf-8"):
        return None
    try:
        plan = pickle.loads(body)  # a file of the user's own, with the key (see above)
    except Exception:  # noqa: BLE001 - truncated, or from older code: a miss
        return None
    return plan if isinstance(plan, Plan) else None


def write(path: Path, wanted: str, plan: Plan) -> None:
    body = pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL)
    write_cache(path, wanted.encode("utf-8") + b"\n" + body, private=True)

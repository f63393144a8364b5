"""The full parse of a plan file, its layout included, kept for the next process.

An edit needs the person's text as the parser read it (the layout), which the JSON
parse cache (cache.py) does not hold: so every process that changed the plan parsed it
with mistune first, about 18 ms for a small plan and its import, on the way from `maestro
run` to its first spoke. This keeps the last full parse of each plan file, pickled, in
the user's cache folder: one file per plan file, replaced at each new parse, so the
folder holds as many files as the user has projects.

Pickle runs code named in the file it loads, so it reads only a file of the user's own,
which nobody else may write, in the user's cache folder (fsutil.read_own), never one in
a project (a cloned repository could carry any file there). The key is the file's bytes,
the parser's version, the field names of the model and of the layout, Maestro's version,
and the size and time of the parser's own source files (an install from a checkout
changes them without a new version). A file that cannot be read or does not hold what
the key names is a miss: the caller parses, as it would without this.
"""

from __future__ import annotations

import functools
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


@functools.cache
def _code() -> str:
    """The parser's source files, by size and time (what reads a plan, and its model)."""
    state = Path(__file__).parent
    files = sorted(
        [*state.glob("markdown/*.py"), *state.glob("codecs/*.py"), state / "planfile.py"]
    )
    files.append(state / "model.py")
    stamps = []
    for path in files:
        try:
            info = path.stat()
        except OSError:
            continue
        stamps.append(f"{path.name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(stamps).encode()).hexdigest()[:16]


def key(data: bytes, parser_version: int, display: str) -> str:
    head = cache.cache_key(data, parser_version)
    return f"{head}:{_LAYOUT}:{__version__}:{_code()}:{display}"


def path_for(plan_file: Path) -> Path:
    """Where the parse of ``plan_file`` is kept (one per plan file)."""
    name = hashlib.sha256(str(plan_file.resolve()).encode()).hexdigest()[:24]
    return user_cache_dir() / "plans" / f"{name}.pickle"


def read(path: Path, wanted: str) -> Plan | None:
    data = read_own(path)
    if data is None:
        return None
    try:
        kept = pickle.loads(data)  # a file of the user's own (see above)
    except Exception:  # noqa: BLE001 - truncated, or from older code: a miss
        return None
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == wanted:
        plan = kept[1]
        if isinstance(plan, Plan):
            return plan
    return None


def write(path: Path, wanted: str, plan: Plan) -> None:
    write_cache(path, pickle.dumps((wanted, plan), protocol=pickle.HIGHEST_PROTOCOL))

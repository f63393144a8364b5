"""A parse cache for read-only loads: the plan's content as JSON, keyed by the file's bytes.

``maestro status`` on a large plan would spend most of its time in mistune; with the
cache a warm start reads one small JSON file instead and never imports mistune. The key
is the sha256 of the file bytes, the parser version, the model's field names and the
parser's code (code_stamp), so an edit, a parser change or a model change each miss. A
cache that cannot be read, parsed or written is ignored: it only ever saves time.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from maestro.state import model as m

CACHE_FORMAT = 1


def _names(cls: type) -> list[str]:
    return [f.name for f in fields(cls) if f.name != "layout"]


_TASK, _CHALLENGE, _REVIEW = _names(m.Task), _names(m.Challenge), _names(m.Review)
_SCHEMA = hashlib.sha256(
    repr(
        [
            _names(c)
            for c in (
                m.Plan,
                m.Task,
                m.Usage,
                m.Receipt,
                m.Finding,
                m.Challenge,
                m.Review,
                m.LogEntry,
                m.Source,
            )
        ]
    ).encode()
).hexdigest()[:16]


def cache_key(data: bytes, parser_version: int) -> str:
    digest = hashlib.sha256(data).hexdigest()
    return f"{digest}:{parser_version}:{_SCHEMA}:{CACHE_FORMAT}:{code_stamp()}"


@functools.cache
def code_stamp() -> str:
    """What reads a plan, by its files' sizes and times: the parser's own modules and
    those it calls, and mistune. An install from a checkout, or an upgraded mistune,
    changes them without a new parser version: every cache made before is then missed."""
    import importlib.util

    package = Path(__file__).resolve().parents[1]
    state = package / "state"
    files = [*state.glob("markdown/*.py"), *state.glob("codecs/*.py")]
    files += [state / "planfile.py", state / "model.py"]
    files += [package / name for name in ("tables.py", "graph.py", "roster.py")]
    spec = importlib.util.find_spec("mistune")
    if spec is not None and spec.origin:
        files.append(Path(spec.origin))
    stamps = []
    for path in sorted(files):
        try:
            info = path.stat()
        except OSError:
            continue
        stamps.append(f"{path}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(stamps).encode()).hexdigest()[:16]


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


def read(path: Path, key: str) -> m.Plan | None:
    try:
        return decode(path.read_bytes(), key)
    except OSError:
        return None


def decode(text: str | bytes, key: str) -> m.Plan | None:
    """The plan in a cache file's ``text``, if it is the one of ``key`` (a new object
    each time: a caller may change what it gets)."""
    try:
        doc = json.loads(text)
        if doc.get("key") != key:
            return None
        return from_json(doc["plan"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def encode(key: str, plan: m.Plan, content: dict[str, Any] | None = None) -> str:
    """A cache file's text. ``content``: ``to_json(plan)``, when the caller has it already."""
    body = to_json(plan) if content is None else content
    return json.dumps({"key": key, "plan": body}, ensure_ascii=False, separators=(",", ":"))


def write(path: Path, key: str, plan: m.Plan, content: dict[str, Any] | None = None) -> str:
    """Write the cache file; its text is returned (see ``encode``)."""
    from maestro.fsutil import write_cache

    text = encode(key, plan, content)
    write_cache(path, text)
    return text

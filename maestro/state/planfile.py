"""`.ai/MAESTRO.md`, the plan file: ``parse`` and ``render`` (format: docs/plan-file.md).

The file is both the engine's state and a document people read and edit, so:

- ``parse`` reads it with mistune's block parser (markdown/reader.py), refuses invalid content with
  a ``PlanError`` naming file, line and fix, and upgrades older format versions;
- every parsed object keeps a layout of the person's text, and ``render`` (markdown/writer.py)
  re-emits it unchanged wherever the value is unchanged: an untouched file renders byte
  for byte, a one-field change is a one-line diff;
- a plan without layout renders canonically and deterministically, and
  ``parse(render(plan)) == plan`` for every plan ``render`` accepts.
"""

from __future__ import annotations

from maestro.errors import PlanError
from maestro.state.markdown.reader import DocumentReader
from maestro.state.markdown.upgrade import upgrade
from maestro.state.markdown.writer import render_plan
from maestro.state.model import Plan

DEFAULT_PATH = ".ai/MAESTRO.md"


def parse(text: str, path: str = DEFAULT_PATH) -> Plan:
    plan, version = DocumentReader(text, str(path)).read()
    return upgrade(plan, version, str(path))


def parse_bytes(data: bytes, path: str = DEFAULT_PATH) -> Plan:
    """``parse`` for the file's bytes: non-UTF-8 content is a PlanError, not a crash."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PlanError(
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x}).",
            "save it as UTF-8 text.",
            file=str(path),
            line=line,
        ) from None
    return parse(text, path)


def render(
    plan: Plan, path: str | None = None, *, ids_checked: bool = False, frozen: bool = False
) -> str:
    """The plan as file text. Raises PlanError for content the format cannot hold.
    ``ids_checked``: the ids and dependencies are those of a plan ``parse`` read (it
    refuses duplicates and impossible dependencies), not checked again. ``frozen``: the
    plan's records are never changed once rendered (a PlanStore's own: an edit changes
    copies), so a record rendered before renders to its text then."""
    shown = str(path) if path is not None else DEFAULT_PATH
    return render_plan(plan, shown, ids_checked=ids_checked, frozen=frozen)

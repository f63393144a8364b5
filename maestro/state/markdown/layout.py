"""What the parser remembers of a person's text, so that rendering can give it back.

Each parsed object carries one of these in its ``layout`` attribute (excluded from
equality). Render re-emits the raw text of every piece whose value has not changed and
writes canonical text only for what changed, so an untouched file renders byte for byte
and a one-field change is a one-line diff.

``src`` numbers are block indexes in the source: two pieces that were next to each other
in the file (``a.end == b.start``) are re-emitted without an added blank line between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class FieldPiece:
    """One bullet field: ``- **Status:** done``."""

    name: str  # the field spec's name
    body: str  # its raw text, without the blank lines after it
    gap: str  # the blank lines after it
    value: Any  # the frozen value read from ``body``
    line: int
    prefix: str = "- **?:** "  # the first line up to the value: a changed one-line value keeps it
    bullet: str = "- "  # the item marker with its indentation, for fields written anew
    stale: bool = False  # written under an older format's label: always re-rendered


@dataclass(slots=True)
class TextPiece:
    """Text the model does not hold: a note, an unknown list item, a sub-heading."""

    text: str


@dataclass(slots=True)
class RecordLayout:
    """A task, challenge or review: its heading line and the pieces under it."""

    heading: str
    head: tuple[Any, ...]  # the frozen heading values read from ``heading``
    pieces: list[FieldPiece | TextPiece]
    line: int
    start: int
    end: int
    # The record last rendered on this layout (the object, and a copy of its values then),
    # with its text and whether new fields went in bare: the same values render to the
    # same text, so a plan kept in memory across edits (PlanStore) renders the records an
    # edit left alone without work. The object itself says so at once: a plan's records
    # are never changed once rendered (an edit changes copies; see PlanStore).
    rendered: tuple[Any, Any, str, bool] | None = None


@dataclass(slots=True)
class Chunk:
    """A top-level part of the document.

    ``slot`` is None for text kept verbatim (an unknown section, a preamble paragraph);
    otherwise it names the model part the chunk renders: marker, title, goal, tasks,
    challenges, reviews, log, source. ``value`` is what the chunk held when read.
    """

    slot: str | None
    text: str  # the raw text; for sections, the heading and what precedes the records
    start: int
    end: int
    value: Any = None
    parts: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PlanLayout:
    chunks: list[Chunk]
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False
    # A code fence or HTML comment never closed: (line, opening line). New text written
    # after it would be swallowed, so the writer's refusal names it.
    unclosed: tuple[int, str] | None = None

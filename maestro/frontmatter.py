"""YAML frontmatter: the ``---`` block that opens persona, command and skill files.

One reader for all of them. The body is returned exactly as it follows the closing
``---`` line, so a caller that writes it out again (the installer) keeps its bytes.
"""

from __future__ import annotations

import re
from typing import Any

_BOUNDARY = re.compile(r"^---[ \t]*$", re.MULTILINE)


class FrontmatterError(ValueError):
    """Why a text has no usable block: ``kind`` is ``missing`` (the text does not start
    with a ``---`` line), ``unclosed`` or ``yaml`` (with the parser's ``detail`` and the
    1-based ``line`` of the text where it stopped)."""

    def __init__(self, kind: str, detail: str = "", line: int | None = None) -> None:
        super().__init__(f"frontmatter {kind}: {detail}" if detail else f"frontmatter {kind}")
        self.kind, self.detail, self.line = kind, detail, line


def split(text: str) -> tuple[Any, str]:
    """``(metadata, body)``: the metadata is what the YAML holds (a mapping when the file
    is right: the caller checks its shape), ``{}`` for an empty block."""
    import yaml  # 10 ms to import; every command imports this module (the CLIs' hosts)

    opening = _BOUNDARY.match(text)
    if opening is None:
        raise FrontmatterError("missing")
    closing = _BOUNDARY.search(text, opening.end() + 1)
    if closing is None:
        raise FrontmatterError("unclosed")
    try:
        # libyaml's loader when PyYAML has it: persona files are read on every catalog load.
        meta = yaml.load(
            text[opening.end() : closing.start()],
            Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader),
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FrontmatterError(
            "yaml", str(getattr(exc, "problem", exc)), mark.line + 1 if mark else None
        ) from None
    return ({} if meta is None else meta), text[closing.end() + 1 :]

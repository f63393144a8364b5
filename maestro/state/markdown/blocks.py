"""The top-level Markdown blocks of a document, each with its exact source span.

mistune's block parser decides where blocks begin and end (so a ``## Heading`` inside a
fenced code block or an HTML comment stays text), but its tokens carry no positions. The
subclasses below tag every top-level token with the cursor at which it started; a
block's source is then the text up to the next block's start, so the blocks cover the
document exactly and a person's text can be re-emitted byte for byte.

List items are not parsed into child blocks (``list_rules`` holds only blank lines): the
plan file reads item contents itself, and skipping mistune's recursion halves the time.
mistune is imported on first use, never at module import, to keep ``maestro status`` fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mistune.block_parser import BlockParser
from mistune.core import BlockState

_PARSER: Any = None


@dataclass(slots=True)
class Block:
    kind: str  # mistune token type: heading, list, paragraph, blank_line, block_code, ...
    start: int  # offset of the block's first character
    end: int  # offset just past its last character (the next block's start)
    line: int  # 1-based line number of ``start``
    level: int = 0  # headings: 1 to 6
    text: str = ""  # headings: the heading text as mistune reads it
    items: int = 0  # lists: the number of items


def _build_parser() -> Any:
    class _State(BlockState):
        def add_paragraph(self, text: str) -> None:
            count = len(self.tokens)
            super().add_paragraph(text)
            if self.parent is None and len(self.tokens) > count:
                self.tokens[-1]["_start"] = self.cursor

    class _Parser(BlockParser):
        state_cls = _State

        def parse_method(self, m: Any, state: Any) -> Any:
            if state.parent is not None:
                return super().parse_method(m, state)
            count, start = len(state.tokens), state.cursor
            end = super().parse_method(m, state)
            # A nested call (a list or quote ended by a heading) has already tagged the
            # token it added; setdefault keeps that start. A quote cut short by a nested
            # block is inserted before the last token (``prepend_token``), so the token at
            # ``count - 1`` may be this call's too.
            for token in state.tokens[max(count - 1, 0) :]:
                token.setdefault("_start", start)
            return end

        def _parse_indent_code_fast(self, state: Any) -> Any:
            count, start = len(state.tokens), state.cursor
            end = super()._parse_indent_code_fast(state)
            if state.parent is None:
                for token in state.tokens[count:]:
                    token.setdefault("_start", start)
            return end

    return _Parser(list_rules=["blank_line"])


def split_blocks(text: str) -> list[Block]:
    """Blocks of ``text`` (LF line endings, ending in a newline), in order, covering it."""
    global _PARSER
    if _PARSER is None:
        _PARSER = _build_parser()
    state = _PARSER.state_cls()
    state.process(text)
    _PARSER.parse(state)
    tokens = state.tokens
    if any("_start" not in token for token in tokens):
        raise AssertionError("a markdown block without a position")
    # A block quote or list cut short by the next block is inserted after it: sort.
    tokens.sort(key=lambda token: token["_start"])
    blocks: list[Block] = []
    line, pos = 1, 0
    for token in tokens:
        start = token["_start"]
        if not blocks and start > 0:
            # Text mistune keeps no token for (a link reference definition) at the top.
            blocks.append(Block("other", 0, start, 1))
        line += text.count("\n", pos, start)
        pos = start
        if blocks:
            blocks[-1].end = start
        kind = token["type"]
        block = Block(kind, start, len(text), line)
        if kind == "heading":
            block.level = token["attrs"]["level"]
            block.text = token["text"]
        elif kind == "list":
            block.items = len(token["children"])
        blocks.append(block)
    if not blocks and text:
        blocks.append(Block("other", 0, len(text), 1))
    # Tokens that start at the same offset (none in practice) would have empty spans.
    return [b for b in blocks if b.end > b.start]


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def unclosed_block(text: str, blocks: list[Block]) -> tuple[int, str] | None:
    """(line, opening line) of a code fence or HTML comment that is never closed.

    Such a block runs to the end of the document, so everything after its opening line
    (sections, tasks, the log) reads as code or as a comment. Only the last block can be
    one; ``text`` and ``blocks`` as ``split_blocks`` takes and gives them.
    """
    if not blocks or blocks[-1].kind not in ("block_code", "block_html"):
        return None
    last = blocks[-1]
    first, _, rest = text[last.start : last.end].partition("\n")
    if last.kind == "block_html":
        opened = first.lstrip().startswith("<!--") and "-->" not in text[last.start : last.end]
        return (last.line, first.strip()) if opened else None
    m = _FENCE.match(first)
    if m is None:
        return None  # an indented code block ends where its indentation does
    mark = m.group(1)
    for line in rest.split("\n"):
        body = line.strip(" \t")
        if (
            len(line) - len(line.lstrip(" ")) < 4
            and len(body) >= len(mark)
            and body == mark[0] * len(body)
        ):
            return None
    return last.line, first.strip()


def closer(opener: str) -> str:
    """The line that closes the fence or comment ``opener`` (as ``unclosed_block`` gives it)."""
    if opener.startswith("<!--"):
        return "-->"
    return _FENCE.match(opener).group(1)  # type: ignore[union-attr]  # unclosed_block matched it


TASK_LIKE = re.compile(r"task\s+[0-9][0-9.]*\s*:", re.IGNORECASE)


def misplaced_task(blocks: list[Block]) -> Block | None:
    """The first ``### Task N: ...`` heading among ``blocks`` (outside the Tasks section it
    would be silently taken for text)."""
    return next(
        (b for b in blocks if b.kind == "heading" and b.level == 3 and TASK_LIKE.match(b.text)),
        None,
    )

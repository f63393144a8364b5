"""The stub block Maestro splices into CLAUDE.md, GEMINI.md and AGENTS.md.

    <!-- Maestro claude v1 -->
    /maestro:plan|challenge|run|review|status|report. State .ai/MAESTRO.md, log ...
    <!-- /Maestro -->

The begin marker names the host (two hosts may share one file through a symlink, each
with its own block) and the block format version. Everything outside the block is the
user's and is never rewritten: a block is appended as ``EOL + block + EOL`` (just
``block + EOL`` to an empty file) and ``remove`` takes away exactly that, so
``remove(splice(text)) == text`` byte for byte, whatever the line endings and whether or
not the text ended with a newline. The block uses the file's line ending (CRLF if the
file has any CRLF).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from maestro.errors import InstallError

FORMAT = 1
END = "<!-- /Maestro -->"
_BEGIN = re.compile(r"^<!-- Maestro (?P<host>[a-z]+) v(?P<version>\d+) -->(?=\r?\n|\Z)", re.MULTILINE)
_END = re.compile(r"^<!-- /Maestro -->(?=\r?\n|\Z)", re.MULTILINE)


def begin_marker(host: str, version: int = FORMAT) -> str:
    return f"<!-- Maestro {host} v{version} -->"


@dataclass(frozen=True)
class Block:
    host: str
    version: int
    start: int  # offset of the begin marker
    end: int  # offset just past the end marker (its line ending excluded)
    eol: str  # the line ending inside the block
    text: str  # begin marker through end marker

    @property
    def body(self) -> str:
        """The lines between the markers, with LF endings."""
        inner = self.text.split(self.eol, 1)[1] if self.eol in self.text else ""
        inner = inner[: inner.rfind(END)]
        return inner.replace("\r\n", "\n")


def eol_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def render(host: str, body: str, eol: str = "\n") -> str:
    """The block's text (no trailing line ending); ``body`` is LF-separated lines."""
    lines = [begin_marker(host), *body.rstrip("\n").split("\n"), END]
    return eol.join(lines)


def find(text: str, host: str, *, where: str = "the file") -> Block | None:
    """The block for ``host`` in ``text``, or None. A begin marker without its end
    marker, or two blocks for one host, is an error naming the line."""
    found: Block | None = None
    for begin in _BEGIN.finditer(text):
        if begin.group("host") != host:
            continue
        line = text.count("\n", 0, begin.start()) + 1
        end = _END.search(text, begin.end())
        nested = _BEGIN.search(text, begin.end(), end.start() if end else len(text))
        if end is None or nested is not None:
            raise InstallError(
                f"{where}: the Maestro {host} block opened at line {line} has no end marker.",
                f"restore the '{END}' line after it, or delete the block by hand.",
            )
        if found is not None:
            raise InstallError(
                f"{where}: more than one Maestro {host} block (the second at line {line}).",
                "delete all but one of them.",
            )
        after = text[begin.end(): begin.end() + 2]
        eol = "\r\n" if after.startswith("\r\n") else "\n"
        found = Block(host, int(begin.group("version")), begin.start(), end.end(), eol,
                      text[begin.start(): end.end()])
    return found


def splice(text: str, host: str, body: str, *, where: str = "the file") -> str:
    """``text`` with the host's block set to ``body``: replaced in place if present,
    else appended."""
    block = find(text, host, where=where)
    if block is not None:
        return text[: block.start] + render(host, body, block.eol) + text[block.end:]
    eol = eol_of(text)
    if not text:
        return render(host, body, eol) + eol
    return text + eol + render(host, body, eol) + eol


def remove(text: str, host: str, *, where: str = "the file") -> str:
    """``text`` without the host's block and the line breaks ``splice`` added with it."""
    block = find(text, host, where=where)
    if block is None:
        return text
    start, end = block.start, block.end
    if text.startswith(block.eol, end):
        end += len(block.eol)
    elif text.startswith("\n", end):
        end += 1
    if start and text.endswith(block.eol, 0, start):
        before, after = text[: start - len(block.eol)], text[end:]
        # Text added after the block is the user's: keep the line break before the block
        # when taking it away would glue that text onto the line above.
        if not after or not before or before.endswith("\n") or after.startswith(("\r", "\n")):
            start -= len(block.eol)
    return text[:start] + text[end:]

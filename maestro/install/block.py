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

A marker edited by hand (its case, spacing or version changed, text added after it, the
begin marker deleted so an end marker is left alone) is an error naming its line: taken
for "no block", it would make install write a second block and uninstall say "missing"
while the old one stays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from maestro.errors import InstallError

FORMAT = 1
END = "<!-- /Maestro -->"
_BEGIN = re.compile(
    r"^<!-- Maestro (?P<host>[a-z]+) v(?P<version>\d+) -->(?=\r?\n|\Z)", re.MULTILINE
)
_END = re.compile(r"^<!-- /Maestro -->(?=\r?\n|\Z)", re.MULTILINE)
# A line that reads as a marker to a person: a comment opening with "maestro" that is
# an end marker (a slash, or nothing after the name) or names a host and a version.
_MARKER_LIKE = re.compile(
    r"^[ \t]*<!--[ \t]*(?:/[ \t]*maestro\b|maestro[ \t]*-*>?[ \t]*(?=\r?\n|\Z)|maestro[ \t]+[a-z]+[ \t]+v[ \t]*\d)"
    r"[^\r\n]*",
    re.MULTILINE | re.IGNORECASE,
)


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


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _check_markers(text: str, host: str, where: str) -> None:
    """Refuse a marker edited by hand or an end marker no begin marker opens, naming the
    first one's line (any host's: a file two hosts share holds both blocks)."""
    valid = {m.start() for m in _BEGIN.finditer(text)} | {m.start() for m in _END.finditer(text)}
    problems: list[tuple[int, str]] = []
    for line in _MARKER_LIKE.finditer(text):
        if line.start() not in valid:
            problems.append(
                (line.start(), f"the Maestro marker {line.group().strip()!r} was edited by hand")
            )
    opened = False
    for marker in sorted(
        [(m.start(), True) for m in _BEGIN.finditer(text)]
        + [(m.start(), False) for m in _END.finditer(text)]
    ):
        if marker[1]:
            opened = True
        elif opened:
            opened = False
        else:
            problems.append((marker[0], f"the end marker '{END}' has no begin marker above it"))
    if problems:
        offset, problem = min(problems)
        raise InstallError(
            f"{problem}; refusing to change the file.",
            f"make that line read '{begin_marker(host)}' (a begin marker) or '{END}' (the end marker) "
            "as Maestro wrote it, or delete the block by hand; then run this again.",
            file=where,
            line=_line_of(text, offset),
        )


def find(text: str, host: str, *, where: str = "the file") -> Block | None:
    """The block for ``host`` in ``text``, or None. A begin marker without its end
    marker, two blocks for one host, or a marker edited by hand, is an error naming the
    line."""
    _check_markers(text, host, where)
    found: Block | None = None
    for begin in _BEGIN.finditer(text):
        if begin.group("host") != host:
            continue
        line = _line_of(text, begin.start())
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
        after = text[begin.end() : begin.end() + 2]
        eol = "\r\n" if after.startswith("\r\n") else "\n"
        found = Block(
            host,
            int(begin.group("version")),
            begin.start(),
            end.end(),
            eol,
            text[begin.start() : end.end()],
        )
    return found


def splice(text: str, host: str, body: str, *, where: str = "the file") -> str:
    """``text`` with the host's block set to ``body``: replaced in place if present,
    else appended."""
    block = find(text, host, where=where)
    if block is not None:
        return text[: block.start] + render(host, body, block.eol) + text[block.end :]
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

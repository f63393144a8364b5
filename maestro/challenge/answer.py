"""Reading a challenger's answer into the four categories of the design notes.

The prompt asks for four Markdown headings with a bulleted list under each, optionally
inside a fenced ``maestro-challenge`` block. Models vary the form (numbered headings, bold
lines instead of headings, a trailing colon), so headings are matched on their key words,
but an answer with none of the four headings is not guessed at: it is kept verbatim and
flagged as unparsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import mistune

from maestro.state.model import CHALLENGE_CATEGORIES, Finding

FENCE_INFO = "maestro-challenge"

# Key words that identify a category heading, checked in this order.
_HEADING_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("assumptions", ("assumption",)),
    ("missing_dependencies", ("missing", "dependenc", "prerequisite")),
    ("scope", ("scope",)),
    ("alternatives", ("alternative",)),
)
_EMPTY_ITEM = re.compile(
    r"^(none|n/?a|nothing|no (issues?|concerns?|findings?)( found)?)\b[.!]?$", re.IGNORECASE
)
# "Task 2: ...", "[Task 2] ...", "(T2) ...", "T2 - ...": a prefix naming the task, dropped
# from the text. "Task 3 is too large" keeps its words and still names Task 3.
_LEADING_TASK = re.compile(
    r"^\s*(?:\[(?:task|t)\s*#?\s*(?P<a>[0-9]+(?:\.[0-9]+)*)\]"
    r"|\((?:task|t)\s*#?\s*(?P<b>[0-9]+(?:\.[0-9]+)*)\)"
    r"|(?:task|t)\s*#?\s*(?P<c>[0-9]+(?:\.[0-9]+)*)\s*[:.)\-–—])\s*[:\-–—]?\s*",
    re.IGNORECASE,
)
_ANY_TASK = re.compile(r"\btasks?\s*#?\s*([0-9]+(?:\.[0-9]+)*)\b", re.IGNORECASE)


@dataclass
class ParsedChallenge:
    parsed: bool
    findings: dict[str, list[Finding]] = field(default_factory=dict)

    def count(self) -> int:
        return sum(len(items) for items in self.findings.values())


def _markdown() -> Any:
    return mistune.create_markdown(renderer=None)


def inline_text(nodes: Iterable[dict[str, Any]]) -> str:
    """Plain text of inline AST nodes; code spans keep their backticks."""
    parts: list[str] = []
    for node in nodes:
        kind = node.get("type")
        if kind == "codespan":
            parts.append(f"`{node.get('raw', '')}`")
        elif kind in ("softbreak", "linebreak"):
            parts.append(" ")
        elif "children" in node:
            parts.append(inline_text(node["children"]))
        else:
            parts.append(str(node.get("raw", "")))
    return "".join(parts)


def _block_text(node: dict[str, Any]) -> str:
    """Text of a list item: its own paragraphs, then nested items joined with '; '."""
    own: list[str] = []
    nested: list[str] = []
    for child in node.get("children", []):
        if child["type"] in ("block_text", "paragraph"):
            own.append(inline_text(child.get("children", [])))
        elif child["type"] == "list":
            nested.extend(_block_text(item) for item in child.get("children", []))
        elif child["type"] == "block_code":
            own.append(child.get("raw", "").strip())
    text = " ".join(" ".join(own).split())
    if nested:
        text = f"{text} ({'; '.join(nested)})" if text else "; ".join(nested)
    return text


def category_of(heading: str) -> str | None:
    words = re.sub(r"[^a-z ]+", " ", heading.lower())
    if len(words.split()) > 6:
        return None  # a sentence that happens to say "scope" is not a heading
    for key, keys in _HEADING_WORDS:
        if any(word in words for word in keys):
            return key
    return None


def _heading_like(node: dict[str, Any]) -> str | None:
    """A heading, or a paragraph that is only bold text or ends with a colon."""
    if node["type"] == "heading":
        return inline_text(node.get("children", []))
    if node["type"] != "paragraph":
        return None
    children = node.get("children", [])
    if len(children) == 1 and children[0]["type"] == "strong":
        return inline_text(children)
    text = inline_text(children).strip()
    if text.endswith(":") and "\n" not in text and len(text) <= 60:
        return text[:-1]
    return None


def split_task(text: str, known: set[str] | None) -> tuple[str | None, str]:
    """(task id, text without a leading 'Task N:') for an item naming a known task."""
    lead = _LEADING_TASK.match(text)
    lead_id = lead and (lead.group("a") or lead.group("b") or lead.group("c"))
    if lead and lead_id and (known is None or lead_id in known):
        return lead_id, text[lead.end() :].strip() or text.strip()
    for match in _ANY_TASK.finditer(text):
        if known is None or match.group(1) in known:
            return match.group(1), text.strip()
    return None, text.strip()


def _source_nodes(text: str) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = _markdown()(text)
    fenced = [n for n in nodes if n["type"] == "block_code" and _info(n) == FENCE_INFO]
    if fenced:
        inner: list[dict[str, Any]] = _markdown()(fenced[-1].get("raw", ""))
        return inner
    return nodes


def _info(node: dict[str, Any]) -> str:
    return str((node.get("attrs") or {}).get("info") or "").strip().lower()


def parse_challenge(text: str, known_tasks: Iterable[str] | None = None) -> ParsedChallenge:
    """Findings per category key; ``parsed`` is False when no category heading appears."""
    known = set(known_tasks) if known_tasks is not None else None
    findings: dict[str, list[Finding]] = {key: [] for key, _ in CHALLENGE_CATEGORIES}
    current: str | None = None
    seen_heading = False
    for node in _source_nodes(text):
        heading = _heading_like(node)
        if heading is not None:
            current = category_of(heading)
            seen_heading = seen_heading or current is not None
            continue
        if current is None:
            continue
        if node["type"] == "list":
            items = [_block_text(item) for item in node.get("children", [])]
        elif node["type"] == "paragraph":
            items = [" ".join(inline_text(node.get("children", [])).split())]
        else:
            continue
        for item in items:
            if not item or _EMPTY_ITEM.match(item.strip()):
                continue
            task, body = split_task(item, known)
            findings[current].append(Finding(text=body, task=task))
    if not seen_heading:
        return ParsedChallenge(parsed=False)
    return ParsedChallenge(parsed=True, findings={k: v for k, v in findings.items() if v})

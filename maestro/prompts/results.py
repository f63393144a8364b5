"""Reading a spoke's final answer: the Result Submission and the Handoff Report.

Models wrap their answer in prose and sometimes in a ```markdown fence, and now and then
echo the template before filling it in. The parser reads the Markdown structure
(mistune's AST), looks inside such fences, and takes the last occurrence of each
section. Anything missing or malformed is named in ``problems``; an empty list is what
the format gate needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mistune
from mistune.core import BlockState
from mistune.renderers.markdown import MarkdownRenderer

from maestro.prompts.templates import (
    DOWNSTREAM,
    REPORT_STATUSES,
    SUBMISSION_SECTIONS,
    SUBMISSION_STATUSES,
    TASK_REPORT,
    TASK_REPORT_FIELDS,
    VALIDATION_RESULTS,
)

_SECTIONS = {name.lower(): name for name in (*SUBMISSION_SECTIONS, TASK_REPORT, DOWNSTREAM)}
_LIST_SECTIONS = ("Changes", "Verification", TASK_REPORT, DOWNSTREAM)
_FENCE_INFO = ("", "md", "markdown", "text", "txt")
_MARKER = re.compile(r"^\s{0,3}#{1,6}\s*(status|task report)\b", re.IGNORECASE | re.MULTILINE)
_NONE = {"none", "none.", "n/a", "na", "-", "nothing", "no issues", "no changes"}
_PLACEHOLDER = re.compile(r"^\[[^\]]*\]$")
# Task Report status <-> Result Submission status, for the consistency check.
_AGREES = {"success": ("success",), "partial": ("partial",), "failure": ("failed", "blocked")}


@dataclass
class Submission:
    status: str | None = None
    summary: str = ""
    changes: list[str] = field(default_factory=list)
    verification: list[tuple[bool, str]] = field(default_factory=list)
    issues: str = ""


@dataclass
class Handoff:
    task_report: dict[str, str] = field(default_factory=dict)  # field name -> value text
    downstream_context: str = ""  # the section as Markdown, injected into dependents' prompts

    @property
    def status(self) -> str | None:
        return self.task_report.get("Status")


@dataclass
class ParsedResult:
    submission: Submission | None
    handoff: Handoff | None
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def _markdown() -> Any:
    md = mistune.create_markdown(renderer=None, plugins=["task_lists"])
    # Spoke answers are full of paths and identifiers (`__init__.py`, `a_b_c`); reading
    # `_`/`*` runs as emphasis would rewrite them (`**init**.py`) when rendered back.
    # Keep those characters as written: the structure lives in blocks, not emphasis.
    md.inline.rules = [rule for rule in md.inline.rules if rule != "emphasis"]
    return md


def _render(nodes: list[dict[str, Any]]) -> str:
    class Verbatim(MarkdownRenderer):
        # The stock renderer backslash-escapes "!", "<", "&" and friends for a safe
        # re-parse; this text goes to people and prompts, so keep it as written.
        def text(self, token: dict[str, Any], state: BlockState) -> str:
            return str(token["raw"])

    return Verbatim()(nodes, BlockState()).strip()


def _inline_text(node: dict[str, Any]) -> str:
    if "raw" in node and node.get("type") in ("text", "codespan"):
        return str(node["raw"])
    return "".join(_inline_text(child) for child in node.get("children", []))


def _blocks(text: str, parse: Any, depth: int = 0) -> list[dict[str, Any]]:
    """The document's top-level blocks, with Markdown fences that hold a result opened up."""
    out: list[dict[str, Any]] = []
    for node in parse(text):
        info = ((node.get("attrs") or {}).get("info") or "").strip().lower()
        if (
            node["type"] == "block_code"
            and depth < 2
            and info in _FENCE_INFO
            and _MARKER.search(node["raw"])
        ):
            out += _blocks(node["raw"], parse, depth + 1)
        else:
            out.append(node)
    return out


def _sections(blocks: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Section name -> its blocks. A section ends at the next heading or rule; a list
    section also ends at prose after its list (the model's sign-off, not a field)."""
    found: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] | None = None
    name = None
    for node in blocks:
        kind = node["type"]
        if kind == "heading":
            title = _inline_text(node).strip().strip("*_:").strip().lower()
            name = _SECTIONS.get(title)
            current = None
            if name:
                current = found[name] = []  # a later occurrence replaces an echoed template
            continue
        if kind == "thematic_break":
            current = None
        if current is None or kind == "blank_line":
            continue
        if (
            name in _LIST_SECTIONS
            and kind == "paragraph"
            and any(n["type"] == "list" for n in current)
        ):
            current = None
            continue
        current.append(node)
    return found


def _is_none(text: str) -> bool:
    return text.strip().strip("*_").strip().lower() in _NONE


def _first_word(text: str) -> str:
    words = text.strip().strip("*_`").split()
    return words[0].strip("*_`.,;:").lower() if words else ""


def _list_items(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for node in nodes if node["type"] == "list" for item in node["children"]]


Nodes = list[dict[str, Any]]  # mistune AST blocks


def _parse_submission(sections: dict[str, Nodes], problems: list[str]) -> Submission | None:
    present = [name for name in SUBMISSION_SECTIONS if name in sections]
    if not present:
        problems.append(
            "no Result Submission found (sections ## Status, ## Summary, ## Changes, ## Verification, ## Issues)"
        )
        return None
    for name in SUBMISSION_SECTIONS:
        if name not in sections:
            problems.append(f"the Result Submission has no ## {name} section")
    sub = Submission()
    for name in present:
        _SUBMISSION_READERS[name](sub, sections[name], problems)
    return sub


def _read_status(sub: Submission, nodes: Nodes, problems: list[str]) -> None:
    raw = _render(nodes)
    word = _first_word(raw)
    word = "failed" if word == "failure" else word
    if "|" in raw:
        problems.append("## Status still holds the template's choices; it must be one word")
    elif word not in SUBMISSION_STATUSES:
        problems.append(
            f"## Status is {raw[:40]!r}; expected one of {', '.join(SUBMISSION_STATUSES)}"
        )
    else:
        sub.status = word


def _read_summary(sub: Submission, nodes: Nodes, problems: list[str]) -> None:
    sub.summary = _render(nodes)
    if not sub.summary or _PLACEHOLDER.match(sub.summary):
        problems.append("## Summary is empty or still the template placeholder")


def _read_changes(sub: Submission, nodes: Nodes, problems: list[str]) -> None:
    """List items, or the section's lines when the model wrote no list."""
    text = _render(nodes)
    items = [_render(item["children"]) for item in _list_items(nodes)]
    if not items and not _is_none(text):
        items = [line.strip() for line in text.splitlines() if line.strip()]
    sub.changes = [item for item in items if not _is_none(item)]


def _read_verification(sub: Submission, nodes: Nodes, problems: list[str]) -> None:
    """A checklist: - [x] met criterion, - [ ] unmet one."""
    for item in _list_items(nodes):
        body = _render(item["children"])
        if item["type"] == "task_list_item":
            sub.verification.append((bool(item["attrs"]["checked"]), body))
        else:
            problems.append(
                f"## Verification item is not a checkbox (- [x] or - [ ]): {body[:60]!r}"
            )
    if not sub.verification and not _is_none(_render(nodes)):
        problems.append(
            "## Verification must be a checklist: - [x] met criterion, - [ ] unmet criterion"
        )


def _read_issues(sub: Submission, nodes: Nodes, problems: list[str]) -> None:
    text = _render(nodes)
    sub.issues = "" if _is_none(text) else text


# Each section of a Result Submission, read into the Submission; problems appended.
_SUBMISSION_READERS: dict[str, Callable[[Submission, Nodes, list[str]], None]] = {
    "Status": _read_status,
    "Summary": _read_summary,
    "Changes": _read_changes,
    "Verification": _read_verification,
    "Issues": _read_issues,
}


# `Key: value`, `**Key:** value`, `**Key**: value` (or with `__`): the markers around the
# key are removed exactly, so a value that starts with `__init__` keeps its underscores.
_FIELD = re.compile(
    r"^\s*(?P<open>\*\*|__)?(?P<key>[^:*_][^:]*?)(?:(?P=open)\s*:|:\s*(?P=open)|:)(?P<value>.*)$"
)


def _fields(nodes: list[dict[str, Any]], known: tuple[str, ...]) -> dict[str, str]:
    """``- Key: value`` items (bold keys allowed, values may continue in nested blocks)."""
    lookup = {name.lower(): name for name in known}
    values: dict[str, str] = {}
    for item in _list_items(nodes):
        first, _, rest = _render(item["children"]).partition("\n")
        match = _FIELD.match(first)
        name = lookup.get(match.group("key").strip().lower()) if match else None
        if match is None or name is None:
            continue
        value = match.group("value").strip()
        values[name] = (value + ("\n" + rest if rest.strip() else "")).strip()
    return values


def _parse_handoff(
    sections: dict[str, list[dict[str, Any]]], problems: list[str]
) -> Handoff | None:
    if TASK_REPORT not in sections and DOWNSTREAM not in sections:
        problems.append(
            f"no Handoff Report found (sections ### {TASK_REPORT} and ### {DOWNSTREAM})"
        )
        return None
    handoff = Handoff()
    if TASK_REPORT not in sections:
        problems.append(f"the Handoff Report has no ### {TASK_REPORT}")
    else:
        handoff.task_report = _fields(sections[TASK_REPORT], TASK_REPORT_FIELDS)
        missing = [name for name in TASK_REPORT_FIELDS if name not in handoff.task_report]
        if missing:
            problems.append(f"the Task Report lacks: {', '.join(missing)}")
        status = handoff.task_report.get("Status")
        if status is not None:
            word = _first_word(status)
            word = "failure" if word == "failed" else word
            if "|" in status or word not in REPORT_STATUSES:
                problems.append(
                    f"Task Report Status is {status[:40]!r}; expected one of {', '.join(REPORT_STATUSES)}"
                )
            else:
                handoff.task_report["Status"] = word
        validation = handoff.task_report.get("Validation")
        if validation is not None:
            word = _first_word(validation)
            if "|" in validation or word not in VALIDATION_RESULTS:
                problems.append(
                    f"Task Report Validation is {validation[:40]!r}; expected one of {', '.join(VALIDATION_RESULTS)}"
                )
            else:
                handoff.task_report["Validation"] = word
    if DOWNSTREAM not in sections:
        problems.append(f"the Handoff Report has no ### {DOWNSTREAM}")
    else:
        handoff.downstream_context = _render(sections[DOWNSTREAM])
        if not handoff.downstream_context:
            problems.append(f"### {DOWNSTREAM} is empty (write 'none' in each field instead)")
    return handoff


def parse_result(text: str) -> ParsedResult:
    if not text or not text.strip():
        return ParsedResult(None, None, ["the answer is empty"])
    sections = _sections(_blocks(text, _markdown()))
    problems: list[str] = []
    submission = _parse_submission(sections, problems)
    handoff = _parse_handoff(sections, problems)
    agrees = _AGREES.get(handoff.status or "") if handoff else None
    if handoff and submission and submission.status and agrees and submission.status not in agrees:
        problems.append(
            f"## Status says {submission.status} but the Task Report says {handoff.status}"
        )
    return ParsedResult(submission, handoff, problems)

"""The reviewer's final structured block, and nothing else, decides the verdict.

A reviewer's prose is free; only the last thing in its answer counts, and it must be a
fenced block in exactly this form (the prompt shows it verbatim)::

    ```maestro-review
    verdict: request-changes
    - major: src/auth.py: the token expiry is never checked
    - minor: the new helper has no docstring
      (a line indented under a finding continues it)
    ```

``verdict`` is one of approve, request-changes, flag. Each finding is ``- SEVERITY: text``
with SEVERITY one of critical, major, minor, note; ``- none`` stands for no findings.
Case and the separator in "request changes" are forgiven; anything else is a format
failure with the reason, so a chatty or truncated answer is never taken as approval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import mistune

from maestro.state.model import SEVERITIES, VERDICTS, Finding

FENCE_INFO = "maestro-review"
BLOCKING = ("critical", "major")

FORMAT_SPEC = f"""\
End your answer with exactly one fenced block, and write nothing after it:

```{FENCE_INFO}
verdict: approve | request-changes | flag
- critical|major|minor|note: <one finding: file and line if it has one, what is wrong, what to do>
```

Rules: one `verdict:` line first; then one `- severity: text` line per finding (indent a line
to continue the finding above it), or `- none`. approve may carry only minor and note
findings; request-changes and flag need at least one finding."""

_VERDICT = re.compile(r"^verdict\s*:\s*(?P<value>.+?)\s*$", re.IGNORECASE)
_FINDING = re.compile(r"^[-*]\s*(?P<severity>[a-z]+)\s*:\s*(?P<text>.+?)\s*$", re.IGNORECASE)
_NONE = re.compile(r"^[-*]\s*none\.?\s*$", re.IGNORECASE)
_FINDINGS_LABEL = re.compile(r"^findings\s*:\s*$", re.IGNORECASE)


@dataclass
class ParsedReview:
    verdict: str | None
    findings: list[Finding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.verdict is not None


def _final_block(text: str) -> tuple[str | None, str | None]:
    """(block body, problem): the body of the answer's last node if it is our block."""

    tree = mistune.create_markdown(renderer=None)(text)
    assert isinstance(tree, list)  # renderer=None: the AST, not text
    nodes = [n for n in tree if n["type"] != "blank_line"]
    if not nodes:
        return None, "the answer is empty"
    ours = [i for i, n in enumerate(nodes) if n["type"] == "block_code" and _info(n) == FENCE_INFO]
    if not ours:
        return None, f"no ```{FENCE_INFO} block in the answer"
    if ours[-1] != len(nodes) - 1:
        return None, f"text follows the last ```{FENCE_INFO} block; it must end the answer"
    return str(nodes[-1].get("raw", "")), None


def _info(node: dict[str, Any]) -> str:
    return str((node.get("attrs") or {}).get("info") or "").strip().lower()


def normalize_verdict(value: str) -> str | None:
    cleaned = re.sub(r"[\s_]+", "-", value.strip().strip("`*").lower())
    return cleaned if cleaned in VERDICTS else None


def parse_review(text: str, task_id: str | None = None) -> ParsedReview:
    body, problem = _final_block(text)
    if body is None:
        return ParsedReview(None, problems=[problem or "no review block"])
    lines = [(number, raw) for number, raw in enumerate(body.splitlines(), start=1) if raw.strip()]
    if not lines:
        return ParsedReview(None, problems=["the block has no 'verdict:' line"])
    verdict, problem = _read_verdict(*lines[0])
    if verdict is None:
        return ParsedReview(None, problems=[problem or "no verdict"])
    findings, said_none, problems = _read_findings(lines[1:], task_id)
    problems += _contradictions(verdict, findings, said_none)
    if problems:
        return ParsedReview(None, findings, problems)
    return ParsedReview(verdict, findings)


def _read_verdict(number: int, raw: str) -> tuple[str | None, str | None]:
    """(verdict, None), or (None, the problem) for a first line that is no valid verdict."""
    line = raw.strip()
    match = _VERDICT.match(line)
    if not match:
        return None, f"line {number} of the block must be 'verdict: ...', found {line!r}"
    verdict = normalize_verdict(match.group("value"))
    if verdict is None:
        return None, f"verdict {match.group('value')!r} is not one of {', '.join(VERDICTS)}"
    return verdict, None


def _read_findings(
    lines: list[tuple[int, str]], task_id: str | None
) -> tuple[list[Finding], bool, list[str]]:
    """(findings, whether '- none' was said, problems) from the lines after the verdict;
    an indented line continues the finding above it."""
    findings: list[Finding] = []
    problems: list[str] = []
    said_none = False
    for number, raw in lines:
        line = raw.strip()
        if _FINDINGS_LABEL.match(line):
            continue
        if _NONE.match(line):
            said_none = True
            continue
        finding = _FINDING.match(line)
        if finding:
            severity = finding.group("severity").lower()
            if severity in SEVERITIES:
                findings.append(
                    Finding(text=finding.group("text"), task=task_id, severity=severity)
                )
            else:
                problems.append(
                    f"line {number}: severity {severity!r} is not one of {', '.join(SEVERITIES)}"
                )
        elif raw[:1] in (" ", "\t") and findings:
            findings[-1].text = f"{findings[-1].text} {line}"
        else:
            problems.append(
                f"line {number} of the block is not a finding ('- severity: text'): {line!r}"
            )
    return findings, said_none, problems


def _contradictions(verdict: str, findings: list[Finding], said_none: bool) -> list[str]:
    """A block that says two things: never taken as a verdict."""
    problems = []
    if said_none and findings:
        problems.append("the block says '- none' and also lists findings")
    if verdict == "approve" and any(f.severity in BLOCKING for f in findings):
        problems.append("verdict approve with a critical or major finding contradicts itself")
    if verdict in ("request-changes", "flag") and not findings:
        problems.append(f"verdict {verdict} needs at least one finding")
    return problems

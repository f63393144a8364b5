"""The ``sim`` spoke: offline, no account, deterministic.

It does what a well-behaved worker would do with the task's declared files (writes them
with plausible content of their type) and answers in the exact Result Submission and
Handoff Report formats, so ``--dry-run`` previews, ``maestro demo`` and tests exercise the
whole pipeline. It always says it is simulated, in its text and in ``result.simulated``.
Its token counts are measured (cl100k) on its prompt and answer; it costs nothing. It
prints what a streaming CLI prints, in Claude Code's ``stream-json`` shape (its start, each
file it wrote as a Write or Edit call, its answer, its tokens), and that is kept as a real
spoke's stream is: ``maestro demo --keep``, then ``maestro board``, shows each transcript.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro import roster
from maestro.agents.tiers import can_write
from maestro.clis.simfiles import MARK, appended_note, content_for
from maestro.config import convert
from maestro.defaults import SETTINGS_BY_KEY
from maestro.formatting import shown_path
from maestro.fsutil import atomic_write
from maestro.process import ProcessOutcome
from maestro.spokes.base import Runner, Spoke
from maestro.spokes.contract import DispatchRequest, SpokeResult, fail
from maestro.state.model import Usage
from maestro.tokens import count_tokens

_CRITERION = re.compile(
    r"^\s*[-*]\s*\[ \]\s*(.+?)\s*$|<criterion>\s*(.+?)\s*</criterion>", re.MULTILINE
)


@dataclass
class Work:
    created: list[tuple[Path, str]] = field(default_factory=list)
    modified: list[tuple[Path, str]] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # as a CLI's tools


def printed(session: str, work: Work, text: str, usage: Usage) -> str:
    """Its stdout: the events Claude Code prints with ``--output-format stream-json``, one
    JSON object a line, for what the sim did."""
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": session, "model": "sim"}
    ]
    for n, (tool, given) in enumerate(work.calls):
        call = {"type": "tool_use", "id": f"sim-{n}", "name": tool, "input": given}
        said = f"{'wrote' if tool == 'Write' else 'edited'} {given['file_path']}"
        done = {"type": "tool_result", "tool_use_id": f"sim-{n}", "content": said}
        events.append({"type": "assistant", "message": {"role": "assistant", "content": [call]}})
        events.append({"type": "user", "message": {"role": "user", "content": [done]}})
    answer = {"type": "text", "text": text}
    events.append({"type": "assistant", "message": {"role": "assistant", "content": [answer]}})
    tokens = {"input_tokens": usage.input, "output_tokens": usage.output}
    end = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1}
    events.append({**end, "result": text, "session_id": session, "usage": tokens})
    return "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events)


def _title(req: DispatchRequest) -> str:
    if req.title:
        return req.title.strip()
    match = re.search(r"^##\s*Task\s*\n+\s*(.+)$", req.prompt, re.MULTILINE)
    if match:
        return match.group(1).strip()
    return f"task {req.task_id}" if req.task_id else "the task"


def criteria(prompt: str) -> list[str]:
    """Success criteria named in a prompt: '- [ ] text' lines of its Success Criteria
    section (other sections, such as the Output Format's template, are not criteria) or
    <criterion> elements."""
    section = re.search(
        r"^##\s*Success Criteria\s*\n(.*?)(?=^##\s|\Z)", prompt, re.MULTILINE | re.DOTALL
    )
    found: list[str] = []
    for match in _CRITERION.finditer(section.group(1) if section else prompt):
        text = (match.group(1) or match.group(2)).strip()
        if text and text not in found:
            found.append(text)
    return found


def _changes(req: DispatchRequest, work: Work, root: Path) -> list[str]:
    """The ## Changes list: each file written, or why none was."""
    changes = [f"- Created {shown_path(p, root)}: {why}" for p, why in work.created]
    changes += [f"- Modified {shown_path(p, root)}: {why}" for p, why in work.modified]
    if changes:
        return changes
    return [
        "- None" + ("" if can_write(req.tier) else f" (tool tier {req.tier}: no files written)")
    ]


def _interfaces(work: Work, root: Path) -> str:
    """The interface each Python module it created offers (the content it writes has one)."""
    return (
        "; ".join(
            f"summarize(items: list[str]) -> str in {shown_path(p, root)}"
            for p, _ in work.created
            if p.suffix == ".py" and not p.name.startswith("test_")
        )
        or "none"
    )


class SimSpoke(Spoke):
    # It writes only the declared files, and nothing at all without a write tier: every
    # tier is enforced (unenforced_tiers stays empty).
    name = "sim"
    simulated = True

    def build_argv(self, req: DispatchRequest) -> list[str]:
        argv = ["sim", "--tier", req.tier]
        if req.model:
            argv += ["--model", req.model]
        return argv + [str(f) for f in req.files]

    def delay(self, req: DispatchRequest, env: dict[str, str]) -> float:
        """The request's delay, else the ``sim_delay`` setting (checked, with every other
        setting, when the settings are read: before any dispatch)."""
        if req.sim_delay_s is not None:
            return max(0.0, float(req.sim_delay_s))
        if self.settings is not None:
            return float(self.settings.sim_delay)
        setting = SETTINGS_BY_KEY["sim_delay"]
        return float(convert(setting, env.get(setting.env, ""), "environment"))

    # -- the work ---------------------------------------------------------------------------
    def write_files(self, req: DispatchRequest, title: str, task: str) -> Work:
        work = Work()
        root = req.cwd.resolve()
        files = [f if f.is_absolute() else root / f for f in req.files]
        for path in files:
            resolved = path.resolve()
            if not resolved.is_relative_to(root):
                work.refused.append((path, "outside the project folder"))
                continue
            if path.is_dir():
                work.refused.append((path, "is a folder"))
                continue
            if path.exists():
                note = appended_note(path, title, task)
                if note is None:
                    work.refused.append(
                        (path, "exists and its format has no comments; left unchanged")
                    )
                    continue
                try:
                    old = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    work.refused.append((path, "exists and is not readable text; left unchanged"))
                    continue
                atomic_write(path, old + note)
                work.modified.append((path, "appended a note"))
                shown = shown_path(path, root)
                work.calls.append(
                    ("Edit", {"file_path": shown, "old_string": "", "new_string": note})
                )
                continue
            content, purpose = content_for(path, title, task, files)
            atomic_write(path, content)
            work.created.append((path, purpose))
            work.calls.append(("Write", {"file_path": shown_path(path, root), "content": content}))
        return work

    def answer(self, req: DispatchRequest, title: str, task: str, work: Work) -> str:
        root = req.cwd.resolve()
        touched = len(work.created) + len(work.modified)
        status = "partial" if work.refused else "success"
        changes = _changes(req, work, root)
        checks = (
            req.criteria
            or criteria(req.prompt)
            or ["The declared files exist with content of their type"]
        )
        verification = [f"- [x] {c} - simulated: not checked by a model" for c in checks]
        issues = "; ".join(f"{shown_path(p, root)} {why}" for p, why in work.refused) or "None"
        created = "; ".join(f"{p} ({why})" for p, why in work.created) or "none"
        modified = "; ".join(f"{p} ({why})" for p, why in work.modified) or "none"
        interfaces = _interfaces(work, root)
        return "\n".join(
            [
                "## Status",
                status,
                "",
                "## Summary",
                f"{MARK}: wrote {touched} file(s) for task {task} ({title}); no model was called.",
                "",
                "## Changes",
                *changes,
                "",
                "## Verification",
                *verification,
                "",
                "## Issues",
                issues,
                "",
                "### Task Report",
                f"- Status: {'partial' if work.refused else 'success'}",
                f"- Objective Achieved: {title} (task {task}) simulated: declared files written, nothing verified by a model.",
                f"- Files Created: {created}",
                f"- Files Modified: {modified}",
                "- Files Deleted: none",
                "- Decisions Made: content chosen by file type by the simulated spoke",
                "- Validation: skipped",
                "- Validation Output: N/A (the simulated spoke runs no commands)",
                f"- Errors: {issues if work.refused else 'none'}",
                f"- Scope Deviations: {issues if work.refused else 'none'}",
                "",
                "### Downstream Context",
                f"- Key Interfaces Introduced: {interfaces}",
                "- Patterns Established: none",
                "- Integration Points: none",
                "- Assumptions: the content is a simulated stand-in",
                "- Warnings: simulated output; replace it with real work before relying on it",
                "",
            ]
        )

    # -- the call ---------------------------------------------------------------------------
    def execute(
        self,
        req: DispatchRequest,
        env: dict[str, str],
        runner: Runner,
        on_start: Callable[[int], None] | None,
    ) -> SpokeResult:
        """Runs in-process: ``runner`` is unused, ``on_start`` gets this process's pid."""
        started = time.monotonic()
        wait = self.delay(req, env)
        if on_start is not None:
            on_start(os.getpid())
        argv = self.build_argv(req)
        if wait >= req.timeout_s:
            time.sleep(req.timeout_s)
            outcome = ProcessOutcome("", "", None, True, time.monotonic() - started)
            return self._finish(
                fail(
                    self.name,
                    "timeout",
                    f"sim gave no result within the time limit of {req.timeout_s:g}s (delay {wait:g}s).",
                ),
                outcome,
                argv,
            )
        time.sleep(wait)
        title = _title(req)
        task = req.task_id or "-"
        prompt_tokens = count_tokens("\n\n".join(p for p in (req.system_prompt, req.prompt) if p))
        if req.abort_tokens and prompt_tokens > req.abort_tokens:
            outcome = ProcessOutcome("", "", None, False, time.monotonic() - started, aborted=True)
            result = fail(self.name, "over_budget", "", usage=Usage(input=prompt_tokens))
            return self._finish(self._over(result, req), outcome, argv)
        work = self.write_files(req, title, task) if can_write(req.tier) else Work()
        text = self.answer(req, title, task, work)
        usage = Usage(input=prompt_tokens, output=count_tokens(text))
        digest = hashlib.sha256(f"{task}\0{req.prompt}".encode()).hexdigest()[:16]
        session = f"sim-{digest}"
        result = SpokeResult(
            tool=self.name, text=text, success=True, usage=usage, session_id=session, model="sim"
        )
        stdout = printed(session, work, text, usage)
        outcome = ProcessOutcome(stdout, "", 0, False, time.monotonic() - started)
        if req.abort_tokens and usage.total > req.abort_tokens:
            return self._finish(self._over(result, req), outcome, argv)
        return self._finish(result, outcome, argv)

    def _over(self, result: SpokeResult, req: DispatchRequest) -> SpokeResult:
        result.success, result.error_kind, result.aborted_over_budget = False, "over_budget", True
        result.error = f"sim used {result.usage.total:,} tokens, over its abort threshold of {req.abort_tokens:,} tokens."
        return result

    def _finish(self, result: SpokeResult, outcome: ProcessOutcome, argv: list[str]) -> SpokeResult:
        result.tool, result.simulated, result.argv = self.name, True, argv
        result.cost, result.cost_estimated = 0.0, False  # nothing was spent
        result.duration_s, result.exit_code, result.timed_out = (
            outcome.duration_s,
            outcome.exit_code,
            outcome.timed_out,
        )
        result.stdout = outcome.stdout
        return result


CLI = roster.Cli(
    "sim",
    "Simulated",
    "Sim",
    real=False,
    budget=(55_000, 65_000, 80_000),
    install_hint="nothing to install: the sim spoke is built into Maestro",
    spoke=SimSpoke,
)
roster.register(CLI)

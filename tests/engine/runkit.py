"""Helpers for run-engine tests: a plan written through `maestro plan --from`, spoke
answers in the real result format, and readers for the plan, events and fake calls."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from maestro.config import load_settings
from maestro.state.store import PlanStore

CRITERION = "the module defines greet(name) returning a greeting"


def answer(
    criteria: list[str] | None = None,
    *,
    status: str = "success",
    checked: bool = True,
    summary: str = "Wrote the module.",
    downstream: str = "greet(name) -> str in src/app.py",
) -> str:
    """A spoke's final message with a Result Submission and a Handoff Report."""
    criteria = [CRITERION] if criteria is None else criteria
    mark = "x" if checked else " "
    report_status = {"success": "success", "partial": "partial"}.get(status, "failure")
    verification = (
        "\n".join(f"- [{mark}] {c}: checked by reading the file" for c in criteria) or "- none"
    )
    return f"""I did the task.

## Status
{status}

## Summary
{summary}

## Changes
- src/app.py: created, the module

## Verification
{verification}

## Issues
None

### Task Report
- Status: {report_status}
- Objective Achieved: the module exists
- Files Created: src/app.py
- Files Modified: none
- Files Deleted: none
- Decisions Made: none
- Validation: pass
- Validation Output: ok
- Errors: none
- Scope Deviations: none

### Downstream Context
- Key Interfaces Introduced: {downstream}
- Patterns Established: none
- Integration Points: none
- Assumptions: none
- Warnings: none
"""


def step(
    path: str = "src/app.py",
    *,
    content: str = "def greet(name):\n    return f'hi {name}'\n",
    usage: tuple[int, int] = (1000, 200),
    **extra: Any,
) -> dict[str, Any]:
    """A fake-CLI step that writes ``path`` and answers in the result format."""
    out: dict[str, Any] = {"text": answer(), "usage": {"input": usage[0], "output": usage[1]}}
    if path:
        out["write"] = [{"path": path, "content": content}]
    out.update(extra)
    return out


def task(tid: int, title: str | None = None, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": tid,
        "title": title or f"Write module number {tid}",
        "specialist": "code",
        "files": ["src/app.py"],
        "criteria": [CRITERION],
        "validation": "test -f src/app.py",
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def write_plan(
    cli: Any,
    root: Path,
    tasks: list[dict[str, Any]],
    *,
    hub: str = "claude",
    goal: str = "Add a greeting module",
) -> None:
    source = root.parent / "plan-input.yaml"
    source.write_text(
        yaml.safe_dump({"version": 1, "goal": goal, "hub": hub, "tasks": tasks}, sort_keys=False)
    )
    result = cli("plan", "--from", str(source), "--yes")
    assert result.code == 0, result.err + result.out


def plan(root: Path) -> Any:
    return PlanStore(load_settings(root).paths).load()


def events(root: Path, run_id: str | None = None) -> list[dict[str, Any]]:
    runs = root / ".ai" / "maestro" / "runs"
    run_id = run_id or (runs / "latest").read_text().strip()
    path = runs / run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def kinds(root: Path) -> list[str]:
    return [e["kind"] for e in events(root)]


def prompt_of(call: dict[str, Any]) -> str:
    """The prompt a fake CLI received: the longest argv element."""
    return max(call["argv"], key=len)


@pytest.fixture
def runenv(project, fake_clis, monkeypatch):
    """A git project with one commit, fake CLIs on PATH, no stagger or backoff waits."""
    (project / "README.md").write_text("project\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=project, check=True)
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    monkeypatch.setenv("MAESTRO_RETRY_BACKOFF", "0")
    return fake_clis


def left_running(marker: bytes) -> list[str]:
    """Processes whose command line holds ``marker``, once those ending have gone (5 s)."""
    deadline = time.monotonic() + 5
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)

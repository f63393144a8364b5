"""The real host CLIs as Maestro's spokes (HOSTS.md section 4): what users depend on.

`maestro run`, `challenge` and `review` run in-process against the pinned claude, gemini
and codex, each pointed at one loopback fake model. The fake scripts the model's side:
it writes with the CLI's own write tool and answers in Maestro's result format, so a
pass proves the argv Maestro builds, the tier each CLI enforces and the parsing of each
CLI's real output. Runs only with the pinned CLIs installed (see test_hosts.py).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine.runkit import answer, events, plan, write_plan

from .fake_model import FakeModel, Hang, HttpError, ToolCall, WriteFile, tool_results
from .hostenv import needs

pytestmark = pytest.mark.realcli

VENDORS = ("claude", "gemini", "codex")
API = {"claude": "anthropic", "gemini": "gemini", "codex": "openai"}
CRITERION = "hello.txt greets the world"
CONTENT = "hello, world\n"
# A vendor of another CLI for each: who challenges or reviews what a CLI wrote.
OTHER = {"claude": "gemini", "gemini": "codex", "codex": "claude"}
# What each CLI answers a read-only model that calls its write tool anyway.
REFUSALS = {
    "claude": ("No such tool available: Write",),
    "gemini": ("write_file", "not found"),
    # Confined by Maestro with its own sandbox bypassed: the system refuses its apply_patch.
    "codex": ("Failed to write file",),
}
# The tools each CLI offers a read-only spoke's model (codex: its sandbox refuses writes).
READ_ONLY_TOOLS = {
    "claude": {"Read", "Grep", "Glob"},
    "gemini": {"read_file", "grep_search", "glob", "list_directory"},
}


def refused(tool: str, results: list[str]) -> bool:
    return any(all(words in result for words in REFUSALS[tool]) for result in results)


def one_task(cli: Any, root: Path, tool: str, **fields: Any) -> None:
    task = {
        "id": 1,
        "title": "Write the greeting file",
        "specialist": "code",
        "tool": tool,
        "files": ["hello.txt"],
        "criteria": [CRITERION],
        "validation": "grep -q world hello.txt",
    }
    merged = {key: value for key, value in {**task, **fields}.items() if value is not None}
    write_plan(cli, root, [merged], hub=OTHER[tool], goal="Greet the world")


def result_text() -> str:
    return answer([CRITERION], summary="Wrote hello.txt.").replace("src/app.py", "hello.txt")


WORKTREE = re.compile(r"(/[^\s\"'`\\<>]*/\.ai/maestro/worktrees/[^/\s\"'`\\<>]+)/")


def worktree_of(body: Any) -> Path:
    """The worktree a dispatch works in, as its prompt names it (the deliverables' paths)."""
    found = WORKTREE.search(json.dumps(body))
    assert found, "the prompt names no worktree"
    return Path(found.group(1))


def write_then_answer(name: str, written: list[Path] | None = None) -> Any:
    """The model writes ``name`` where its prompt says (the dispatch's worktree) with the
    CLI's own tool, then answers once it came back."""

    def reply(api: str, body: Any) -> Any:
        if not tool_results(api, body):
            path = worktree_of(body) / name
            if written is not None:
                written.append(path)
            return WriteFile(str(path), CONTENT)
        return result_text()

    return reply


def git_status(root: Path) -> str:
    """The user's files as git sees them (the state dir aside)."""
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", ".", ":!.ai"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def task_row(root: Path) -> Any:
    return plan(root).task("1")


def attempts_events(root: Path) -> list[dict[str, Any]]:
    return [e for e in events(root) if e["kind"] == "task_started"]


def claude_printed(root: Path, attempt: int = 1) -> dict[str, Any]:
    """The result object claude printed for one dispatch (kept by the detailed log; the
    run streams, so it is the last event)."""
    runs = root / ".ai" / "maestro" / "runs"
    run = runs / (runs / "latest").read_text().strip()
    text = (run / f"task-1-attempt-{attempt}.output.txt").read_text()
    stdout = text.split("--- stdout ---\n", 1)[1].split("\n--- stderr ---", 1)[0]
    (result,) = [e for e in map(json.loads, stdout.splitlines()) if e.get("type") == "result"]
    return result


# ---- a task done with each CLI's own write tool ----------------------------------------


@pytest.mark.parametrize("tool", VENDORS)
def test_spoke_writes_with_its_own_tool_and_the_task_is_done(cli, model, project, tool):
    needs(tool)
    one_task(cli, project, tool)
    written: list[Path] = []
    model.reply = write_then_answer("hello.txt", written)
    out = cli("run")
    assert out.code == 0, out.out + out.err
    task = task_row(project)
    assert task.status == "done" and task.attempts == 1, task.result
    # The CLI wrote in its worktree; the edit reached the user's tree after the gates, and
    # the worktree is gone.
    (path,) = written
    assert path.parent.parent == project / ".ai" / "maestro" / "worktrees"
    assert (project / "hello.txt").read_text() == CONTENT and not path.parent.exists()
    assert git_status(project) == "?? hello.txt\n"
    results = tool_results(API[tool], model.model_requests()[-1].body)
    assert len(results) == 1  # the write went through the CLI's tool and came back
    # Tokens are what the model reported, summed over every call of the session.
    sent_in, sent_out = model.tokens()
    assert (task.usage.input + task.usage.cached, task.usage.output) == (sent_in, sent_out)
    assert len(model.reported) >= 2
    if tool == "claude":
        printed = claude_printed(project)
        assert task.cost == printed["total_cost_usd"] and task.cost > 0 and not task.cost_estimated
    else:
        assert task.cost_estimated  # no dollars from gemini or codex: Maestro's estimate, labelled


@pytest.mark.parametrize("tool", VENDORS)
def test_spoke_told_to_write_the_users_tree_never_lands_there(cli, model, project, tool):
    """A model that writes the project's own file (an absolute path outside its worktree):
    the CLI refuses it (its sandbox or workspace is the worktree), or Maestro's scope gate
    catches it; the task is never done with that write."""
    needs(tool)
    one_task(cli, project, tool)
    target = project / "hello.txt"

    def reply(api: str, body: Any) -> Any:
        worktree_of(body)  # the prompt names the worktree, not the project
        if not tool_results(api, body):
            return WriteFile(str(target), CONTENT)
        return result_text()

    model.reply = reply
    cli("run")
    task = task_row(project)
    assert task.status in ("failed", "blocked"), task.result
    if target.exists():
        assert "wrote outside its worktree" in (task.result or ""), task.result
    assert not [p for p in (project / ".ai" / "maestro" / "worktrees").iterdir() if p.is_dir()]


# ---- a read-only spoke cannot write ----------------------------------------------------


@pytest.mark.parametrize("tool", VENDORS)
def test_read_only_spoke_whose_model_tries_to_write_writes_nothing(cli, model, project, tool):
    needs(tool)
    one_task(
        cli,
        project,
        tool,
        title="Review the project for risks",
        specialist=None,
        agent="code-reviewer",
        files=None,
        criteria=["the review names each risk"],
        validation=None,
    )
    target = project / "notes.md"
    seen: list[str] = []

    def reply(api: str, body: Any) -> Any:
        results = tool_results(api, body)
        if not results:
            return WriteFile(str(target), "written by a read-only spoke\n")
        seen.extend(results)
        return answer(["the review names each risk"]).replace("src/app.py", "notes.md")

    model.reply = reply
    cli("run")
    assert not target.exists()
    assert refused(tool, seen), seen
    if tool in READ_ONLY_TOOLS:
        assert offered(model) == READ_ONLY_TOOLS[tool]
    else:
        assert "web_search" not in offered(model)
    assert (
        subprocess.run(
            ["git", "status", "--porcelain", "--", "notes.md"],
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        == ""
    )


# ---- challenge and review by another vendor, read-only ----------------------------------

CHALLENGE = """Checked the plan against the code.

```maestro-challenge
## Assumption issues
- Task 1: assumes hello.txt does not exist yet
## Missing dependencies
- none
## Scope concerns
- none
## Alternative approaches
- Task 1: print the greeting from README.md instead
```
"""

# flag: the task is blocked for a person at once (request-changes would send the task
# back to its author, a second real dispatch this test does not need).
REVIEW = """The file is there and greets the world.

```maestro-review
verdict: flag
- major: hello.txt: the greeting has no trailing punctuation
```"""


def refused_writer(path: Path, final: str, seen: list[str]) -> Any:
    def reply(api: str, body: Any) -> Any:
        results = tool_results(api, body)
        if not results:
            return WriteFile(str(path), "overwritten by a read-only reviewer\n")
        seen.extend(results)
        return final

    return reply


@pytest.mark.parametrize("tool", VENDORS)
def test_challenge_by_another_vendor_cannot_write_and_its_answer_is_parsed(
    cli, model, project, tool
):
    needs(tool)
    one_task(cli, project, OTHER[tool])  # the plan's hub is another vendor than the challenger
    target = project / "README.md"
    seen: list[str] = []
    model.reply = refused_writer(target, CHALLENGE, seen)
    out = cli("challenge", "--tool", tool)
    assert out.code == 0, out.out + out.err
    assert target.read_text() == "project\n" and refused(tool, seen), seen
    challenge = plan(project).challenges[-1]
    assert challenge.challenger == tool and challenge.parsed
    assert [f.text for f in challenge.findings["alternatives"]] == [
        "print the greeting from README.md instead"
    ]
    assert [f.task for f in challenge.findings["assumptions"]] == ["1"]
    assert_streamed(project, "challenges", challenge.id)


@pytest.mark.parametrize("tool", VENDORS)
def test_review_by_another_vendor_cannot_write_and_its_verdict_is_parsed(cli, model, project, tool):
    author = OTHER[tool]
    needs(tool)
    needs(author)
    one_task(cli, project, author)
    model.reply = write_then_answer("hello.txt")
    assert cli("run").code == 0
    before = (project / "hello.txt").read_text()
    seen: list[str] = []
    model.reply = refused_writer(project / "hello.txt", REVIEW, seen)
    out = cli("review", "1", "--tool", tool)
    assert (project / "hello.txt").read_text() == before and refused(tool, seen), seen
    review = plan(project).reviews[-1]
    assert review.reviewer == tool and review.verdict == "flag", out.out + out.err
    assert review.outcome == "blocked" and task_row(project).status == "blocked"
    assert [(f.severity, f.text) for f in review.findings] == [
        ("major", "hello.txt: the greeting has no trailing punctuation")
    ]
    assert_streamed(project, "reviews", review.id)


def assert_streamed(project: Path, kind: str, record_id: str) -> None:
    """The reader's CLI streamed (an event a line, several lines), its lines kept in the
    reviews' or challenges' folder beside what names the recorded review or challenge."""
    kept = project / ".ai" / "maestro" / kind
    about = [json.loads(p.read_text()) for p in kept.glob("*.json")]
    assert [a.get("id") for a in about] == [record_id], about
    lines = (kept / f"{about[0]['session']}.stream.jsonl").read_text().splitlines()
    assert len(lines) > 2 and all(isinstance(json.loads(line), dict) for line in lines), lines


# ---- HTTP errors from the model: Maestro's ladder decides ---------------------------------


def failing_first(status: int, then: Any) -> Any:
    """The first model call fails with ``status``; later calls follow ``then``."""
    calls: list[int] = []

    def reply(api: str, body: Any) -> Any:
        calls.append(1)
        return HttpError(status) if len(calls) == 1 else then(api, body)

    return reply


@pytest.mark.parametrize("status", [429, 500])
@pytest.mark.parametrize("tool", VENDORS)
def test_transient_http_error_is_retried_by_maestro(cli, model, project, tool, status):
    needs(tool)
    one_task(cli, project, tool)
    model.reply = failing_first(status, write_then_answer("hello.txt"))
    started = time.monotonic()
    out = cli("run")
    assert out.code == 0, out.out + out.err
    task = task_row(project)
    assert task.status == "done" and (project / "hello.txt").read_text() == CONTENT
    # The CLI failed fast and Maestro retried it: two dispatches, not the CLI's own retries.
    assert len(attempts_events(project)) == 2
    assert time.monotonic() - started < 60
    (retried,) = [e for e in events(project) if e["kind"] == "task_retry"]
    # Retried as it is (a transient failure), not with "expanded context" for a bad answer.
    assert retried["action"] == "retry", retried
    assert ("rate limit" if status == 429 else "server") in retried["reason"], retried
    if tool != "codex":  # codex names no status for a 500, only "high demand"
        assert f"HTTP {status}" in retried["reason"], retried


@pytest.mark.parametrize("tool", VENDORS)
def test_auth_error_fails_once_with_the_fix(cli, model, project, tool):
    needs(tool)
    one_task(cli, project, tool)
    model.reply = lambda api, body: HttpError(401)
    out = cli("run")
    assert out.code == 2
    task = task_row(project)
    assert task.status == "failed" and len(attempts_events(project)) == 1
    (failed,) = [e for e in events(project) if e["kind"] == "task_failed"]
    assert "auth" in failed["reason"] and "401" in failed["reason"], failed
    assert failed["fix"].startswith(f"log in to {tool}") and failed["fix"] in out.out


# ---- a model that never answers -----------------------------------------------------------


def offered(fake: FakeModel) -> set[str]:
    """The tool names the CLI offered the model in its first request. A tool declared
    with ``defer_loading`` is not offered: the API keeps it out of the model's context
    until a tool search loads it (Claude Code 2.1.332 declares one,
    ``DeferredToolPlaceholder``, "never call this tool"; called, it answers "No such tool
    available", and its ToolSearch is off under ``--tools``)."""
    body = fake.model_requests()[0].body
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if tool.get("defer_loading"):
            continue
        declared = tool.get("functionDeclarations") or [tool]
        names |= {d.get("name") or d.get("type") for d in declared}
    return names


def processes_of(home: Path) -> list[int]:
    """Live processes (this one aside) whose environment holds the test's own HOME: the
    spoke CLI and everything it started."""
    needle = f"HOME={home}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("tool", VENDORS)
def test_model_that_never_answers_is_killed_at_the_agent_timeout(
    cli, model, project, tool, temp_home, monkeypatch
):
    needs(tool)
    monkeypatch.setenv("MAESTRO_AGENT_TIMEOUT", "0.1")  # six seconds
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    one_task(cli, project, tool)
    model.reply = lambda api, body: Hang()
    # The scan that must come back empty afterwards sees the spoke while it waits.
    while_running: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            if model.hanging:
                while_running.extend(processes_of(temp_home))

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.monotonic()
    try:
        out = cli("run")
    finally:
        done.set()
        sampler.join()
    took = time.monotonic() - started
    assert out.code == 2
    task = task_row(project)
    assert task.status == "failed" and "timeout" in (task.result or ""), task.result
    assert 6 <= took < 20, took
    assert while_running, "the CLI never reached the model"
    assert processes_of(temp_home) == []


@pytest.mark.parametrize("tool", VENDORS)
def test_a_cli_that_cannot_reach_its_provider_fails_in_seconds_with_why(
    cli, model, project, tool, temp_home, monkeypatch
):
    """No server where the provider should be: each CLI says so within seconds, and
    Maestro stops it there. Confined, each reaches it through Maestro's proxy, whose 502
    names the refused connection (unconfined, codex would say "Reconnecting... waiting
    for network", for good)."""
    needs(tool)
    one_task(cli, project, OTHER[tool])
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", dead)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", dead)
    config = temp_home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace(model.url, dead))
    started = time.monotonic()
    out = cli("challenge", "--tool", tool, "--json")
    took = time.monotonic() - started
    (answer,) = json.loads(out.out)["data"]["answers"]
    assert not answer["ok"] and took < 30, (took, answer)
    said = {
        "claude": "Connection refused",
        "gemini": "fetch failed",
        "codex": "Connection refused",
    }
    assert said[tool] in answer["error"], answer["error"]


# ---- a coordinating task's real spoke spawns a subtask through its shell tool ----------


def test_a_coordinating_claude_spoke_spawns_a_subtask_with_its_shell_tool(cli, model, project):
    """Task 4 (Mode: coordinate) runs in a real Claude spoke whose model types
    `maestro task spawn` in Claude's Bash tool, then `maestro mail wait`; the run
    dispatches 4.1 to another real Claude spoke, which writes the file in its worktree and
    reports complete through its own Bash tool; 4.1 lands and is done, then 4."""
    import shlex
    import sys

    needs("claude")
    maestro = f"{shlex.quote(sys.executable)} -m maestro"
    write_plan(
        cli,
        project,
        [
            {
                "id": 4,
                "title": "Greet the world through a subtask",
                "specialist": "code",
                "agent": "coder",
                "tool": "claude",
                "mode": "coordinate",
                "files": ["hello.txt"],
                "criteria": [CRITERION],
                "validation": "grep -q world hello.txt",
            }
        ],
        hub="gemini",
        goal="Greet the world",
    )
    spawn = (
        f"{maestro} task spawn --title 'Write the greeting file' --files hello.txt "
        f"--criteria {shlex.quote(CRITERION)} --validation 'grep -q world hello.txt' --tool claude"
    )

    def reply(api: str, body: Any) -> Any:
        done = tool_results(api, body)
        if "<profile>coordinated-coordinator</profile>" in json.dumps(body):
            steps = [ToolCall(spawn), ToolCall(f"{maestro} mail wait --timeout 90")]
            return steps[len(done)] if len(done) < len(steps) else result_text()
        steps = [
            WriteFile(str(worktree_of(body) / "hello.txt"), CONTENT),
            ToolCall(f"{maestro} task report complete 'wrote hello.txt'"),
        ]
        return steps[len(done)] if len(done) < len(steps) else result_text()

    model.reply = reply
    out = cli("run")
    assert out.code == 0, out.out + out.err
    final = plan(project)
    assert [(t.id, t.status, t.parent) for t in final.tasks] == [
        ("4", "done", None),
        ("4.1", "done", "4"),
    ]
    assert (project / "hello.txt").read_text() == CONTENT
    parent_results = [
        tool_results("anthropic", r.body)
        for r in model.model_requests()
        if "<profile>coordinated-coordinator</profile>" in r.text
    ]
    seen = parent_results[-1]
    assert "spawned Task 4.1 under Task 4" in seen[0]  # the spawn, through Claude's Bash tool
    assert "task 4.1 complete: wrote hello.txt" in seen[1]  # the worker's report, by mail wait
    kinds = [(e["kind"], e.get("task")) for e in events(project)]
    assert kinds.index(("task_done", "4.1")) < kinds.index(("task_done", "4"))

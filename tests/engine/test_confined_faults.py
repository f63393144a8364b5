"""Faults of a run's sandbox (docs/sandbox.md, *Faults*), with the real bwrap and the fake
CLIs: each fails the task's attempt in one line naming its fix, never lands anything,
and leaves the person's tree as it was."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

from maestro.bus.sessions import SessionStore
from maestro.engine import dispatch
from maestro.paths import ProjectPaths
from maestro.process import run_process
from tests.engine.runkit import events, left_running, plan, step, task, write_plan
from tests.test_git import git

SIGN_IN = "is not signed in"


def untouched(project: Path) -> None:
    """The person's tree holds what it held: no file of the task, nothing changed."""
    assert not (project / "src").exists()
    assert git(project, "status", "--porcelain", "--", ".", ":!.ai") == ""


def test_a_sandbox_that_cannot_start_says_so_with_bwraps_words(cli, project, runenv, monkeypatch):
    """A folder the sandbox binds in is gone when bwrap starts: bwrap says so and exits
    before the CLI runs. Not a network failure, no sign-in hint: its own line."""

    def vanishing(argv: list[str], **kwargs) -> object:
        scratch = next(
            argv[i + 1] for i, a in enumerate(argv) if a == "--bind" and "/scratch/" in argv[i + 1]
        )
        shutil.rmtree(scratch)
        return run_process(argv, **kwargs)

    monkeypatch.setattr(dispatch, "run_process", vanishing)
    write_plan(cli, project, [task(1, tool="claude")])
    runenv.default("claude", step())
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 1, t.result
    assert "the sandbox could not start the claude spoke: bwrap: Can't find source path" in t.result
    assert "fix: " in t.result and SIGN_IN not in t.result and "\n" not in t.result
    assert runenv.runs("claude") == []  # it never ran
    untouched(project)


def test_a_sandbox_killed_mid_run_fails_the_attempt_and_leaves_nothing(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(hang=True)])
    store = SessionStore(ProjectPaths(project))

    def killer() -> None:
        deadline = time.monotonic() + 20
        while not runenv.runs("codex") and time.monotonic() < deadline:
            time.sleep(0.05)
        first = runenv.runs("codex")[0]
        (worker,) = [s for s in store.all()[0] if s.mode == "coordinated-worker"]
        pid = worker.data["process"]["pid"]  # bwrap's, not the CLI's: that is inside
        assert pid != os.getpid() and pid != first["pid"]
        os.kill(pid, signal.SIGKILL)

    helper = threading.Thread(target=killer)
    helper.start()
    res = cli("run")
    helper.join()
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 1, t.result
    assert "the sandbox of the codex spoke was killed (SIGKILL) before it answered" in t.result
    assert "fix: " in t.result and "\n" not in t.result
    assert left_running(str(runenv.path("codex")).encode()) == []
    untouched(project)


def test_a_spoke_killed_mid_write_lands_nothing(cli, project, runenv, monkeypatch):
    """SIGKILL while the CLI writes its file: the attempt fails saying so, its half-written
    file stays in its worktree, and the person's tree never sees it."""
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(killed_writing=True)])
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status != "done" and t.attempts == 1, t.result
    assert "codex exited 137 (killed: SIGKILL)" in t.result, t.result
    (call,) = runenv.runs("codex")
    assert call["sandboxed"] and call["killed_writing"]
    untouched(project)


def test_a_cli_needing_a_new_state_folder_is_told_how_to_allow_it(
    cli, project, runenv, temp_home, monkeypatch
):
    """A CLI upgraded to keep its state in a folder its module does not declare gets
    EROFS there: the task says which path the sandbox kept read-only and how to allow
    it; once allowed, the same CLI works."""
    write_plan(cli, project, [task(1, tool="claude")])
    newer = step(state_path="~/.claude-next/sessions")
    runenv.script("claude", [newer])
    res = cli("run")
    assert res.code == 2, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 1, t.result
    assert f"the sandbox kept {temp_home}/.claude-next read-only" in t.result, t.result
    assert "MAESTRO_SANDBOX_WRITE" in t.result and "\n" not in t.result
    untouched(project)

    (temp_home / ".claude-next").mkdir()
    allowed = f"{os.environ['MAESTRO_SANDBOX_WRITE']},~/.claude-next"
    monkeypatch.setenv("MAESTRO_SANDBOX_WRITE", allowed)
    runenv.script("claude", [newer])
    assert cli("run", "1").code == 0
    assert plan(project).task("1").status == "done"
    assert (temp_home / ".claude-next" / "sessions").is_dir()


def test_a_confined_spoke_at_its_time_limit_hears_sigterm_first(cli, project, runenv, monkeypatch):
    """As unconfined: SIGTERM to the CLI inside, a grace period, then SIGKILL (to a CLI
    that ignores SIGTERM); what it started ends with the sandbox either way."""
    monkeypatch.setenv("MAESTRO_AGENT_TIMEOUT", "0.02")  # 1.2 s
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "2")
    write_plan(cli, project, [task(1)])
    hears = step(hang=True, record_term=True, child={"ignore_term": True, "sleep": 3021.5})
    deaf = step(hang=True, ignore_term=True, child={"sleep": 3022.5})
    runenv.script("codex", [hears, deaf, step()])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "done" and t.attempts == 3, t.result
    first = runenv.runs("codex")[0]
    assert [(s["call"], s["signal"]) for s in runenv.signals("codex")] == [
        (first["call"], "SIGTERM")
    ]
    retries = [e["reason"] for e in events(project) if e["kind"] == "task_retry"]
    assert len(retries) == 2 and all("timeout" in r for r in retries), retries
    assert left_running(b"3021.5") == [] and left_running(b"3022.5") == []
    assert left_running(str(runenv.path("codex")).encode()) == []


def test_a_validation_command_whose_sandbox_cannot_start_says_so(cli, project, runenv, monkeypatch):
    """Its sandbox's folder gone when bwrap starts: the gate says the sandbox could not
    start it, in bwrap's words with the fix, not that the command exited 1."""
    from maestro.engine import gates

    def vanishing(argv: list[str], **kwargs) -> object:
        if "/bin/sh" in argv and "-c" in argv and "test -f src/app.py" in argv:
            bound = next(a for a in argv if "maestro-check-" in a)
            head, _, rest = bound.partition("maestro-check-")
            shutil.rmtree(head + "maestro-check-" + rest.split("/")[0])  # its scratch folder
        return run_process(argv, **kwargs)

    monkeypatch.setattr(gates, "run_process", vanishing)
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert "did not start: the sandbox could not start the validation command: bwrap:" in t.result
    assert "fix: " in t.result and "exited 1" not in t.result
    untouched(project)

"""`maestro run` at the command line: one task, dry run, abort, logs, progress views."""

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from maestro.engine.progress import LiveProgress, PlainProgress
from tests.engine.runkit import events, plan, step, task, write_plan

REPO = Path(__file__).resolve().parents[2]


def test_run_one_task_needs_its_dependencies(cli, project, runenv):
    write_plan(cli, project, [task(1), task(2, files=["src/b.py"], depends=[1])])
    res = cli("run", "2")
    assert res.code == 1 and res.err.count("\n") == 1
    assert (
        "Task 2 cannot run yet: it depends on Task 1 (pending)" in res.err
        and "maestro run 1" in res.err
    )
    assert runenv.runs("codex") == []


def test_run_one_task_runs_only_it(cli, project, runenv):
    write_plan(cli, project, [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py")])
    runenv.script("codex", [step("src/b.py")])
    assert cli("run", "2").code == 0
    p = plan(project)
    assert p.task("2").status == "done" and p.task("1").status == "pending"


def test_done_task_is_never_run_twice(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    res = cli("run", "1")
    assert res.code == 1 and "done already" in res.err
    again = cli("run")
    assert again.code == 0 and "nothing to run" in again.out
    assert len(runenv.runs("codex")) == 1


def test_summary_of_a_blocked_task_reads_as_sentences(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    res = cli("run", "1", "--agent", "nobody")
    assert res.code == 2 and "no agent named 'nobody'" in res.out
    assert ".." not in res.out and "tester. See `maestro status`" in res.out


def test_unknown_task_and_missing_plan(cli, project, runenv):
    res = cli("run")
    assert res.code == 1 and "maestro plan --from" in res.err
    write_plan(cli, project, [task(1)])
    res = cli("run", "9")
    assert res.code == 1 and "no Task 9" in res.err


def test_dry_run_shows_cli_argv_and_tokens_and_sends_nothing(cli, project, runenv):
    write_plan(
        cli,
        project,
        [
            task(1),
            task(2, files=["src/b.py"], depends=[1]),
            task(3, tool="claude", files=["src/c.py"], validation="test -f src/c.py"),
        ],
    )
    before = (project / ".ai" / "MAESTRO.md").read_bytes()
    res = cli("run", "--dry-run")
    assert res.code == 0, res.err
    assert "dry run: 2 ready task(s); nothing dispatched." in res.out
    assert "Task 1:" in res.out and "Task 3:" in res.out and "Task 2:" not in res.out
    assert re.search(r"argv: codex exec --json .*<[\d,]+ tokens elided>", res.out)
    assert re.search(
        r"argv: claude -p <[\d,]+ tokens elided> .*--append-system-prompt <[\d,]+ tokens elided>",
        res.out,
    )
    assert re.search(r"prompt: [\d,]+ tokens \+ system [\d,]+ = [\d,]+ tokens", res.out)
    assert runenv.runs("codex") == [] and runenv.runs("claude") == []
    assert (project / ".ai" / "MAESTRO.md").read_bytes() == before
    body = json.loads(cli("run", "--dry-run", "--json").out)
    first = body["data"]["tasks"][0]
    assert first["tool"] == "codex" and first["prompt_tokens"] > 100 and first["argv"][0] == "codex"


def test_dry_run_counts_tasks_a_dead_engine_left_running(cli, project, runenv):
    from maestro.config import load_settings
    from maestro.state.store import PlanStore

    write_plan(cli, project, [task(1), task(2, files=["src/b.py"], depends=[1])])
    with PlanStore(load_settings(project).paths).edit() as edited:
        edited.task("1").status, edited.task("1").run_id = "running", "20261121T120000Z-dead"
    res = cli("run", "--dry-run")
    assert res.code == 0 and "dry run: 1 ready task(s)" in res.out and "Task 1:" in res.out, res.out
    assert plan(project).task("1").status == "running"  # a dry run writes nothing


def test_log_summary_rows_and_detailed_artifacts(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(text="no result"), step()])
    assert cli("run", "--log", "detailed").code == 0
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "| Dispatch | Codex (Task 1) |" in log and "| Retry | Codex (Task 1) |" in log
    assert (
        "receipt: changed src/app.py (1 file changed, 2 insertions(+)), validation exit 0, diff sha256"
        in log
    )
    run_id = (project / ".ai" / "maestro" / "runs" / "latest").read_text().strip()
    folder = project / ".ai" / "maestro" / "runs" / run_id
    assert f"**Details:** `.ai/maestro/runs/{run_id}/`" in log
    prompt = (folder / "task-1-attempt-2.prompt.md").read_text()
    assert "Retry context" in prompt
    assert "no result" in (folder / "task-1-attempt-1.output.txt").read_text()


def test_log_is_summary_by_default_and_off_writes_none(cli, project, runenv):
    write_plan(cli, project, [task(1), task(2, files=["src/b.py"])])
    runenv.script("codex", [step(), step("src/b.py")])
    assert cli("run", "1").code == 0
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "| Dispatch | Codex (Task 1) |" in log
    report = cli("report")
    assert report.code == 0 and "No execution log" not in report.out  # a first report is whole
    (project / ".ai" / "MAESTRO-LOG.md").unlink()
    assert cli("run", "2", "--log", "off").code == 0
    assert not (project / ".ai" / "MAESTRO-LOG.md").exists()


def start_engine(project, runenv):
    """`maestro run` in its own process, returned once its first codex dispatch started."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    engine = subprocess.Popen(
        [sys.executable, "-m", "maestro", "run"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not runenv.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    return engine


def test_abort_stops_launching_running_tasks_finish(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(cli, project, [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py")])
    runenv.script("codex", [{**step(), "sleep": 1.5}, step("src/b.py")])
    engine = start_engine(project, runenv)
    res = cli("run", "--abort")
    assert res.code == 0 and "asked run" in res.out
    engine.communicate(timeout=30)
    assert engine.returncode == 2
    p = plan(project)
    assert p.task("1").status == "done" and p.task("2").status == "pending"
    assert events(project)[-1]["status"] == "aborted"
    assert cli("run", "--abort").code == 1  # nothing left to abort


def test_abort_while_a_spoke_waits_for_the_stagger_leaves_its_task_pending(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "2")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "60")
    research = {"specialist": "research", "agent": "technical-writer", "validation": None}
    tasks = [task(i, files=[f"notes/{i}.md"], tool="codex", **research) for i in (1, 2)]
    write_plan(cli, project, tasks)
    runenv.default("codex", step("", sleep=3))
    engine = start_engine(project, runenv)  # one spoke runs; the other waits behind it
    assert cli("run", "--abort").code == 0
    engine.communicate(timeout=30)
    assert engine.returncode == 2
    (ran,) = [c["env"]["MAESTRO_TASK_ID"] for c in runenv.runs("codex")]  # one spoke only
    held = "2" if ran == "1" else "1"
    p = plan(project)
    assert p.task(ran).status == "done" and p.task(held).status == "pending"
    assert any(e["kind"] == "task_pending" and e["task"] == held for e in events(project))


def test_abort_during_a_retry_counts_every_task_left_pending(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(
        cli,
        project,
        [
            task(1, validation="test -f src/other.py"),
            task(2, files=["src/b.py"], validation="test -f src/b.py"),
        ],
    )
    runenv.script("codex", [{**step(), "sleep": 1.5}])
    engine = start_engine(project, runenv)
    assert cli("run", "--abort").code == 0
    out, _ = engine.communicate(timeout=30)
    p = plan(project)
    assert p.task("1").status == "pending" and p.task("2").status == "pending"
    assert "2 pending" in out and "2 task(s) left pending" in out, out


def test_plain_progress_is_one_line_per_event():
    out = io.StringIO()
    view = PlainProgress(out)
    view.handle(
        {
            "kind": "task_started",
            "time": "2026-11-21T12:00:01Z",
            "task": "1",
            "tool": "codex",
            "agent": "coder",
            "attempt": 1,
        }
    )
    view.handle(
        {
            "kind": "task_done",
            "time": "2026-11-21T12:00:09Z",
            "task": "1",
            "tool": "codex",
            "tokens": 1200,
            "cost": 0.01,
            "duration_s": 8,
        }
    )
    assert out.getvalue() == (
        "12:00:01 task 1 started: codex (coder), attempt 1\n"
        "12:00:09 task 1 done: codex, 1,200 tokens, $0.0100, 8.0s\n"
    )


def test_live_progress_redraws_in_place():
    out = io.StringIO()
    view = LiveProgress(out, [("1", "First"), ("2", "Second")], "R1")
    view.handle({"kind": "task_started", "task": "1", "tool": "codex", "attempt": 1})
    first = out.getvalue()
    view.handle({"kind": "task_done", "task": "1", "tokens": 1500})
    second = out.getvalue()[len(first) :]
    assert first.count("\n") == 4 and "running  codex" in first and "elapsed" in first
    assert second.startswith("\x1b[4F") and "done" in second and "1,500" in second
    assert all(line.startswith("\x1b[2K") for line in second.removeprefix("\x1b[4F").splitlines())


def test_a_reader_that_goes_away_does_not_stop_the_run(cli, project, runenv):
    """`maestro run | head -1`: the pipe closes after the first line; the run still works
    through every task, records its end, and exits with its own code, quietly."""
    write_plan(
        cli,
        project,
        [
            task(1, files=["a.md"], validation="test -f a.md"),
            task(2, files=["b.md"], depends=[1], validation="test -f b.md"),
            task(3, files=["c.md"], depends=[2], validation="test -f c.md"),
        ],
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "MAESTRO_SIM_DELAY": "0.3"}
    engine = subprocess.Popen(
        [sys.executable, "-m", "maestro", "run", "--tool", "sim"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert "started" in engine.stdout.readline()
    engine.stdout.close()  # what `head -1` does once it has its line
    err = engine.stderr.read()
    assert engine.wait(timeout=60) == 0, err
    assert err == ""
    p = plan(project)
    assert [t.status for t in p.tasks] == ["done", "done", "done"]
    assert (
        events(project)[-1]["kind"] == "run_ended" and events(project)[-1]["status"] == "finished"
    )


def test_forged_plan_cache_never_runs_finding_1(cli, project, tmp_path):
    """A spoke may write `.ai/maestro/` (a sandboxed Codex spoke gets `--add-dir` there).
    A process it leaves behind rewrites Task 2's validation in whatever JSON holds the
    plan there; the next run must run the validation the plan file shows, not that."""
    forged = tmp_path / "FORGED"
    write_plan(
        cli,
        project,
        [
            task(1, tool="sim", files=["src/a.py"], validation="test -f src/a.py"),
            task(2, tool="sim", files=["src/b.py"], validation="test -f src/b.py"),
        ],
    )
    assert cli("run", "1").code == 0
    for path in (project / ".ai" / "maestro").rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        if "test -f src/b.py" in text:
            path.write_text(text.replace("test -f src/b.py", f"touch {forged}; test -f src/b.py"))
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert not forged.exists()
    assert plan(project).task("2").receipt.validation == "test -f src/b.py"

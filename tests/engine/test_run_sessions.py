"""Every dispatch is a session of the office: the run is the coordinator session of its
spokes, each task attempt a coordinated worker whose shell can reach the mailbox."""

from __future__ import annotations

import os
import time
from pathlib import Path

from maestro.bus.liveness import ProcessMark
from maestro.bus.sessions import SessionStore
from maestro.paths import ProjectPaths, user_state_dir
from tests.engine.runkit import events, plan, prompt_of, step, task, write_plan


def test_every_dispatch_is_a_session_of_the_run(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="codex")])
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    assert plan(project).task("1").status == "done"
    run_id = events(project)[0]["run_id"]
    sessions, broken = SessionStore(ProjectPaths(project)).all()
    assert broken == []
    by_mode = {s.mode: s for s in sessions}
    coordinator, worker = by_mode["coordinator"], by_mode["coordinated-worker"]
    assert coordinator.id == f"run-{run_id}" and coordinator.status == "completed"
    assert (
        worker.coordinator == coordinator.id
        and worker.task_ids == ["1"]
        and worker.status == "completed"
    )
    assert (worker.data["cli"], worker.data["run_id"]) == ("codex", run_id)
    # The sandbox's pid (the fake's own means nothing outside its pid namespace).
    (call,) = runenv.runs("codex")
    assert call["sandboxed"] and worker.data["process"]["pid"] != call["pid"]
    started = next(e for e in events(project) if e["kind"] == "task_started")
    assert started["session"] == worker.id
    call = runenv.runs("codex")[0]
    assert call["env"]["MAESTRO_SESSION_ID"] == worker.id
    assert call["env"]["MAESTRO_COORDINATOR_SESSION_ID"] == coordinator.id
    assert call["env"]["MAESTRO_PROJECT_DIR"] == str(project)
    # Maestro's sandbox grants the office's folders (tests/engine/test_confined.py), not
    # codex's own, which is bypassed.
    granted = [call["argv"][i + 1] for i, a in enumerate(call["argv"]) if a == "--add-dir"]
    assert granted == []
    machine = ProjectPaths(project).machine_dir
    # The `maestro` its prompt names is this one, whatever PATH the user had, from a
    # folder of the user's that no spoke's sandbox writes (never the project's state).
    first = Path(call["env"]["PATH"].split(os.pathsep)[0])
    assert first.parent == user_state_dir() / "shims" and (first / "maestro").is_file()
    assert not first.is_relative_to(project) and not (machine / "bin").exists()
    prompt = prompt_of(call)
    assert f"<session_id>{worker.id}</session_id>" in prompt
    assert f"<coordinator_session_id>{coordinator.id}</coordinator_session_id>" in prompt
    assert "--to-coordinator" in prompt and "maestro task report" in prompt
    assert "nobody will answer" not in prompt


def test_a_spoke_that_cannot_write_the_office_is_told_to_report_in_its_answer(cli, project, runenv):
    write_plan(
        cli,
        project,
        [
            task(
                1,
                tool="codex",
                agent="debugger",
                specialist="review",
                files=[],
                validation="test -f README.md",
            )
        ],
    )
    runenv.script("codex", [step(None)])
    cli("run")
    call = runenv.runs("codex")[0]
    assert "--add-dir" not in call["argv"]  # read-only sandbox: nothing would make it writable
    prompt = prompt_of(call)
    assert "maestro mail" not in prompt and "nobody will answer" in prompt
    assert call["env"]["MAESTRO_SESSION_ID"].startswith(
        "t1-"
    )  # still a session, for session list/stop


def _working_worker(project, deadline_s=20.0):
    """The worker session of the one running task, once its spoke's process is attached."""
    import time

    store = SessionStore(ProjectPaths(project))
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        workers = [
            s for s in store.all()[0] if s.mode == "coordinated-worker" and s.data.get("process")
        ]
        if workers:
            return workers[0]
        time.sleep(0.05)
    raise AssertionError("no worker session got its process")


def test_a_critical_directive_comes_first_and_session_stop_ends_the_task_with_its_reason(
    cli, project, runenv, monkeypatch
):

    from tests.cli.test_wait import wait_until_ended

    monkeypatch.setenv(
        "PYTHONPATH", str(Path(__file__).resolve().parents[2])
    )  # the detached engine
    write_plan(cli, project, [task(1, tool="codex")])
    runenv.script("codex", [{"hang": True}])
    assert cli("run", "--detach").code == 0
    worker = _working_worker(project)
    # The pid is attached when the process starts; the fake records its call once its
    # interpreter is up: a stop before that would leave no call to count below.
    deadline = time.monotonic() + 20
    while not runenv.runs("codex") and time.monotonic() < deadline:
        time.sleep(0.05)
    # The hub redirects the worker: its next inbox check shows the critical directive first.
    assert (
        cli(
            "mail",
            "send",
            "--to",
            worker.id,
            "--type",
            "notification",
            "--message",
            "fyi: CI is slow",
        ).code
        == 0
    )
    assert (
        cli(
            "mail",
            "send",
            "--to",
            worker.id,
            "--type",
            "directive",
            "--priority",
            "critical",
            "--message",
            "Stop: keep the public API unchanged",
        ).code
        == 0
    )
    monkeypatch.setenv("MAESTRO_SESSION_ID", worker.id)
    inbox = cli("mail", "inbox", "--unread").out
    assert inbox.index("keep the public API unchanged") < inbox.index("fyi: CI is slow")
    assert inbox.startswith("m2 directive critical from user")
    # Its progress report becomes an event of the run: in wait, the live view and engine.log.
    assert cli("task", "report", "progress", "halfway there").code == 0
    monkeypatch.delenv("MAESTRO_SESSION_ID")
    # Stopped for real: the spoke's process group ends and the task is marked with the reason.
    res = cli("session", "stop", worker.id, "--reason", "wrong approach")
    assert res.code == 0, res.out + res.err
    text = "".join(r.out for r in wait_until_ended(cli))
    assert "task 1 blocked: stopped by user: wrong approach" in text
    assert f"task 1 progress: halfway there ({worker.id})" in text
    run_id = events(project)[0]["run_id"]
    assert (
        "task 1 progress: halfway there"
        in (project / ".ai" / "maestro" / "runs" / run_id / "engine.log").read_text()
    )
    task1 = plan(project).task("1")
    assert task1.status == "blocked" and "stopped by user: wrong approach" in task1.result
    assert len(runenv.runs("codex")) == 1  # a stop is never retried
    # The very process is gone: its pid with its start time (a bare pid may be reused).
    assert not ProcessMark.from_dict(worker.data["process"]).alive()
    stopped = SessionStore(ProjectPaths(project)).get(worker.id)
    assert (
        stopped.status == "stopped" and stopped.data["reason"] == "stopped by user: wrong approach"
    )


def test_a_report_whose_doorbell_went_unheard_is_still_an_event_of_the_run(project):
    """The run's last read of its workers' reports does not wait for the doorbell: the
    watch's thread may not have heard the last ring (a report sent just before its spoke
    ended) when the run stops it."""
    from maestro.bus.mailbox import Mailbox
    from maestro.bus.workers import start_run_session
    from maestro.engine.dispatch import Dispatch
    from maestro.engine.workerreports import WorkerReports

    paths = ProjectPaths(project)
    run_lease = start_run_session(paths, "r1")
    dispatch = Dispatch(
        paths,
        {},
        cli="codex",
        kind="t1",
        subject="Task 1",
        message="",
        tier="full",
        task="1",
        mode="coordinated-worker",
        coordinator="run-r1",
        run_id="r1",
    ).__enter__()
    worker, lease = dispatch.session, dispatch.lease
    emitted: list[tuple[str, dict]] = []
    reports = WorkerReports(paths, "r1", lambda kind, **data: emitted.append((kind, data)))
    with reports:
        reports.deliver()  # the first read: nothing yet
    # Sent once the watch is gone: no thread is there to hear its bell.
    sent = Mailbox(paths).send(
        worker.id,
        ["run-r1"],
        type="status_update",
        priority="normal",
        subject="task 1 progress: halfway there",
        body="halfway there",
    )
    reports.deliver()
    assert emitted == [
        (
            "task_report",
            {
                "task": "1",
                "session": worker.id,
                "report": "task 1 progress: halfway there",
                "detail": "halfway there",
                "mail": sent.id,
            },
        )
    ]
    lease.release()
    run_lease.release()


def test_a_workers_reports_are_events_log_rows_and_a_blocker_stays_for_the_hub(
    cli, project, runenv, monkeypatch
):
    """The spoke's shell runs `maestro task report ...` as its prompt says: each report is
    a task_report event and a row of .ai/MAESTRO-LOG.md; a blocker is also left unread
    for the hub's `maestro wait`."""
    from maestro.bus.mailbox import pending
    from maestro.logfile import ExecutionLog

    monkeypatch.setenv("MAESTRO_LOG", "summary")
    write_plan(cli, project, [task(1, tool="codex")])
    reports = [
        {"sh": "maestro task report progress 'parser done'"},
        {"sh": "maestro task report blocked 'need the token format from task 3'"},
        {"sh": "maestro task report complete 'wrote the module'"},
    ]
    runenv.script("codex", [step(shell=reports)])
    assert cli("run").code == 0
    (call,) = runenv.runs("codex")
    assert [r["exit"] for r in call["shell"]] == [0, 0, 0], call["shell"]
    worker = call["env"]["MAESTRO_SESSION_ID"]
    said = [(e["report"], e["session"]) for e in events(project) if e["kind"] == "task_report"]
    assert said == [
        ("task 1 progress: parser done", worker),
        ("task 1 blocked: need the token format from task 3", worker),
        ("task 1 complete: wrote the module", worker),
    ]
    paths = ProjectPaths(project)
    rows = [
        r for r in ExecutionLog(paths, "summary").read().sessions[-1].rows if r.action == "Report"
    ]
    assert [(r.actor, r.target, r.outcome, r.notes) for r in rows] == [
        ("Codex", "Task 1", "progress", f"parser done ({worker})"),
        ("Codex", "Task 1", "blocked", f"need the token format from task 3 ({worker})"),
        ("Codex", "Task 1", "complete", f"wrote the module ({worker})"),
    ]
    assert all(r.tool is None for r in rows)  # a report is no dispatch: not in the Totals
    run_id = events(project)[0]["run_id"]
    (blocker,) = pending(paths, f"run-{run_id}")
    assert blocker.body == "need the token format from task 3"
    assert SessionStore(paths).get(worker).status == "completed"

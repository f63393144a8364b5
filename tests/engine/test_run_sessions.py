"""Every dispatch is a session of the office: the run is the coordinator session of its
spokes, each task attempt a coordinated worker whose shell can reach the mailbox."""

from __future__ import annotations

from maestro.bus.sessions import SessionStore
from maestro.paths import ProjectPaths
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
    assert worker.coordinator == coordinator.id and worker.task_ids == ["1"] and worker.status == "completed"
    assert (worker.data["cli"], worker.data["run_id"]) == ("codex", run_id)
    assert worker.data["process"]["pid"] == runenv.runs("codex")[0]["pid"]
    started = next(e for e in events(project) if e["kind"] == "task_started")
    assert started["session"] == worker.id
    call = runenv.runs("codex")[0]
    assert call["env"]["MAESTRO_SESSION_ID"] == worker.id
    assert call["env"]["MAESTRO_COORDINATOR_SESSION_ID"] == coordinator.id
    assert call["env"]["MAESTRO_PROJECT_DIR"] == str(project)
    # Its sandbox writes the workdir only: the office's state is added by name.
    machine = ProjectPaths(project).machine_dir
    assert call["argv"][call["argv"].index("--add-dir") + 1] == str(machine)
    prompt = prompt_of(call)
    assert f"<session_id>{worker.id}</session_id>" in prompt
    assert f"<coordinator_session_id>{coordinator.id}</coordinator_session_id>" in prompt
    assert "--to-coordinator" in prompt and "maestro task report" in prompt
    assert "nobody will answer" not in prompt


def test_a_spoke_that_cannot_write_the_office_is_told_to_report_in_its_answer(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="codex", agent="debugger", specialist="review", files=[], validation="test -f README.md")])
    runenv.script("codex", [step(None)])
    cli("run")
    call = runenv.runs("codex")[0]
    assert "--add-dir" not in call["argv"]  # read-only sandbox: nothing would make it writable
    prompt = prompt_of(call)
    assert "maestro mail" not in prompt and "nobody will answer" in prompt
    assert call["env"]["MAESTRO_SESSION_ID"].startswith("t1-")  # still a session, for session list/stop

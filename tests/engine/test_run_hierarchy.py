"""Hierarchy in a run: a coordinating task's spoke spawns subtasks with `maestro task
spawn` (typed in its shell, as the fake CLIs' `shell` step does), the running engine
dispatches them as its workers, and the parent finishes after them. What a spoke may not
do (re-enter `maestro run`, spawn outside its files or deeper than max_depth) is refused
in its shell with exit 1, one line and the fix."""

from __future__ import annotations

from pathlib import Path

from maestro.bus.sessions import SessionStore
from maestro.paths import ProjectPaths
from tests.engine.runkit import CRITERION, answer, events, plan, prompt_of, step, task, write_plan

PARENT_CRITERION = "src/app.py and src/bye.py exist"


def _spawn(title: str, path: str, *more: str) -> list[str]:
    return [
        "task",
        "spawn",
        "--title",
        title,
        "--files",
        path,
        "--criteria",
        CRITERION,
        "--validation",
        f"test -f {path}",
        "--tool",
        "codex",
        *more,
    ]


def _plan(cli, project):
    write_plan(
        cli,
        project,
        [
            task(
                4,
                "Add the greeting and farewell modules",
                tool="claude",
                agent="coder",
                mode="coordinate",
                files=["src/"],
                criteria=[PARENT_CRITERION],
                validation="test -f src/app.py && test -f src/bye.py",
            ),
            task(5, "Document the modules", tool="gemini", depends=[4], files=["docs/greet.md"]),
        ],
    )


def _parent_answer() -> dict:
    return {"text": answer([PARENT_CRITERION], summary="Split into 4.1 and 4.2; both done.")}


def test_a_coordinating_task_spawns_subtasks_that_run_under_it(cli, project, runenv, monkeypatch):
    # One slot: the parent, waiting for its subtasks, must give its slot to them.
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    monkeypatch.setenv("MAESTRO_MAX_DEPTH", "1")  # 4.1 may coordinate, but not spawn
    _plan(cli, project)
    runenv.script(
        "claude",
        [
            {
                **_parent_answer(),
                "shell": [
                    ["run"],  # a spoke cannot re-enter maestro run
                    _spawn("Edit the readme", "README.md"),  # outside task 4's files
                    _spawn("Write the greeting module", "src/app.py", "--mode", "coordinate"),
                    _spawn("Write the farewell module", "src/bye.py", "--depends", "4.1"),
                    {
                        "maestro": ["mail", "wait", "--timeout", "20"],
                        "until": "task 4.2 complete",
                        "tries": 4,
                    },
                ],
            }
        ],
    )
    runenv.script(
        "codex",
        [
            step(
                "src/app.py",
                shell=[
                    _spawn("Split the greeting", "src/app.py"),  # depth 2 > max_depth 1
                    ["task", "report", "complete", "greeting written"],
                ],
            ),
            step(
                "src/bye.py",
                content="def bye(name):\n    return f'bye {name}'\n",
                shell=[["task", "report", "complete", "farewell written"]],
            ),
        ],
    )
    runenv.script("gemini", [step("docs/greet.md", content="# Greetings\n")])
    result = cli("run")
    assert result.code == 0, result.out + result.err
    assert "task 4.1 spawned by task 4: Write the greeting module" in result.out

    # The plan file holds the subtasks under their parent, done, and the parent done after them.
    final = plan(project)
    assert [t.id for t in final.tasks] == ["4", "4.1", "4.2", "5"]
    assert [t.status for t in final.tasks] == ["done"] * 4
    assert [final.task(i).parent for i in ("4.1", "4.2")] == ["4", "4"]
    assert final.task("4.2").depends == ["4.1"]
    text = (project / ".ai" / "MAESTRO.md").read_text()
    assert (
        text.index("### Task 4:")
        < text.index("### Task 4.1: Write the greeting module")
        < text.index("### Task 4.2: Write the farewell module")
        < text.index("### Task 5:")
    )
    block = text[text.index("### Task 4.1:") : text.index("### Task 4.2:")]
    assert "- **Parent:** 4\n" in block and "- **Files:** `src/app.py`" in block
    assert "- **Mode:** coordinate" in text[text.index("### Task 4:") : text.index("### Task 4.1:")]
    assert Path(project / "src" / "bye.py").exists()

    run_events = events(project)
    spawned = [(e["task"], e["parent"]) for e in run_events if e["kind"] == "task_spawned"]
    assert spawned == [("4.1", "4"), ("4.2", "4")]
    done = [e["task"] for e in run_events if e["kind"] == "task_done"]
    assert done == ["4.1", "4.2", "4", "5"]
    assert final.task("4").finished >= final.task("4.2").finished

    # The parent ran as a coordinated coordinator of the run; its subtasks as its workers.
    parent_call = runenv.runs("claude")[0]
    sessions = {s.id: s for s in SessionStore(ProjectPaths(project)).all()[0]}
    parent = sessions[parent_call["env"]["MAESTRO_SESSION_ID"]]
    assert parent.mode == "coordinated-coordinator" and parent.task_ids == ["4"]
    assert parent.coordinator == f"run-{run_events[0]['run_id']}"
    modes = ("coordinated-coordinator", "coordinated-worker")  # 4.1 was spawned to coordinate
    for call, tid, mode in zip(runenv.runs("codex"), ("4.1", "4.2"), modes, strict=True):
        worker = sessions[call["env"]["MAESTRO_SESSION_ID"]]
        assert (worker.mode, worker.task_ids, worker.coordinator) == (mode, [tid], parent.id)
        assert call["env"]["MAESTRO_COORDINATOR_SESSION_ID"] == parent.id
        assert call["shell"][-1]["exit"] == 0
    prompt = prompt_of(parent_call)
    assert "maestro task spawn --title" in prompt and "maestro run [" not in prompt

    shell = parent_call["shell"]
    refused = shell[0]
    _one_line_refusal(refused, "cannot start a run inside a spoke")
    assert "task spawn" in refused["stderr"]
    _one_line_refusal(shell[1], "subtask file README.md is not within Task 4's files (src/)")
    assert [s["exit"] for s in shell[2:4]] == [0, 0]
    assert shell[2]["stdout"].startswith("spawned Task 4.1 under Task 4: Write the greeting module")
    assert "after 4.1" in shell[3]["stdout"]
    assert "task 4.2 complete: farewell written" in "".join(s["stdout"] for s in shell[4:])
    _one_line_refusal(
        runenv.runs("codex")[0]["shell"][0], "subtasks are capped at depth 1 (max_depth)"
    )
    assert final.task("4.1").mode == "coordinate" and not final.find("4.1.1")


def _one_line_refusal(ran: dict, phrase: str) -> None:
    """A refused `maestro ...` typed in a spoke's shell: exit 1, one line, the fix."""
    assert ran["exit"] == 1 and ran["stdout"] == "", ran
    line = ran["stderr"].strip()
    assert len(line.splitlines()) == 1 and phrase in line and " Fix: " in line, line


def test_a_coordinator_that_ends_before_its_subtasks(cli, project, runenv):
    """The parent's spoke ends while 4.1 runs: 4.1's `mail wait` says its coordinator is
    gone (exit 12); 4.2, dispatched after that, answers to the run instead; the parent's
    task stays running until both are done, then is done."""
    _plan(cli, project)
    runenv.script(
        "claude",
        [
            {
                **_parent_answer(),
                "shell": [
                    _spawn("Write the greeting module", "src/app.py"),
                    {
                        "maestro": ["mail", "wait", "--timeout", "20"],
                        "until": "task 4.1 progress",
                        "tries": 4,
                    },
                    _spawn("Write the farewell module", "src/bye.py", "--depends", "4.1"),
                ],
            }
        ],
    )
    runenv.script(
        "codex",
        [
            step(
                "src/app.py",
                shell=[
                    ["task", "report", "progress", "halfway"],
                    ["mail", "wait", "--timeout", "30"],
                ],
            ),
            step("src/bye.py", content="def bye(name):\n    return name\n"),
        ],
    )
    runenv.script("gemini", [step("docs/greet.md", content="# Greetings\n")])
    result = cli("run")
    assert result.code == 0, result.out
    final = plan(project)
    assert [(t.id, t.status) for t in final.tasks] == [
        ("4", "done"),
        ("4.1", "done"),
        ("4.2", "done"),
        ("5", "done"),
    ]
    first, second = runenv.runs("codex")
    waited = first["shell"][1]
    assert waited["exit"] == 12 and "is gone" in waited["stdout"]
    run_session = f"run-{events(project)[0]['run_id']}"
    assert second["env"]["MAESTRO_COORDINATOR_SESSION_ID"] == run_session
    parent = SessionStore(ProjectPaths(project)).get(
        runenv.runs("claude")[0]["env"]["MAESTRO_SESSION_ID"]
    )
    assert parent.status == "completed"
    assert final.task("4").finished >= final.task("4.2").finished


def test_a_parent_whose_subtask_fails_is_blocked_and_names_them(cli, project, runenv):
    _plan(cli, project)
    runenv.script(
        "claude",
        [
            {
                **_parent_answer(),
                "shell": [
                    _spawn("Write the greeting module", "src/app.py"),
                    _spawn("Write the farewell module", "src/bye.py", "--depends", "4.1"),
                    # The worker fails before it can report: the engine tells its coordinator.
                    {
                        "maestro": ["mail", "wait", "--timeout", "20"],
                        "until": "task 4.1 ",
                        "tries": 3,
                    },
                ],
            }
        ],
    )
    runenv.script("codex", [{"http": 401}])
    assert cli("run").code == 2
    final = plan(project)
    statuses = {t.id: t.status for t in final.tasks}
    assert statuses["4.1"] in ("failed", "blocked") and statuses["4.2"] == "pending"
    assert statuses["4"] == "blocked" and statuses["5"] == "pending"
    assert f"4.1 {statuses['4.1']}, 4.2 pending" in final.task("4").result
    assert len(runenv.runs("codex")) == 1  # 4.2 never ran: it waits for 4.1
    heard = runenv.runs("claude")[0]["shell"][2]
    assert heard["exit"] == 0 and f"task 4.1 {statuses['4.1']}: " in heard["stdout"]
    assert "notification high from run-" in heard["stdout"]

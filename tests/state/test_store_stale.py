"""A copy of the plan saved from an older editor buffer while the engine went on: the
engine's newer values stay, the person's changes too, and a field both changed is a
conflict named, never a task silently moved back."""

from __future__ import annotations

import threading
import time

import pytest

from maestro.errors import StateConflict
from maestro.paths import ProjectPaths
from maestro.state.model import Plan, Task
from maestro.state.planfile import parse
from maestro.state.store import PlanStore
from tests.engine.runkit import plan, step, task, write_plan

NOTE = "A note saved from an editor buffer opened before the run."


def make_store(root) -> PlanStore:
    store = PlanStore(ProjectPaths(root))
    store.create(
        Plan(goal="Ship it.", tasks=[Task("1", "First"), Task("2", "Second", depends=["1"])])
    )
    return store


def engine_finishes_task_1(store: PlanStore) -> None:
    """The engine's two transitions for a task, through the same store a run keeps."""
    with store.edit() as p:
        t = p.task("1")
        t.status, t.pid, t.attempts, t.started = "running", 4242, 1, "2026-11-21T12:00:05Z"
    with store.edit() as p:
        t = p.task("1")
        t.status, t.pid, t.result, t.finished = "done", None, "Wrote it.", "2026-11-21T12:01:10Z"


def save_stale(store: PlanStore, buffer: str, old: str, new: str) -> None:
    assert old in buffer
    store.path.write_text(buffer.replace(old, new, 1))


def stale_status(project, task_id: str, status: str) -> PlanStore:
    """The editor opens the plan, the engine finishes Task 1, the editor saves its buffer
    with ``task_id``'s Status set to ``status``."""
    store = make_store(project)
    buffer = store.path.read_text()
    engine_finishes_task_1(store)
    heading = f"### Task {task_id}: {'First' if task_id == '1' else 'Second'}\n"
    save_stale(
        store, buffer, heading + "- **Status:** pending\n", heading + f"- **Status:** {status}\n"
    )
    return store


def test_a_stale_save_with_a_note_keeps_the_engines_newer_state(project):
    store = make_store(project)
    buffer = store.path.read_text()  # the editor opens the plan
    engine_finishes_task_1(store)
    save_stale(store, buffer, "## Tasks\n", f"## Tasks\n\n{NOTE}\n")
    seen = store.load()  # before the engine writes again (status, the next run's start)
    assert (seen.task("1").status, seen.task("1").result) == ("done", "Wrote it.")
    with store.edit() as p:  # the engine's next transition
        p.task("2").status = "running"
    text = store.path.read_text()
    first = parse(text).task("1")
    assert (first.status, first.result, first.attempts, first.finished) == (
        "done",
        "Wrote it.",
        1,
        "2026-11-21T12:01:10Z",
    )
    assert parse(text).task("2").status == "running"
    assert f"## Tasks\n\n{NOTE}\n" in text


def test_the_persons_change_of_a_field_the_engine_left_alone_is_kept(project):
    store = stale_status(project, "2", "blocked")
    with store.edit() as p:
        p.log.clear()
    again = parse(store.path.read_text())
    assert (again.task("1").status, again.task("2").status) == ("done", "blocked")


def test_a_field_both_changed_is_a_conflict_naming_it_and_the_file_is_kept(project):
    store = stale_status(project, "1", "failed")
    theirs = store.path.read_bytes()
    with pytest.raises(StateConflict) as info, store.edit() as p:
        p.task("2").status = "running"
    message = str(info.value)
    assert "the file was saved from an older copy, and it changes Task 1's Status field" in message
    latest_path = store.history.latest_path  # in the user's state folder, where no spoke writes
    assert f"Maestro's version is {latest_path}:" in message
    assert not latest_path.is_relative_to(project)
    assert store.path.read_bytes() == theirs
    with pytest.raises(StateConflict):
        store.load()
    # The way out the message names: the change made in a copy of Maestro's version.
    latest = latest_path.read_text()
    store.path.write_text(latest.replace("- **Status:** done", "- **Status:** failed", 1))
    assert store.load().task("1").status == "failed"


def test_a_hand_edit_of_the_latest_version_is_taken_as_it_is(project):
    """Setting a done task back to pending (how a person asks to redo it) is not undone."""
    store = make_store(project)
    engine_finishes_task_1(store)
    text = store.path.read_text()
    store.path.write_text(text.replace("- **Status:** done", "- **Status:** pending", 1))
    assert store.load().task("1").status == "pending"
    with store.edit() as p:
        p.task("2").result = "x"
    assert parse(store.path.read_text()).task("1").status == "pending"


def test_a_new_plan_or_an_archive_forgets_the_old_versions(cli, project):
    store = make_store(project)
    engine_finishes_task_1(store)
    assert cli("archive").code == 0
    (project / ".ai").mkdir(exist_ok=True)
    store.path.write_text(
        "# Maestro Orchestration\n\n## Goal\n\nShip it.\n\n## Tasks\n\n### Task 1: First\n"
    )
    assert store.load().task("1").status == "pending"  # written by hand: nothing merged into it


def test_a_stale_save_during_a_run_does_not_send_a_done_task_back(cli, project, runenv):
    """The issue's case, end to end: `maestro run`, and while Task 2 runs, the editor saves
    the buffer it opened before the run with a note added."""
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])],
    )
    buffer = (project / ".ai" / "MAESTRO.md").read_text()
    runenv.script("codex", [step(), {**step("src/b.py"), "sleep": 1.5}])
    saved = threading.Event()

    def editor() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if len(runenv.runs("codex")) == 2:  # Task 1 is done, Task 2 has been dispatched
                (project / ".ai" / "MAESTRO.md").write_text(
                    buffer.replace("## Tasks\n", f"## Tasks\n\n{NOTE}\n", 1)
                )
                saved.set()
                return
            time.sleep(0.02)

    thread = threading.Thread(target=editor)
    thread.start()
    res = cli("run")
    thread.join()
    assert saved.is_set()
    assert res.code == 0, res.out + res.err
    after = plan(project)
    assert [(t.status, t.attempts) for t in after.tasks] == [("done", 1), ("done", 1)]
    assert after.task("1").result and after.task("1").receipt is not None
    assert NOTE in (project / ".ai" / "MAESTRO.md").read_text()
    again = cli("run")
    assert again.code == 0 and len(runenv.runs("codex")) == 2  # nothing dispatched twice


def test_replanning_over_a_stale_save_keeps_the_engines_results(cli, project):
    source = (
        "goal: Ship it.\ntasks:\n  - {id: 1, title: First, specialist: code, files: [a.py], "
        "criteria: [a.py exists], validation: test -f a.py}\n"
    )
    assert cli("plan", "--from", "-", "--yes", stdin=source).code == 0
    store = PlanStore(ProjectPaths(project))
    buffer = store.path.read_text()
    engine_finishes_task_1(store)
    save_stale(store, buffer, "## Tasks\n", f"## Tasks\n\n{NOTE}\n")
    res = cli("plan", "--from", "-", "--yes", stdin=source)
    assert res.code == 0, res.err
    assert "Kept from the current plan (same id and title): Task 1 (done)" in res.out
    assert store.load().task("1").result == "Wrote it." and NOTE in store.path.read_text()


def test_a_stale_save_from_many_versions_back_keeps_every_newer_value(project):
    """The editor opened the plan, the run then finished 25 tasks (50 versions), and the
    person saves the buffer with a note and a task of their own retitled."""
    store = PlanStore(ProjectPaths(project))
    store.create(Plan(goal="Ship it.", tasks=[Task(str(i), f"Part {i}") for i in range(1, 31)]))
    buffer = store.path.read_text()
    for i in range(1, 26):
        with store.edit() as p:
            p.task(str(i)).status, p.task(str(i)).pid = "running", 4242
        with store.edit() as p:
            t = p.task(str(i))
            t.status, t.pid, t.result = "done", None, f"Wrote part {i}."
    save_stale(store, buffer, "### Task 30: Part 30\n", f"{NOTE}\n\n### Task 30: Part thirty\n")
    seen = store.load()
    assert [(t.status, t.result) for t in seen.tasks[:25]] == [
        ("done", f"Wrote part {i}.") for i in range(1, 26)
    ]
    assert seen.task("30").title == "Part thirty"
    with store.edit() as p:
        p.task("26").status = "running"
    text = store.path.read_text()
    assert NOTE in text and "### Task 30: Part thirty" in text
    assert [t.status for t in parse(text).tasks[:26]] == ["done"] * 25 + ["running"]


def test_a_hand_edit_saved_during_edit_task_is_in_the_version_a_stale_save_merges_with(project):
    """edit_task records its one task as the change; when a hand edit lands while it
    writes, the version recorded is the merge, so a stale buffer saved later keeps the
    hand edit as well as the engine's values."""
    store = make_store(project)
    buffer = store.path.read_text()  # an editor opens the plan
    with store.edit_task("1") as task:
        task.status, task.result = "done", "Wrote it."
        save_stale(store, store.path.read_text(), "### Task 2: Second\n", "### Task 2: Later\n")
    save_stale(store, buffer, "## Tasks\n", f"## Tasks\n\n{NOTE}\n")
    seen = store.load()
    assert (seen.task("1").status, seen.task("1").result) == ("done", "Wrote it.")
    assert seen.task("2").title == "Later"

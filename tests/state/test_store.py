"""PlanStore: locked atomic read-modify-write, hand edits merged or refused."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import stat
import time
from pathlib import Path

import pytest

from maestro.errors import NotFound, PlanError, StateConflict
from maestro.paths import ProjectPaths
from maestro.state import history
from maestro.state.model import LogEntry, Plan, Task, copy_of
from maestro.state.planfile import parse, render
from maestro.state.store import PlanStore

REPO = Path(__file__).resolve().parents[2]
FORK = multiprocessing.get_context("fork")


def make_store(root: Path, tasks: int = 3, newline: str = "\n") -> PlanStore:
    store = PlanStore(ProjectPaths(root))
    plan = Plan(
        goal="Ship it.", tasks=[Task(str(i), f"Task number {i}") for i in range(1, tasks + 1)]
    )
    store.create(plan)
    if newline != "\n":
        store.path.write_bytes(store.path.read_bytes().replace(b"\n", newline.encode()))
    return store


def test_create_load_edit_and_exists(project):
    store = PlanStore(ProjectPaths(project))
    assert not store.exists()
    with pytest.raises(NotFound) as info:
        store.load()
    assert "maestro plan --from" in str(info.value)
    store = make_store(project)
    assert store.exists()
    with store.edit() as plan:
        plan.tasks[0].status = "done"
    assert store.load().tasks[0].status == "done"
    assert parse(store.path.read_text()).tasks[0].status == "done"


def test_create_refuses_to_replace_unless_asked(project):
    store = make_store(project)
    before = store.path.read_bytes()
    with pytest.raises(StateConflict) as info:
        store.create(Plan(goal="Other", tasks=[]))
    assert "maestro archive" in str(info.value)
    assert store.path.read_bytes() == before
    store.create(Plan(goal="Other", tasks=[]), replace=True)
    assert store.load().goal == "Other"


def test_create_over_a_file_that_changed_since_it_was_read_is_refused(project):
    store = make_store(project)
    read = store.path.read_bytes()
    theirs = save_by_hand(store, "Ship it.", "Ship it soon.")
    with pytest.raises(StateConflict, match="changed while the new plan was being checked"):
        store.create(Plan(goal="Other", tasks=[]), replace=True, expect=read)
    assert store.path.read_bytes() == theirs
    store.create(Plan(goal="Other", tasks=[]), replace=True, expect=theirs)
    assert store.load().goal == "Other"


def test_edit_keeps_mode_and_crlf(project):
    store = make_store(project, newline="\r\n")
    os.chmod(store.path, 0o600)
    with store.edit() as plan:
        plan.tasks[1].status = "running"
    data = store.path.read_bytes()
    assert b"- **Status:** running\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


INVALID = [
    lambda t: t.replace("- **Status:** pending", "- **Status:** doing", 1),
    lambda t: t.replace("### Task 2:", "### Task 1:"),
    lambda t: t.replace(
        "### Task 2: Task number 2\n", "### Task 2: Task number 2\n- **Depends:** 9\n"
    ),
    lambda t: t.replace("- **Status:** pending", "- **Status:** pending\n- **Tokens:** lots", 1),
    lambda t: t.replace("<!-- maestro:format 1 -->", "<!-- maestro:format 7 -->"),
    lambda t: t.replace("## Tasks", "## Work"),
    lambda t: t.replace("## Goal", "## Aim"),
]


@pytest.mark.parametrize("breaks", INVALID)
def test_edit_of_an_invalid_file_raises_and_never_writes(project, breaks):
    store = make_store(project)
    store.path.write_text(breaks(store.path.read_text()))
    before = store.path.read_bytes()
    with pytest.raises(PlanError) as info, store.edit() as plan:
        plan.tasks[0].status = "done"
    assert str(info.value).startswith(".ai/MAESTRO.md")
    assert "Fix:" in str(info.value)
    assert store.path.read_bytes() == before


def test_edit_of_non_utf8_file_never_writes(project):
    store = make_store(project)
    store.path.write_bytes(store.path.read_bytes().replace(b"Ship it.", b"Ship \xff it."))
    before = store.path.read_bytes()
    with pytest.raises(PlanError, match=r"MAESTRO.md:6: the file is not valid UTF-8"), store.edit():
        pass
    assert store.path.read_bytes() == before


def test_nothing_is_written_when_the_block_raises_or_the_result_is_invalid(project):
    store = make_store(project)
    before = store.path.read_bytes()
    with pytest.raises(RuntimeError), store.edit() as plan:
        plan.tasks[0].status = "done"
        raise RuntimeError("boom")
    with pytest.raises(PlanError, match='Task 1 has unknown status "doing"'), store.edit() as plan:
        plan.tasks[0].status = "doing"
    assert store.path.read_bytes() == before


def test_a_loaded_plan_is_the_callers_own_to_change(project):
    store = make_store(project)
    mine = store.load()
    mine.tasks[0].status = "done"
    mine.tasks[1].files.append("src/app.py")
    mine.tasks.pop()
    assert store.load() == parse(store.path.read_text())
    with pytest.raises(RuntimeError), store.edit() as plan:
        plan.tasks[0].status = "done"
        raise RuntimeError("boom")
    assert store.load() == parse(store.path.read_text())
    with store.edit() as plan:
        assert plan == parse(store.path.read_text())
        plan.tasks[0].status = "running"
    assert store.load().tasks[0].status == "running"


def history_bytes(store: PlanStore) -> int:
    """What the kept versions take (``latest.md`` aside: the last file as written)."""
    folder = store.history.folder
    return sum(p.stat().st_size for p in folder.iterdir() if p != store.history.latest_path)


def test_an_edit_adds_what_changed_to_the_history_not_the_whole_plan(project):
    store = make_store(project, tasks=300)
    before = history_bytes(store)
    for n in range(1, 11):
        with store.edit() as plan:
            plan.task(str(n)).status = "done"
    assert history_bytes(store) - before < 10 * 200


def test_the_kept_history_stays_within_its_bound_and_a_recent_stale_save_still_merges(
    project, monkeypatch
):
    monkeypatch.setattr(history, "KEEP_BYTES", 8000)
    store = make_store(project, tasks=20)
    for n in range(300):
        with store.edit() as plan:
            plan.task(str(n % 20 + 1)).result = f"edit {n}"
        assert history_bytes(store) <= 8000 + 200
        if n == 290:
            buffer = store.path.read_text()  # an editor opens the plan
    store.path.write_text(
        buffer.replace("# Maestro Orchestration\n", "# Maestro Orchestration\n\nA note.\n", 1)
    )
    seen = store.load()
    assert [t.result for t in seen.tasks][-10:] == [f"edit {n}" for n in range(290, 300)]


def save_by_hand(store: PlanStore, old: str, new: str) -> bytes:
    """What an editor does: write the file without taking Maestro's lock."""
    text = store.path.read_text()
    assert old in text
    data = text.replace(old, new, 1).encode()
    store.path.write_bytes(data)
    return data


def test_a_hand_edit_saved_during_edit_is_kept_and_the_change_reapplied(project):
    store = make_store(project)
    with store.edit() as plan:
        plan.tasks[0].status = "done"
        plan.log.append(LogEntry("12:00", "1", "sim", "dispatch", "done"))
        save_by_hand(
            store,
            "### Task 2: Task number 2\n- **Status:** pending\n",
            "### Task 2: Task number 2\n- **Status:** blocked\n\nWaiting for the API key.\n",
        )
    text = store.path.read_text()
    assert "### Task 1: Task number 1\n- **Status:** done\n" in text
    assert "- **Status:** blocked\n\nWaiting for the API key.\n" in text
    assert "| 12:00 | 1 | sim | dispatch | done |" in text
    assert store.load() == parse(text)


def test_edit_task_changes_that_task_alone_and_merges_a_hand_edit_as_edit_does(project):
    store = make_store(project)
    with store.edit_task("2") as task:
        task.status = "running"
    assert [t.status for t in store.view().tasks] == ["pending", "running", "pending"]
    before = store.path.read_bytes()
    with pytest.raises(NotFound), store.edit_task("9"):
        pass
    assert store.path.read_bytes() == before
    save_by_hand(store, "### Task 3: Task number 3\n", "### Task 3: Task number 3\n\nA note.\n")
    with store.edit_task("1") as task:
        task.status = "done"
    text = store.path.read_text()
    assert "A note." in text and [t.status for t in parse(text).tasks][:2] == ["done", "running"]
    assert store.view() == store.load() == parse(text)


def test_edit_task_checks_the_graph_again_only_when_the_task_changes_it(project):
    """A status change takes the file's checked ids and dependencies as they are; a
    dependency that closes a cycle, or names no task, is refused and nothing written, and
    so is a Parent that is no other task of the plan (the file would not parse again)."""
    store = make_store(project)
    with store.edit_task("2") as task:
        task.depends = ["1"]
    before = store.path.read_bytes()
    changes = [("depends", ["2"]), ("depends", ["3", "2"]), ("depends", ["9"]), ("parent", "9")]
    for name, value in [*changes, ("parent", "1")]:
        with pytest.raises(PlanError), store.edit_task("1") as task:
            setattr(task, name, value)
        assert store.path.read_bytes() == before
    with store.edit_task("3") as task:
        task.status = "done"
    assert [t.depends for t in store.view().tasks] == [[], ["1"], []]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_edit_of_one_task_writes_what_a_whole_render_writes(project, monkeypatch, newline):
    """After the first edit, an edit of one task renders that record alone into the text
    it last wrote; the file must be byte for byte what rendering the whole plan gives,
    at the first task, between a person's notes, at the end of the file, and when a
    value's new text changes how the record ends."""
    from maestro.state.markdown import writer

    store = make_store(project, tasks=4, newline=newline)
    heading = b"### Task 3: Task number 3"
    note = f"A note kept between tasks.{newline}{newline}".encode()
    store.path.write_bytes(store.path.read_bytes().replace(heading, note + heading))
    wholes = []
    whole = writer.render_file
    monkeypatch.setattr(
        "maestro.state.store.render_file", lambda *a, **k: wholes.append(1) or whole(*a, **k)
    )
    changes = [
        ("1", "status", "running"),
        ("4", "status", "running"),
        ("3", "result", "Found it.\n\nTwo paragraphs."),
        ("4", "result", "Done at the end of the file."),
        ("1", "status", "done"),
        ("3", "result", "Short."),
        ("2", "files", ["src/a.py", "src/b.py"]),
        ("2", "attempts", 2),
        ("4", "status", "done"),
    ]
    for tid, name, value in changes:
        expected = parse(store.path.read_bytes().decode())  # a fresh parse: nothing kept
        setattr(expected.task(tid), name, value)
        with store.edit_task(tid) as task:
            setattr(task, name, value)
        text = store.path.read_bytes().decode()
        assert text == render(expected)
        assert getattr(parse(text).task(tid), name) == value
        assert "A note kept between tasks." in text and text.count("\r\n") == (
            text.count("\n") if newline == "\r\n" else 0
        )
    assert len(wholes) < len(changes) / 2  # most edits rendered one record


def test_two_stores_editing_tasks_in_turn_keep_each_others_changes(project):
    """A store renders one task into the text it last wrote only while the file is still
    that text: after another store's (another process's) write, it renders the file read."""
    stores = [make_store(project), PlanStore(ProjectPaths(project))]
    for n in range(6):
        expected = parse(stores[0].path.read_text())
        expected.task(str(n % 3 + 1)).result = f"Edit {n}."
        with stores[n // 2 % 2].edit_task(str(n % 3 + 1)) as task:
            task.result = f"Edit {n}."
        assert stores[0].path.read_text() == render(expected)


def test_one_task_rendered_alone_is_a_whole_render_or_left_to_one(project):
    """render_task either gives a whole render's text or None (the store then renders the
    whole plan), also when the task's next neighbour is not the one it had in the file (a
    task removed by an edit): a blank line put between them then depends on how the
    task's new text ends."""
    from maestro.state.markdown.writer import render_file, render_task

    plan = parse(
        "<!-- maestro:format 1 -->\n# Maestro Orchestration\n\n## Goal\n\nShip it.\n\n"
        "## Tasks\n\n### Task 1: First\n- **Status:** done\n\nA note.\n\n- **Result:** Wrote it.\n"
        "### Task 2: Second\n- **Status:** pending\n"
        "### Task 3: Third\n- **Status:** pending\n"
    )
    plan.tasks = [plan.tasks[0], plan.tasks[2]]
    last, spliced = render_file(plan, "MAESTRO.md", frozen=True), 0
    for name, value in [("status", "running"), ("result", "Again."), ("result", None)] * 2:
        task = copy_of(plan.tasks[0])
        setattr(task, name, value)
        plan = dataclasses.replace(plan, tasks=[task, plan.tasks[1]])
        whole = render_file(plan, "MAESTRO.md", frozen=True)
        alone = render_task(last, plan, task, "MAESTRO.md")
        assert alone is None or alone.data == whole.data
        spliced += alone is not None
        last = alone or whole
    assert b"A note.\n\n### Task 3" in last.data and spliced


def test_a_conflicting_hand_edit_is_refused_and_kept(project):
    store = make_store(project)
    with pytest.raises(StateConflict) as info, store.edit() as plan:
        plan.tasks[0].status = "done"
        theirs = save_by_hand(store, "- **Status:** pending", "- **Status:** failed")
    assert "Task 1's Status field" in str(info.value)
    assert store.path.read_bytes() == theirs


def test_hand_added_task_and_log_rows_on_both_sides_are_kept(project):
    store = make_store(project)
    with store.edit() as plan:
        plan.log.append(LogEntry("12:00", "1", "sim", "dispatch", "done"))
        text = store.path.read_text().replace(
            "## Execution Log", "### Task 4: Added by hand\n- **Depends:** 1\n\n## Execution Log"
        )
        store.path.write_text(text + "| 11:59 | 2 | claude | note | by hand |  |  |\n")
    merged = parse(store.path.read_text())
    assert [t.id for t in merged.tasks] == ["1", "2", "3", "4"]
    assert [e.outcome for e in merged.log] == ["by hand", "done"]


def test_a_task_removed_by_hand_that_the_change_touches_is_a_conflict(project):
    store = make_store(project)
    removed = pytest.raises(StateConflict, match=r"Task 3 \(removed there, edited here\)")
    with removed, store.edit() as plan:
        plan.tasks[2].status = "running"
        theirs = save_by_hand(store, "### Task 3: Task number 3\n- **Status:** pending\n", "")
    assert store.path.read_bytes() == theirs


def test_an_addition_that_an_unclosed_code_fence_would_swallow_is_refused(project):
    store = make_store(project)
    text = store.path.read_text()
    at = text.index("## Execution Log")
    store.path.write_text(text[:at] + "```\nan unclosed fence swallows the rest\n" + text[at:])
    before = store.path.read_bytes()
    assert store.load().log == []  # the table is inside the fence now
    line = text[:at].count("\n") + 1
    with pytest.raises(PlanError) as info, store.edit() as plan:
        plan.log.append(LogEntry("12:00", "1", "sim", "dispatch", "done"))
    assert str(info.value).startswith(
        f'.ai/MAESTRO.md:{line}: the code fence "```" opened at line {line} is never closed, so the rest of the '
        "file reads as code (the new Execution Log rows would be written inside it)."
    )
    assert store.path.read_bytes() == before


def test_a_hand_edit_that_breaks_the_file_is_never_written_over(project):
    store = make_store(project)
    with pytest.raises(PlanError, match="unknown status"), store.edit() as plan:
        plan.tasks[0].status = "done"
        theirs = save_by_hand(store, "- **Status:** pending", "- **Status:** finished")
    assert store.path.read_bytes() == theirs


# --- processes ----------------------------------------------------------------------------


def _updater(root: str, worker: int, per_worker: int, start: object) -> None:
    store = PlanStore(ProjectPaths(Path(root)))
    start.wait()  # type: ignore[attr-defined]  # a multiprocessing Event, passed untyped to the child
    for n in range(per_worker):
        with store.edit() as plan:
            task = plan.task(str(worker * per_worker + n + 1))
            task.status = "done"
            task.result = f"worker {worker} update {n}"
    os._exit(0)


@pytest.mark.slow
def test_eight_processes_apply_two_hundred_updates_and_all_land(project):
    store = make_store(project, tasks=200)
    start = FORK.Event()
    workers = [FORK.Process(target=_updater, args=(str(project), w, 25, start)) for w in range(8)]
    for process in workers:
        process.start()
    start.set()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    plan = parse(store.path.read_text())
    assert [t.status for t in plan.tasks] == ["done"] * 200
    assert [t.result for t in plan.tasks] == [
        f"worker {i // 25} update {i % 25}" for i in range(200)
    ]


def _expected(n: int, tasks: int) -> Plan:
    plan = Plan(
        goal="Ship it.", tasks=[Task(str(i), f"Task number {i}") for i in range(1, tasks + 1)]
    )
    for task in plan.tasks:
        task.attempts = n
        task.result = f"edit {n}" if n else None
    return plan


def _writer(root: str, ready: object) -> None:
    store = PlanStore(ProjectPaths(Path(root)))
    while True:
        with store.edit() as plan:
            n = plan.tasks[0].attempts + 1
            for task in plan.tasks:
                task.attempts = n
                task.result = f"edit {n}"
        ready.set()  # type: ignore[attr-defined]  # a multiprocessing Event, passed untyped to the child


def _temp_files(store: PlanStore) -> set[str]:
    return {
        n
        for n in os.listdir(store.path.parent)
        if n.startswith(".MAESTRO.md.") and n.endswith(".tmp")
    }


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_a_complete_state(project):
    tasks = 60
    store = make_store(project, tasks=tasks)
    seen, mid_write = set(), 0
    for _ in range(50):
        ready = FORK.Event()
        writer = FORK.Process(target=_writer, args=(str(project), ready))
        writer.start()
        assert ready.wait(30)
        # Kill as soon as a write is under way: its temp file has appeared.
        before = _temp_files(store)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not _temp_files(store) - before:
            pass
        writer.kill()
        writer.join()
        mid_write += bool(_temp_files(store) - before)  # the rename had not happened yet
        plan = parse(store.path.read_text())  # always parses
        n = plan.tasks[0].attempts
        assert plan == _expected(n, tasks)  # a whole state, never a mix
        seen.add(n)
    assert mid_write >= 25
    assert len(seen) > 10
    with store.edit() as plan:  # the lock a killed writer held is free again
        plan.tasks[0].status = "done"
    assert not _temp_files(store)  # leftovers swept


def test_a_stale_buffer_saved_over_another_process_write_is_reconciled_on_load(project):
    """The run's store wrote X, another process then wrote Y (Task 2 done), and an editor
    still holding X saves it: the file is X again, and load() still reads Task 2 done."""
    run = make_store(project)
    with run.edit() as plan:
        plan.tasks[0].status = "running"
    buffer = run.path.read_bytes()
    with PlanStore(ProjectPaths(project)).edit() as plan:
        plan.tasks[1].status = "done"
    run.path.write_bytes(buffer)
    assert run.load().tasks[1].status == "done"
    assert PlanStore(ProjectPaths(project)).load().tasks[1].status == "done"


@pytest.mark.parametrize("edit", ["edit", "create"])
def test_a_load_while_a_write_is_under_way_reads_one_whole_plan(project, monkeypatch, edit):
    """A write records the new version before it replaces the file: a load in between (a
    thread of the same run, another process) reads the plan being written, never the
    file it replaces taken for a save by hand, nor a mix."""
    from maestro.state import store as store_module

    store = make_store(project)
    with store.edit() as plan:
        plan.tasks[0].status = "done"
    before = store.load()
    seen = []
    write = store_module.atomic_write

    def load_then_write(path, data, **kwargs):
        seen.append(PlanStore(ProjectPaths(project)).load())
        write(path, data, **kwargs)

    monkeypatch.setattr(store_module, "atomic_write", load_then_write)
    if edit == "edit":
        with store.edit() as plan:
            plan.tasks[0].status, plan.tasks[1].status = "pending", "running"
        assert [t.status for t in seen[0].tasks] == ["pending", "running", "pending"]
    else:
        store.create(Plan(goal="Another.", tasks=[Task("1", "One")]), replace=True)
        assert seen[0] == before  # the plan being replaced, whole
    assert PlanStore(ProjectPaths(project)).load() == parse(store.path.read_text())

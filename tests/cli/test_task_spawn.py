"""`maestro task spawn` as a coordinating task's spoke types it: the checks a subtask
passes (or the one-line refusal with its fix, the plan untouched), its place in the plan
file, the request's way through the office to the engine (whose desk answers it: here a
thread serving the engine's own ``add_subtask``), and `maestro run` refused inside a
spoke."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from maestro.bus.mailbox import Mailbox
from maestro.bus.workers import end_session, start_run_session
from maestro.config import load_settings
from maestro.engine.dispatch import Dispatch
from maestro.engine.hierarchy import REQUEST_SHAPE, SPAWN, add_subtask, spawned_data
from maestro.engine.requests import MAX_REQUEST, Desk, ask, desk_id
from maestro.engine.rundir import RunLock
from maestro.errors import MaestroError
from maestro.state.model import ITEMS_MAX, TEXT_MAX, TITLE_MAX
from maestro.state.store import PlanStore
from tests.engine.runkit import CRITERION, plan, task, write_plan

RUN_ID = "20261124T120000Z-abcd"
NOTE = "A note the person wrote under task 4: keep the API small.\n"


class Office:
    """A run holding its lock, with task ``4`` running as a coordinating spoke's session."""

    def __init__(self, cli, project, monkeypatch) -> None:
        self.cli, self.project, self.monkeypatch = cli, project, monkeypatch
        self.paths = load_settings(project).paths
        self.lock = RunLock(self.paths)
        self.lock.acquire(RUN_ID)
        self.run_lease = start_run_session(self.paths, RUN_ID)
        self.leases = []
        self.desk = Desk(self.paths, RUN_ID, {SPAWN: self._spawn})
        self.stopped = threading.Event()
        self.engine = threading.Thread(target=self._serve, daemon=True)
        self.engine.start()

    def _spawn(self, message, fields):
        settings = load_settings(self.project)  # the engine's settings (this process's env)
        store = PlanStore(settings.paths)
        return spawned_data(add_subtask(store, settings, message.sender, RUN_ID, fields))

    def _serve(self) -> None:
        with self.desk:
            while not self.stopped.is_set():
                self.desk.serve()
                time.sleep(0.01)

    def running(self, task_id: str, *, mode: str = "coordinated-coordinator") -> str:
        """Mark ``task_id`` running in this process and give it a working session."""
        with PlanStore(self.paths).edit() as editable:
            current = editable.task(task_id)
            current.status, current.pid, current.run_id = "running", os.getpid(), RUN_ID
        dispatch = Dispatch(
            self.paths,
            {},
            cli="claude",
            kind=f"t{task_id}",
            subject=f"Task {task_id}",
            message="",
            tier="full",
            task=task_id,
            mode=mode,
            coordinator=f"run-{RUN_ID}",
            run_id=RUN_ID,
            agent="coder",
        ).__enter__()
        self.leases.append(dispatch.lease)
        return dispatch.session.id

    def act_as(self, session_id: str | None) -> None:
        if session_id is None:
            self.monkeypatch.delenv("MAESTRO_SESSION_ID", raising=False)
        else:
            self.monkeypatch.setenv("MAESTRO_SESSION_ID", session_id)

    def spawn(self, title: str, *files: str, more: tuple[str, ...] = ()):
        argv = ["task", "spawn", "--title", title, "--criteria", CRITERION]
        for path in files:
            argv += ["--files", path]
        return self.cli(*argv, "--validation", "true", *more)

    def plan_bytes(self) -> bytes:
        return (self.project / ".ai" / "MAESTRO.md").read_bytes()

    def close(self) -> None:
        self.stopped.set()
        self.engine.join(5)
        for lease in self.leases:
            lease.release()
        self.run_lease.release()
        self.lock.release()


@pytest.fixture
def office(cli, project, fake_clis, monkeypatch):
    write_plan(
        cli,
        project,
        [
            task(4, "Build the auth module", mode="coordinate", agent="coder", files=["src/auth/"]),
            task(6, "Write the shared helper", files=["src/auth/shared.py"]),
            task(7, "Write the changelog", files=["CHANGELOG.md"]),
        ],
    )
    # The person's own text under task 4 must survive every write.
    path = project / ".ai" / "MAESTRO.md"
    text = path.read_text()
    at = text.index("### Task 6:")
    path.write_text(text[:at] + NOTE + "\n" + text[at:])
    the_office = Office(cli, project, monkeypatch)
    yield the_office
    the_office.close()


def _refused(result, *phrases: str) -> None:
    assert result.code == 1, result.out + result.err
    line = result.err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert "Fix:" in line or "fix:" in line.lower()
    for phrase in phrases:
        assert phrase in line, line


def test_spawned_subtasks_go_under_their_parent_keeping_the_persons_text(office):
    office.act_as(office.running("4"))
    first = office.spawn("Add the token model", "src/auth/token.py")
    assert first.code == 0, first.err
    assert first.out.startswith(
        "spawned Task 4.1 under Task 4: Add the token model (files src/auth/token.py)"
    )
    second = office.cli(
        "task",
        "spawn",
        "--title",
        "Add the login view",
        "--files",
        "src/auth/login.py,src/auth/views/",
        "--criteria",
        CRITERION,
        "--criteria",
        "POST /login returns 200",
        "--depends",
        "4.1",
        "--validation",
        "pytest -q tests/test_login.py",
        "--json",
    )
    assert second.code == 0, second.err
    data = json.loads(second.out)["data"]["task"]
    assert (data["id"], data["parent"], data["depends"]) == ("4.2", "4", ["4.1"])
    assert data["files"] == ["src/auth/login.py", "src/auth/views/"]
    final = plan(office.project)
    assert [t.id for t in final.tasks] == ["4", "4.1", "4.2", "6", "7"]
    assert final.task("4.2").criteria == [CRITERION, "POST /login returns 200"]
    assert final.task("4.1").status == "pending" and final.task("4.1").parent == "4"
    text = office.plan_bytes().decode()
    assert NOTE in text and text.index(NOTE) < text.index("### Task 4.1:")


def test_refusals_exit_1_with_a_fix_and_leave_the_plan_alone(office):
    coordinator = office.running("4")
    office.act_as(coordinator)
    before = office.plan_bytes()
    # Ownership: within the parent's files only.
    _refused(
        office.spawn("Edit the readme", "README.md"),
        "subtask file README.md is not within Task 4's files (src/auth/)",
    )
    # Dependencies: only its siblings or done tasks; never its own coordinator.
    _refused(
        office.spawn("Token", "src/auth/token.py", more=("--depends", "4")),
        "coordinates this subtask",
    )
    _refused(
        office.spawn("Token", "src/auth/token.py", more=("--depends", "9")), "no Task 9 in the plan"
    )
    _refused(
        office.spawn("Token", "src/auth/token.py", more=("--depends", "7")),
        "neither a subtask of Task 4 nor done",
    )
    # AAVSR, as for any plan task: a read-only agent cannot own files.
    _refused(
        office.spawn("Token", "src/auth/token.py", more=("--agent", "architect")),
        "AAVSR Authority",
    )
    assert office.plan_bytes() == before


def test_a_file_owned_by_a_running_task_is_refused(office):
    office.running("6", mode="coordinated-worker")  # owns src/auth/shared.py, running now
    office.act_as(office.running("4"))
    _refused(
        office.spawn("Touch the helper", "src/auth/shared.py"),
        "src/auth/shared.py is owned by Task 6, which is running now",
    )
    assert office.spawn("Add the token model", "src/auth/token.py").code == 0


def test_a_running_sibling_can_be_waited_for(office):
    coordinator = office.running("4")
    office.act_as(coordinator)
    assert office.spawn("Add the token model", "src/auth/token.py").code == 0
    office.running("4.1", mode="coordinated-worker")
    office.act_as(coordinator)
    _refused(
        office.spawn("Extend the token model", "src/auth/token.py"),
        "owned by Task 4.1, which is running now",
        "add --depends 4.1",
    )
    assert (
        office.spawn("Extend the token model", "src/auth/token.py", more=("--depends", "4.1")).code
        == 0
    )


def test_depth_is_capped_and_configurable(office, monkeypatch):
    office.act_as(office.running("4"))
    assert (
        office.spawn("Build the views", "src/auth/views/", more=("--mode", "coordinate")).code == 0
    )
    sub = office.running("4.1")  # a coordinating subtask, one level down
    office.act_as(sub)
    monkeypatch.setenv("MAESTRO_MAX_DEPTH", "1")
    _refused(
        office.spawn("Login view", "src/auth/views/login.py"),
        "capped at depth 1 (max_depth)",
        "MAESTRO_MAX_DEPTH",
    )
    monkeypatch.delenv("MAESTRO_MAX_DEPTH")  # the default, 2, allows 4.1.1
    done = office.spawn("Login view", "src/auth/views/login.py")
    assert done.code == 0, done.err
    assert "spawned Task 4.1.1 under Task 4.1" in done.out
    office.act_as(office.running("4.1.1"))
    _refused(office.spawn("Deeper", "src/auth/views/login.py"), "not a coordinating task")


def test_only_a_working_coordinating_session_of_a_live_run_may_spawn(office):
    office.act_as(None)
    _refused(office.spawn("Token", "src/auth/token.py"), "MAESTRO_SESSION_ID is not set")
    worker = office.running("7", mode="coordinated-worker")
    office.act_as(worker)
    _refused(office.spawn("Token", "CHANGELOG.md"), "Task 7 is not a coordinating task")
    coordinator = office.running("4")
    end_session(office.paths, coordinator, "completed")
    office.act_as(coordinator)
    _refused(office.spawn("Token", "src/auth/token.py"), "is completed")
    live = office.running("4")
    office.act_as(live)
    office.lock.release()
    _refused(office.spawn("Token", "src/auth/token.py"), f"run {RUN_ID}", "is not running")
    office.lock.acquire(RUN_ID)


def test_a_spoke_cannot_re_enter_maestro_run(office):
    office.act_as(office.running("4"))
    before = office.plan_bytes()
    result = office.cli("run")
    _refused(result, "cannot start a run inside a spoke", "MAESTRO_SESSION_ID=t4-", "task spawn")
    assert office.plan_bytes() == before


def test_the_engine_believes_no_field_of_a_forged_request(office):
    """A spoke can send anything to the desk: each field is checked, each refusal is an
    answer (never a crash of the engine's loop), and the plan stays as it was."""
    coordinator = office.running("4")
    before = office.plan_bytes()
    forged = [
        ({"title": "Token", "files": "src/auth/token.py"}, "files: expected a list, got text"),
        ({"title": ["x"]}, "title: expected text, got a list"),
        ({"title": "Token", "rights": "all"}, "unknown key 'rights'"),
        ({"title": "Token", "tool": "bash"}, "tool: 'bash' is not allowed"),
        ({"files": ["src/auth/token.py"]}, "missing required key 'title'"),
        ({"title": "Token\x00"}, r"title: holds a control character \('\\x00'\)"),
    ]
    for fields, refusal in forged:
        with pytest.raises(MaestroError, match=refusal):
            ask(office.paths, coordinator, RUN_ID, SPAWN, fields, timeout_s=5)
    with pytest.raises(MaestroError, match="the engine takes no directive 'delete plan'"):
        ask(office.paths, coordinator, RUN_ID, "delete plan", {}, timeout_s=5)
    # A session of another run, or one that does not exist, spawns nothing here.
    with pytest.raises(MaestroError, match="no session t99-nobody"):
        ask(office.paths, "t99-nobody", RUN_ID, SPAWN, {"title": "Token"}, timeout_s=5)
    assert office.plan_bytes() == before


def test_the_desk_traffic_stays_out_of_the_persons_inbox(office):
    office.act_as(office.running("4"))
    assert office.spawn("Add the token model", "src/auth/token.py").code == 0
    mailbox = Mailbox(office.paths)
    mine, _ = mailbox.inbox("user", mark=False)
    assert not [m for m in mine if desk_id(RUN_ID) in (m.sender, *m.to)]
    answers, _ = mailbox.inbox(os.environ["MAESTRO_SESSION_ID"], unread_only=True, mark=False)
    assert answers == []  # the spawn's answer was read by the spawn


def test_a_spawn_to_an_engine_that_stops_answering_gives_up(office, monkeypatch):
    coordinator = office.running("4")
    office.stopped.set()  # the engine's loop ends: nobody serves the desk
    office.engine.join(5)
    started = time.monotonic()
    with pytest.raises(MaestroError, match=f"run {RUN_ID} did not answer task spawn within 1 s"):
        ask(office.paths, coordinator, RUN_ID, SPAWN, {"title": "Token"}, timeout_s=1)
    assert time.monotonic() - started < 3
    threading.Timer(0.3, office.lock.release).start()  # the engine dies while one waits
    with pytest.raises(MaestroError, match=f"run {RUN_ID} stopped before it answered"):
        ask(office.paths, coordinator, RUN_ID, SPAWN, {"title": "Token"}, timeout_s=30)
    office.lock.acquire(RUN_ID)


def _send(office, sender: str, body: str, *, subject: str = SPAWN):
    """A directive written straight into the mail store, as a spoke can write one past
    `task spawn`'s own check."""
    return Mailbox(office.paths).send(
        sender, [desk_id(RUN_ID)], type="directive", priority="high", subject=subject, body=body
    )


def _forged(office, sender: str, body: str, *, subject: str = SPAWN) -> dict:
    """What the desk answers a forged directive."""
    sent = _send(office, sender, body, subject=subject)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for message in Mailbox(office.paths).inbox(sender, mark=False)[0]:
            if message.reply_to == sent.id:
                return json.loads(message.body)
        time.sleep(0.02)
    raise AssertionError("the desk did not answer")


def test_a_subtask_past_plan_inputs_bounds_is_refused_and_the_plan_stays(office):
    """Each field of a spawn is bounded as plan input's is: the spoke's shell refuses it
    before any mail is sent, the engine refuses the same request forged past that, and a
    request over what the engine reads is refused unread. Nothing reaches the plan."""
    coordinator = office.running("4")
    office.act_as(coordinator)
    before = office.plan_bytes()
    _refused(
        office.spawn("A" * 100_000, "src/auth/token.py"),
        "task spawn: title: is 100,000 characters, over the limit of 200",
    )
    many = [f"src/auth/f{i}.py" for i in range(3_000)]
    _refused(
        office.spawn("Add the files", ",".join(many)),
        "task spawn: files: lists 3,000 items, over the limit of 100",
        "split the task",
    )
    assert Mailbox(office.paths).inbox(desk_id(RUN_ID), mark=False)[0] == []
    for fields, refusal in [
        ({"title": "A" * 100_000}, "title: is 100,000 characters, over the limit of 200"),
        ({"title": "Add", "files": many}, "files: lists 3,000 items, over the limit of 100"),
        ({"title": "Add", "criteria": ["c" * 5_000]}, "criteria\\[0\\]: is 5,000 characters"),
        ({"title": "Add", "validation": "v" * 5_000}, "validation: is 5,000 characters"),
    ]:
        with pytest.raises(MaestroError, match=refusal):
            ask(office.paths, coordinator, RUN_ID, SPAWN, fields, timeout_s=5)
    huge = json.dumps({"title": "A" * 8_000_000, "files": ["src/auth/token.py"]})
    answer = _forged(office, coordinator, huge)
    assert "over 524,288 characters" in answer["error"], answer
    assert office.plan_bytes() == before


def test_what_else_a_forged_directive_sends_stays_bounded(office):
    """A subject is quoted cut short, and a sender that is no session id gets no answer:
    the desk never writes back what it was not meant to read."""
    coordinator = office.running("4")
    office.act_as(coordinator)
    answer = _forged(office, coordinator, "{}", subject="S" * 100_000)
    assert "the engine takes no directive 'SSS" in answer["error"]
    assert len(answer["error"]) < 200
    nobody = "x" * 100_000
    _send(office, nobody, json.dumps({"title": "Token"}))
    assert office.spawn("Add the token model", "src/auth/token.py").code == 0  # served after it
    assert Mailbox(office.paths).inbox(nobody, mark=False)[0] == []


def test_a_subtask_at_plan_inputs_bounds_is_accepted(office):
    office.act_as(office.running("4"))
    title = "Add " + "t" * (TITLE_MAX - 4)
    files = [f"src/auth/{i:03d}" + "f" * (TEXT_MAX - 12) for i in range(ITEMS_MAX)]
    criteria = [f"criterion {i:03d} " + "c" * (TEXT_MAX - 14) for i in range(ITEMS_MAX)]
    validation = "test -d src " + "v" * (TEXT_MAX - 12)
    argv = ["task", "spawn", "--title", title, "--validation", validation]
    for path in files:
        argv += ["--files", path]
    for criterion in criteria:
        argv += ["--criteria", criterion]
    result = office.cli(*argv)
    assert result.code == 0, result.err
    spawned = plan(office.project).task("4.1")
    assert (spawned.title, spawned.files, spawned.criteria) == (title, files, criteria)
    assert spawned.validation == validation
    _refused(office.spawn(title + "!", "src/auth/token.py"), "over the limit of 200")


def _largest(schema: dict) -> object:
    """The longest value ``schema`` allows, every character one JSON escapes; a field
    without a bound raises KeyError, which fails the test below as it should."""
    if "enum" in schema:
        return max((str(v) for v in schema["enum"]), key=len)
    if schema.get("type") == "array":
        return [_largest(schema["items"])] * schema["maxItems"]
    return '"' * schema["maxLength"]


def test_the_largest_request_the_desk_takes_is_one_it_reads():
    largest = {name: _largest(field) for name, field in REQUEST_SHAPE["properties"].items()}
    assert len(json.dumps(largest, ensure_ascii=False)) <= MAX_REQUEST

"""Sessions: the four modes, manifests, identity from the environment, liveness, stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maestro.bus import workers
from maestro.bus.liveness import ProcessMark
from maestro.bus.sessions import SessionStore
from maestro.errors import MaestroError


def test_four_modes_each_with_its_capabilities(office):
    store = SessionStore(office.paths)
    made = {
        "worker": store.create(mode="worker", session_id="w"),
        "coordinator": store.create(mode="coordinator", session_id="c"),
        "coordinated-worker": store.create(
            mode="coordinated-worker", session_id="cw", coordinator="c"
        ),
        "coordinated-coordinator": store.create(
            mode="coordinated-coordinator", session_id="cc", coordinator="c"
        ),
    }
    for mode, session in made.items():
        assert store.get(session.id).mode == mode
    assert made["worker"].data["capabilities"]["can_spawn_sessions"] is False
    assert made["coordinator"].data["strategy"] == "default"
    assert made["coordinated-coordinator"].data["capabilities"]["can_spawn_sessions"] is True
    assert made["coordinated-worker"].data["capabilities"]["can_configure"] is False
    assert made["coordinated-worker"].parent == "c"
    with pytest.raises(MaestroError, match="needs a coordinator"):
        store.create(mode="coordinated-worker")
    with pytest.raises(MaestroError, match="use mode coordinated-worker"):
        store.create(mode="worker", coordinator="c")
    with pytest.raises(MaestroError, match="no session nobody"):
        store.create(mode="coordinated-worker", coordinator="nobody")


def test_capabilities_come_from_the_tier(office):
    store = SessionStore(office.paths)
    quiet = store.create(mode="coordinated-worker", coordinator=office.run, tier="read-only")
    assert not any(quiet.data["capabilities"].values())
    shell = store.create(mode="coordinated-worker", coordinator=office.run, tier="read+shell")
    assert shell.data["capabilities"]["can_run_commands"] is True
    with pytest.raises(MaestroError, match="unknown tier"):
        store.create(mode="worker", tier="root")


def test_identity_comes_from_the_environment_in_any_subfolder(office):
    worker = office.worker("4", "Add JWT")
    deep = office.root / "src" / "pkg"
    deep.mkdir(parents=True)
    done = office.maestro(worker.id, "session", "whoami", cwd=deep)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"{worker.id} coordinated-worker working task 4 claude coordinator run-R1"
    )
    assert "directive from run-R1: task 4" in done.stdout
    person = office.maestro(None, "session", "whoami", cwd=deep)
    assert person.stdout.startswith("user")
    env = office.env(None) | {"MAESTRO_SESSION_ID": "t9-nope"}
    bad = subprocess.run(
        [sys.executable, "-m", "maestro", "mail", "inbox"],
        env=env,
        cwd=office.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert "MAESTRO_SESSION_ID=t9-nope names no session" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_spoke_env_names_session_coordinator_and_state(office):
    worker = office.worker("1")
    env = workers.spoke_env(office.paths, worker)
    assert env == {
        "MAESTRO_SESSION_ID": worker.id,
        "MAESTRO_COORDINATOR_SESSION_ID": office.run,
        "MAESTRO_PROJECT_DIR": str(office.root),
        "MAESTRO_STATE_DIR": ".ai",
    }


def test_list_siblings_mine_and_json(office, cli, monkeypatch):
    a, b = office.worker("1"), office.worker("2")
    SessionStore(office.paths).create(mode="worker", session_id="loner")
    office.become(monkeypatch, a.id)
    siblings = cli("session", "list", "--siblings")
    assert [line.split() for line in siblings.out.splitlines()] == [
        ["ID", "MODE", "STATUS", "TASK", "CLI", "COORDINATOR"],
        [b.id, "coordinated-worker", "working", "2", "-", "run-R1"],  # its CLI is its own
    ]
    office.become(monkeypatch, office.run)
    mine = json.loads(cli("session", "list", "--mine", "--json").out)["data"]["sessions"]
    assert [s["id"] for s in mine] == [a.id, b.id]
    office.become(monkeypatch, None)
    everyone = cli("session", "list").out
    assert ["loner", "worker", "dead", "-", "-", "-"] in [
        line.split() for line in everyone.splitlines()
    ]  # nothing holds it alive


def test_a_session_whose_process_is_gone_is_dead(office, cli):
    worker = office.worker("1")
    assert SessionStore(office.paths).get(worker.id).status == "working"
    office.leases.pop(worker.id).release()
    assert SessionStore(office.paths).get(worker.id).status == "dead"
    listed = [line.split()[:3] for line in cli("session", "list").out.splitlines()]
    assert [worker.id, "coordinated-worker", "dead"] in listed


def test_liveness_by_pid_needs_the_same_start_time_and_namespace(office):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mark = ProcessMark.of(proc.pid)
        assert mark.alive()
        recycled = ProcessMark(mark.pid, (mark.start or 0) + 1, mark.namespace, mark.boot)
        assert not recycled.alive()
        elsewhere = ProcessMark(mark.pid, mark.start, "pid:[1]", mark.boot)
        assert not elsewhere.alive()
        bare = ProcessMark(mark.pid, None, None, None)
        assert not bare.alive()
        store = SessionStore(office.paths)
        session = store.create(mode="worker", session_id="proc")
        store.attach_process("proc", proc.pid)
        assert store.get("proc").status == "working"
    finally:
        proc.kill()
        proc.wait()
    assert store.get(session.id).status == "dead"


def test_a_garbled_manifest_is_reported_not_fatal(office, cli):
    worker = office.worker("1")
    path = SessionStore(office.paths).manifest_path(worker.id)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "status": "napping"}))
    listing = cli("session", "list")
    assert listing.code == 0
    assert f"{worker.id}: unreadable manifest:" in listing.out and "status" in listing.out
    shown = cli("session", "show", worker.id)
    assert shown.code == 1 and "session manifest key status" in shown.err
    path.write_text(json.dumps({**data, "format_version": 99}))
    assert "newer than this Maestro reads" in cli("session", "show", worker.id).err
    path.write_text("{not json")
    assert "not valid JSON" in cli("session", "show", worker.id).err


def _group_leader() -> subprocess.Popen[bytes]:
    """A process leading its own group, with a child in the group (a spoke and its tool)."""
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True)


def _group_members(pgid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


def test_stop_ends_the_process_group_and_records_the_reason(office, cli, monkeypatch):
    worker = office.worker("3")
    proc = _group_leader()
    try:
        deadline = time.monotonic() + 10
        while len(_group_members(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_group_members(proc.pid)) == 2
        SessionStore(office.paths).attach_process(worker.id, proc.pid)
        sibling = office.worker("4")
        office.become(monkeypatch, sibling.id)
        refused = cli("session", "stop", worker.id)
        assert refused.code == 1 and "only its coordinators or the person" in refused.err
        office.become(monkeypatch, None)
        done = cli("session", "stop", worker.id, "--reason", "requirements changed")
        assert done.code == 0, done.err
        assert done.out.startswith(f"stopped {worker.id} (ended process group {proc.pid})")
        proc.wait(timeout=5)
        assert _group_members(proc.pid) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    stopped = SessionStore(office.paths).get(worker.id)
    assert stopped.status == "stopped"
    assert stopped.data["reason"] == "stopped by user: requirements changed"
    workers.end_session(office.paths, worker.id, "failed", "exit 143", office.leases.pop(worker.id))
    assert (
        SessionStore(office.paths).get(worker.id).data["reason"]
        == "stopped by user: requirements changed"
    )


def test_a_coordinator_stops_its_worker_without_learning_its_process(office, cli, monkeypatch):
    """A session sees of another, even its own worker, only what addressing needs: who it
    is, its mode, status, task and coordinators; its process stays the person's to see."""
    worker = office.worker("3")
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        SessionStore(office.paths).attach_process(worker.id, proc.pid)
        office.become(monkeypatch, office.run)
        shown = json.loads(cli("session", "show", worker.id, "--json").out)["data"]["session"]
        assert set(shown) == {
            "id",
            "mode",
            "status",
            "coordinator_session_id",
            "parent_session_id",
            "task_ids",
        }
        done = cli("session", "stop", worker.id, "--reason", "enough", "--json")
        assert done.code == 0, done.err
        assert json.loads(done.out)["data"]["process"] == "ended its process group"
        assert str(proc.pid) not in done.out
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_stop_reason_is_written_before_the_process_hears_the_signal(office, cli, tmp_path):
    """Whoever waits on the stopped process (the run engine) reads why it ended as soon
    as it has: the spoke, on SIGTERM, finds its session already marked."""
    worker = office.worker("6")
    manifest = SessionStore(office.paths).manifest_path(worker.id)
    seen = tmp_path / "seen.txt"
    script = (
        "import json, signal, sys, time\n"
        "def on_term(*_):\n"
        f"    data = json.load(open({str(manifest)!r}))\n"
        f"    open({str(seen)!r}, 'w').write(f\"{{data['status']}}: {{data['reason']}}\")\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, on_term)\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        SessionStore(office.paths).attach_process(worker.id, proc.pid)
        done = cli("session", "stop", worker.id, "--reason", "wrong approach")
        assert done.code == 0, done.err
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert seen.read_text() == "stopped: stopped by user: wrong approach"


def test_a_stop_outlasts_the_end_the_engine_records_afterwards(office, cli):
    worker = office.worker("7")
    assert cli("session", "stop", worker.id, "--reason", "enough").code == 0
    # The worker had said it was done, then the engine records how the attempt ended.
    workers.end_session(office.paths, worker.id, "failed", "gates failed")
    assert SessionStore(office.paths).get(worker.id).data["reason"] == "stopped by user: enough"


def test_a_spokes_shell_finds_this_maestro_on_its_path(office, tmp_path):
    """The PATH a spoke gets leads with a folder holding one `maestro`, this one: the
    user's PATH need not hold the folder Maestro was installed into."""
    from maestro import __version__

    worker = office.worker("8")
    env = workers.spoke_env(office.paths, worker, path="/usr/bin:/bin")
    shim, rest = env["PATH"].split(os.pathsep, 1)
    assert rest == "/usr/bin:/bin" and os.listdir(shim) == ["maestro"]
    found = subprocess.run(
        ["sh", "-c", "maestro --version"],
        env={"PATH": env["PATH"], "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.stdout.strip() == f"maestro {__version__}", found.stderr
    before = os.stat(Path(shim) / "maestro").st_mtime_ns
    workers.spoke_env(office.paths, worker, path="/bin")  # unchanged: not rewritten
    assert os.stat(Path(shim) / "maestro").st_mtime_ns == before
    assert "PATH" not in workers.spoke_env(office.paths, worker)


def test_stop_never_signals_a_recycled_pid(office, cli):
    store = SessionStore(office.paths)
    store.create(mode="worker", session_id="ghost")
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mark = ProcessMark.of(bystander.pid).to_dict()
        store.update(
            "ghost", process={**mark, "start": int(mark["start"]) + 7, "pgid": bystander.pid}
        )
        done = cli("session", "stop", "ghost")
        assert done.code == 0 and "(no live process)" in done.out
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_end_session_marks_and_releases(office):
    worker = office.worker("5")
    workers.end_session(office.paths, worker.id, "completed", None, office.leases.pop(worker.id))
    ended = SessionStore(office.paths).get(worker.id)
    assert ended.status == "completed" and not ended.alive
    with pytest.raises(MaestroError, match="not an end status"):
        SessionStore(office.paths).end(worker.id, "dead")

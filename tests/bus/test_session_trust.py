"""A session is what Maestro recorded when it made it: a spoke may write the project's
`.ai/maestro/sessions/` (its own status goes there), but editing a manifest raises no
session's capabilities and points `session stop` at no other process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from maestro.bus import sessions
from maestro.bus.liveness import ProcessMark
from maestro.paths import ProjectPaths


def _forge_manifest(paths: ProjectPaths, session_id: str, **fields) -> None:
    path = sessions.SessionStore(paths).manifest_path(session_id)
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def test_a_session_cannot_raise_its_capabilities_by_editing_its_manifest_session_capabilities_forged(
    office, cli
):
    worker = office.worker("2")
    granted = dict(worker.data["capabilities"])
    assert granted["can_configure"] is False
    _forge_manifest(
        office.paths,
        worker.id,
        mode="coordinator",
        coordinator_session_id=None,
        parent_session_id="user",
        capabilities={name: True for name in granted},
        task_ids=["1"],
    )
    seen = sessions.SessionStore(office.paths).get(worker.id)
    assert seen.data["capabilities"] == granted
    assert (seen.mode, seen.coordinator, seen.task_ids) == ("coordinated-worker", office.run, ["2"])
    shown = json.loads(cli("session", "show", worker.id, "--json").out)
    assert shown["data"]["session"]["capabilities"] == granted
    # A manifest Maestro never wrote is no session with rights either.
    fake = sessions.SessionStore(office.paths).manifest_path("t9-forged")
    fake.parent.mkdir(parents=True)
    fake.write_text(
        json.dumps({**worker.data, "id": "t9-forged", "capabilities": {"can_configure": True}})
    )
    assert sessions.SessionStore(office.paths).get("t9-forged").data["capabilities"] == {}


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )


def test_session_stop_never_signals_a_process_a_manifest_was_edited_to_name_session_process_forged(
    office, cli
):
    """`maestro session stop` ends the session's process group: a manifest edited to name
    another of the user's processes (its pid and start time are public) had it killed."""
    worker = office.worker("2")
    spoke, victim = _sleeper(), _sleeper()
    try:
        sessions.SessionStore(office.paths).attach_process(worker.id, spoke.pid)
        mark = ProcessMark.of(victim.pid)
        _forge_manifest(
            office.paths, worker.id, process={**mark.to_dict(), "pgid": os.getpgid(victim.pid)}
        )
        res = cli("session", "stop", worker.id, "--reason", "stuck")
        assert res.code == 0, res.err
        assert f"process group {spoke.pid}" in res.out
        assert spoke.wait(timeout=10) is not None
        assert victim.poll() is None, "the forged process was signalled"
    finally:
        for process in (spoke, victim):
            process.kill()
            process.wait()

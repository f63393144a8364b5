"""Run folder, events, run lock, and the routing rule."""

import os

import pytest

from maestro.engine.rundir import (
    EventLog,
    RunDir,
    RunLock,
    busy_error,
    find_run,
    read_events,
)
from maestro.errors import MaestroError, NotFound, SpokeError
from maestro.paths import ProjectPaths
from maestro.pids import pid_alive
from maestro.roster import route


def test_events_append_and_read_from_an_offset(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    log.emit("run_started", run_id="R")
    log.emit("task_done", task="1", cost=None)
    events, offset = read_events(log.path)
    assert [e["kind"] for e in events] == ["run_started", "task_done"] and [
        e["seq"] for e in events
    ] == [1, 2]
    assert "cost" not in events[1]
    log.emit("run_ended")
    more, _ = read_events(log.path, offset)
    assert [e["kind"] for e in more] == ["run_ended"]
    assert EventLog(log.path).emit("x")["seq"] == 4  # a new writer continues the sequence


def test_half_written_line_is_not_read_yet(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"kind": "a"}\n{"kind": "b"')
    events, offset = read_events(path)
    assert [e["kind"] for e in events] == ["a"] and offset == len('{"kind": "a"}\n')


def test_run_lock_is_exclusive_and_names_its_holder(tmp_path):
    paths = ProjectPaths(tmp_path)
    first, second = RunLock(paths), RunLock(paths)
    first.acquire("R1")
    try:
        assert second.holder() == {"run_id": "R1", "pid": os.getpid()}
        with pytest.raises(MaestroError) as info:
            second.acquire("R2")
        assert "run R1" in str(info.value) and info.value.fix
    finally:
        first.release()
    assert second.holder() is None
    with second.held("R2"):
        assert first.holder()["run_id"] == "R2"


def test_latest_run_and_unknown_run(tmp_path):
    paths = ProjectPaths(tmp_path)
    with pytest.raises(NotFound):
        find_run(paths, None)
    RunDir(paths, "R1").create(pid=1)
    assert find_run(paths, None).run_id == "R1"
    with pytest.raises(NotFound) as info:
        find_run(paths, "R9")
    assert "R1" in info.value.fix


def test_run_meta_from_a_newer_maestro_is_refused(tmp_path):
    run = RunDir(ProjectPaths(tmp_path), "R1").create()
    run.meta_path.write_text('{"format_version": 99}')
    with pytest.raises(MaestroError):
        run.read_meta()


def test_pid_alive():
    assert pid_alive(os.getpid()) and not pid_alive(None) and not pid_alive(2**22 + 12345)
    assert "pid" in str(busy_error(None))


@pytest.mark.parametrize(
    "specialist,installed,hub,expected",
    [
        ("code", {"claude", "gemini", "codex"}, "claude", "codex"),
        ("code", {"claude", "gemini", "codex"}, "codex", "claude"),
        ("test", {"claude", "gemini"}, None, "claude"),
        ("review", {"claude", "gemini", "codex"}, "claude", "gemini"),
        ("research", {"claude", "gemini", "codex"}, "gemini", "claude"),
        ("code", {"claude"}, "claude", "claude"),  # the hub only when it is the only one
        ("code", {"claude", "sim"}, None, "claude"),  # never sim by the rule
    ],
)
def test_routing_rule(specialist, installed, hub, expected):
    assert route(specialist, installed, hub) == expected


def test_routing_with_no_cli_installed_names_the_fix():
    with pytest.raises(SpokeError) as info:
        route("code", {"sim"}, None)
    assert "npm install -g" in info.value.fix and "--tool sim" in info.value.fix


@pytest.mark.parametrize(
    "specialist,installed,hub,tier,expected",
    [
        # codex cannot forbid the shell in read+write: another CLI takes such a task,
        ("code", {"claude", "gemini", "codex"}, None, "read+write", "claude"),
        ("code", {"claude", "gemini", "codex"}, "claude", "read+write", "gemini"),
        # even the hub, which enforces the tier,
        ("code", {"gemini", "codex"}, "gemini", "read+write", "gemini"),
        # and codex only when it is the only CLI.
        ("code", {"codex"}, None, "read+write", "codex"),
        # claude and gemini cannot forbid writes in read+shell; codex's read-only sandbox can.
        ("research", {"claude", "gemini", "codex"}, None, "read+shell", "codex"),
        # Tiers every CLI enforces keep the specialist's order.
        ("code", {"claude", "gemini", "codex"}, None, "full", "codex"),
        ("review", {"claude", "gemini", "codex"}, None, "read-only", "gemini"),
    ],
)
def test_routing_prefers_a_cli_that_enforces_the_tier(specialist, installed, hub, tier, expected):
    assert route(specialist, installed, hub, tier) == expected


def test_the_plan_s_tool_wins_over_the_tier_preference():
    from maestro.engine.routing import choose

    assert choose("codex", "code", {"claude", "codex"}, None, tier="read+write") == "codex"
    assert choose(None, "code", {"claude", "codex"}, None, tier="read+write") == "claude"

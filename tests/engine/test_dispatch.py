"""Every dispatch is a session of the office: a task attempt, a challenge, a review, a plan."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from maestro.bus.sessions import SessionStore
from maestro.bus.workers import start_run_session
from maestro.engine.dispatch import Dispatch, HeldBack
from maestro.engine.stagger import Stagger
from maestro.errors import SpokeError
from maestro.paths import ProjectPaths
from maestro.spokes.contract import SpokeResult


def test_a_dispatch_session_lives_while_the_spoke_works_and_ends_with_it(project, cli):
    paths = ProjectPaths(project)
    store = SessionStore(paths)
    with Dispatch(
        paths,
        {"PATH": "/usr/bin"},
        cli="gemini",
        kind="review-t3",
        subject="Review Task 3",
        message="round 1",
        task="3",
    ) as office:
        working = store.get(office.session.id)
        assert (working.mode, working.status, working.task_ids) == ("worker", "working", ["3"])
        assert working.parent == "user" and working.data["tier"] == "read-only"
        assert working.data["capabilities"]["can_run_commands"] is False
        assert working.data["directive"] == {
            "subject": "Review Task 3",
            "message": "round 1",
            "from": "user",
        }
        assert office.extra_env["MAESTRO_SESSION_ID"] == office.session.id
        assert office.extra_env["PATH"].endswith(os.pathsep + "/usr/bin")
        spoke = subprocess.Popen([sys.executable, "-c", "pass"])
        office.started(spoke.pid)
        assert store.get(office.session.id).data["process"]["pid"] == spoke.pid
        spoke.wait()
        assert store.get(office.session.id).status == "working"  # its lease: still dispatching
        office.finish("failed", "gemini failed (HTTP 429)")
    ended = store.get(office.session.id)
    assert (ended.status, ended.data["reason"]) == ("failed", "gemini failed (HTTP 429)")
    assert not ended.alive  # the lease went with the dispatch


def test_an_error_out_of_the_dispatch_fails_its_session_and_goes_on(project):
    paths = ProjectPaths(project)
    with (
        pytest.raises(SpokeError),
        Dispatch(
            paths, {}, cli="claude", kind="plan", subject="Plan the goal", message="g"
        ) as office,
    ):
        raise SpokeError("claude could not plan the goal (auth): 401", "log in")
    ended = SessionStore(paths).get(office.session.id)
    assert ended.status == "failed" and ended.data["reason"].startswith("claude could not plan")


def test_the_parent_is_the_calling_session(project):
    paths = ProjectPaths(project)
    store = SessionStore(paths)
    store.create(mode="worker", session_id="hub-1")
    with Dispatch(
        paths,
        {"MAESTRO_SESSION_ID": "hub-1"},
        cli="codex",
        kind="challenge",
        subject="Challenge the plan",
        message="g",
    ) as office:
        pass
    ended = store.get(office.session.id)
    assert ended.parent == "hub-1" and ended.data["directive"]["from"] == "hub-1"
    assert ended.status == "completed"


class SleepingSpoke:
    """The external CLI seam: a real process that sleeps until told, seen by the test
    while it runs."""

    name, supports_resume = "gemini", False

    def __init__(self, seen):
        self.seen = seen

    def dispatch(self, request, *, runner, base_env, on_start):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            on_start(child.pid)
            self.seen(request, child.pid)
        finally:
            child.kill()
            child.wait()
        return SpokeResult(tool="gemini", success=False, error="gemini failed (HTTP 429)")


def asked(dispatch, cwd):
    return dispatch.request(prompt="p", system_prompt="s", cwd=cwd, title="t", timeout_s=60)


def test_a_runs_dispatch_is_marked_and_its_process_recorded_while_its_spoke_runs(project):
    paths = ProjectPaths(project)
    start_run_session(paths, "r1")
    dispatch = Dispatch(
        paths,
        {"PATH": "/usr/bin"},
        cli="gemini",
        kind="t3",
        subject="Task 3: add login",
        message="do it",
        tier="full",
        task="3",
        mode="coordinated-worker",
        coordinator="run-r1",
        run_id="r1",
        keep_session=True,
    )
    seen = {}

    def during(request, pid):
        seen["session"] = SessionStore(paths).get(dispatch.session.id)
        seen["request"], seen["pid"] = request, pid

    with dispatch:
        request = asked(dispatch, project)
        result = dispatch.run(SleepingSpoke(during), request)
    assert seen["session"].data["process"]["pid"] == seen["pid"]
    assert seen["session"].parent == "run-r1" and seen["session"].status == "working"
    sent = seen["request"]
    assert (sent.env_extra["MAESTRO_RUN_ID"], sent.env_extra["MAESTRO_TASK_ID"]) == ("r1", "3")
    assert (sent.tier, sent.task_id, sent.keep_session) == ("full", "3", True)
    ended = SessionStore(paths).get(dispatch.session.id)
    assert (ended.status, ended.data["reason"]) == ("failed", result.error)


def test_a_dispatch_held_back_by_a_stopping_run_never_starts_its_spoke(project):
    paths = ProjectPaths(project)
    stagger = Stagger(3600.0)
    running = stagger.start("gemini")  # another gemini spoke started a moment ago
    dispatch = Dispatch(
        paths,
        {},
        cli="gemini",
        kind="challenge",
        subject="s",
        message="m",
        stagger=stagger,
        stopping=lambda: "budget cap reached",
    )
    with dispatch:
        request = asked(dispatch, project)
        with pytest.raises(HeldBack, match="budget cap reached"):
            dispatch.run(SleepingSpoke(None), request)
    running.ended()
    ended = SessionStore(paths).get(dispatch.session.id)
    assert (ended.status, ended.data["reason"]) == ("stopped", "budget cap reached")


def test_a_dispatch_not_recorded_leaves_no_session(project):
    paths = ProjectPaths(project)
    with Dispatch(
        paths, {}, cli="claude", kind="plan", subject="s", message="m", recorded=False
    ) as dispatch:
        request = asked(dispatch, project)
    assert request.env_extra == {} and not (paths.machine_dir / "sessions").exists()

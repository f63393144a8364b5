"""Dispatches outside a run are sessions too: a challenge, a review, a plan asked of a CLI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from maestro.bus.dispatch import dispatch_session
from maestro.bus.sessions import SessionStore
from maestro.errors import SpokeError
from maestro.paths import ProjectPaths


def test_a_dispatch_session_lives_while_the_spoke_works_and_ends_with_it(project, cli):
    paths = ProjectPaths(project)
    store = SessionStore(paths)
    with dispatch_session(
        paths,
        kind="review-t3",
        cli="gemini",
        env={"PATH": "/usr/bin"},
        subject="Review Task 3",
        message="round 1",
        task_ids=["3"],
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
        assert office.env["MAESTRO_SESSION_ID"] == office.session.id
        assert office.env["PATH"].endswith(os.pathsep + "/usr/bin")
        spoke = subprocess.Popen([sys.executable, "-c", "pass"])
        office.started(spoke.pid)
        assert store.get(office.session.id).data["process"]["pid"] == spoke.pid
        spoke.wait()
        assert store.get(office.session.id).status == "working"  # its lease: still dispatching
        office.finish(False, "gemini failed (HTTP 429)")
    ended = store.get(office.session.id)
    assert (ended.status, ended.data["reason"]) == ("failed", "gemini failed (HTTP 429)")
    assert not ended.alive  # the lease went with the dispatch


def test_an_error_out_of_the_dispatch_fails_its_session_and_goes_on(project):
    paths = ProjectPaths(project)
    with (
        pytest.raises(SpokeError),
        dispatch_session(
            paths, kind="plan", cli="claude", env={}, subject="Plan the goal", message="g"
        ) as office,
    ):
        raise SpokeError("claude could not plan the goal (auth): 401", "log in")
    ended = SessionStore(paths).get(office.session.id)
    assert ended.status == "failed" and ended.data["reason"].startswith("claude could not plan")


def test_the_parent_is_the_calling_session(project):
    paths = ProjectPaths(project)
    store = SessionStore(paths)
    store.create(mode="worker", session_id="hub-1")
    with dispatch_session(
        paths,
        kind="challenge",
        cli="codex",
        env={"MAESTRO_SESSION_ID": "hub-1"},
        subject="Challenge the plan",
        message="g",
    ) as office:
        pass
    ended = store.get(office.session.id)
    assert ended.parent == "hub-1" and ended.data["directive"]["from"] == "hub-1"
    assert ended.status == "completed"

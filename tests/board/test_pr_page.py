"""The pull request of a `maestro run --pr` on the board: the header names it, links it and
says its checks and CI rounds; a decision it waits for is in "Needs you"."""

from __future__ import annotations

import json

import pytest

expect = pytest.importorskip("playwright.sync_api").expect

from tests.board.conftest import shots_dir
from tests.board.test_page import open_board
from tests.engine.runkit import task, write_plan

pytestmark = pytest.mark.slow


def test_the_header_shows_the_request_its_checks_and_what_waits(
    cli, project, runenv, board_of, page
):
    write_plan(cli, project, [task(1, "Write the client", files=["src/one.py"])])
    record = {
        "goal": "Add a greeting module",
        "branch": "maestro/add-a-greeting-module",
        "base": "main",
        "remote": "origin",
        "start": "0" * 40,
        "number": 7,
        "url": "https://github.com/acme/app/pull/7",
        "state": "OPEN",
        "checks": [{"name": "lint", "state": "pass"}, {"name": "tests", "state": "fail"}],
        "rounds": [{"at": "2026-11-29T10:00:00Z", "failed": ["tests"], "sent": {"1": 1}}],
        "decision": {
            "asked": "tests still failing on pull request #7 after 2 round(s) of revisions",
            "since": "2026-11-29T10:05:00Z",
            "command": "maestro pr watch",
        },
    }
    (project / ".ai" / "maestro").mkdir(parents=True, exist_ok=True)
    (project / ".ai" / "maestro" / "pr.json").write_text(json.dumps(record))
    open_board(page, board_of(project))

    line = page.locator("#pr")
    expect(line).to_be_visible()
    link = line.locator("a")
    assert link.text_content() == "Pull request #7"
    assert link.get_attribute("href") == "https://github.com/acme/app/pull/7"
    text = line.text_content()
    assert "maestro/add-a-greeting-module → main" in text
    assert "checks 1 of 2 passed, failing: tests" in text and "CI rounds: 1" in text
    need = page.locator("#needs-list li", has_text="tests still failing")
    expect(need).to_have_count(1)
    need.locator("button").click()
    box = page.locator("#need-box")
    expect(box).to_contain_text("maestro pr watch")
    assert box.locator("textarea").count() == 0  # no task to clarify: the command is the way
    assert "null" not in box.text_content()
    assert [b.text_content() for b in box.locator("button").all()] == ["Close"]
    page.screenshot(path=str(shots_dir() / "board-pr-1400.png"))
    page.set_viewport_size({"width": 800, "height": 900})
    page.screenshot(path=str(shots_dir() / "board-pr-800.png"))


def test_a_request_url_that_is_not_https_is_not_a_link(cli, project, runenv, board_of, page):
    write_plan(cli, project, [task(1)])
    record = {
        "goal": "Add a greeting module",
        "branch": "maestro/x",
        "base": "main",
        "start": "0" * 40,
        "number": 3,
        "url": "javascript:alert(1)",
    }
    (project / ".ai" / "maestro").mkdir(parents=True, exist_ok=True)
    (project / ".ai" / "maestro" / "pr.json").write_text(json.dumps(record))
    open_board(page, board_of(project))
    expect(page.locator("#pr")).to_be_visible()
    assert page.locator("#pr a").count() == 0
    assert "Pull request #3" in page.locator("#pr").text_content()


def test_a_record_that_cannot_be_read_is_said_and_the_board_serves_on(
    cli, project, runenv, board_of, page
):
    write_plan(cli, project, [task(1)])
    (project / ".ai" / "maestro").mkdir(parents=True, exist_ok=True)
    (project / ".ai" / "maestro" / "pr.json").write_text('{"branch": "main", "goal": 1}')
    open_board(page, board_of(project))
    expect(page.locator("#pr")).to_contain_text("is not a pull request record")
    expect(page.locator(".node")).to_have_count(1)

"""Steering from the board (chromium through Playwright) against real runs of the fake
CLIs: the page offers only what its command would do in the run's state, asks before an
abort and says so until the run stops, and a task's drawer keeps its history."""

from __future__ import annotations

from typing import Any

import pytest

from tests.board.conftest import shots_dir
from tests.board.test_page import open_board, start_run
from tests.engine.runkit import step, task, write_plan

pytestmark = pytest.mark.slow

FAIL = {"exit": 1, "stdout": "", "stderr": "boom"}
STUCK = ":is([data-status=blocked],[data-status=failed])"


def drawer(page: Any, tid: str) -> Any:
    page.locator(f'.node[data-task="{tid}"]').click()
    page.wait_for_selector(f"#panel-title:has-text('Task {tid}:')")
    page.wait_for_selector("#detail dl")
    return page.locator("#detail")


def button(page: Any, name: str) -> Any:
    return page.get_by_role("button", name=name, exact=True)


def test_during_a_run_only_what_works_is_offered_and_abort_asks_first(
    cli, project, runenv, board_of, page, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "2")
    write_plan(
        cli,
        project,
        [
            task(1, tool="claude", agent="coder"),
            task(2, tool="codex", agent="coder", files=["b.py"]),
            task(3, tool="codex", agent="coder", depends=[2], files=["c.py"]),
        ],
    )
    runenv.script("claude", [step(stream={"events": 30, "interval": 0.4})])
    runenv.script("codex", [FAIL])
    open_board(page, board_of(project))
    assert page.locator("#start").is_visible()
    run = start_run(project)
    page.wait_for_selector(f'.node[data-task="2"]{STUCK}', timeout=30000)
    page.wait_for_selector('.node[data-task="1"][data-status=running]')
    assert page.locator("#start").is_hidden() and page.locator("#abort").is_visible()
    # A failed task's decision waits for the run to end: `maestro run` refuses a second.
    detail = drawer(page, "2")
    for name in ("Clarify and retry", "Reassign and retry", "Run task 2"):
        assert button(page, name).count() == 0, name
    assert "once this run ends" in detail.text_content()
    assert button(page, "Abort the run").count() == 1
    # A task held by it can be stopped, not run.
    detail = drawer(page, "3")
    assert "Held by the failure of Task 2" in detail.text_content()
    assert button(page, "Stop task").count() == 1 and button(page, "Run task 3").count() == 0
    # Abort asks first: said no to, nothing happens.
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.locator("#abort").click()
    page.wait_for_timeout(300)
    assert asked and "Abort run" in asked[0]
    assert "aborting" not in page.text_content("#run") and run.poll() is None
    page.once("dialog", lambda d: d.accept())
    page.locator("#abort").click()
    page.wait_for_selector("#toast:has-text('maestro run --abort')", timeout=30000)
    page.wait_for_selector("#run:has-text('aborting')")
    assert page.locator("#abort").is_disabled()
    page.screenshot(path=str(shots_dir() / "steer-aborting.png"))
    assert run.poll() is None  # Task 1 still finishing
    run.wait(timeout=60)
    page.wait_for_selector("#run:has-text('aborted')", timeout=10000)
    assert page.locator("#abort").is_hidden()
    # Task 1 finished, 2 failed, 3 waits on 2: nothing can run, so nothing offers to.
    assert page.locator("#start").is_hidden()
    detail = drawer(page, "2")
    assert button(page, "Clarify and retry").count() == 1
    assert button(page, "3. Leave it and continue the run").count() == 0
    assert "Nothing else can run" in detail.text_content()


def test_a_decision_offers_what_works_and_the_drawer_keeps_the_tasks_history(
    cli, project, runenv, board_of, page, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(
        cli,
        project,
        [
            task(1, tool="codex", agent="coder"),
            task(2, tool="codex", agent="coder", depends=[1], files=["b.py"]),
            task(3, tool="claude", agent="coder", files=["c.py"]),
        ],
    )
    runenv.script("codex", [FAIL, step(stream={"events": 20, "interval": 0.4})])
    assert start_run(project, "1").wait(timeout=60) != 0  # Task 1 alone: it fails
    open_board(page, board_of(project))
    page.wait_for_selector(f'.node[data-task="1"]{STUCK}')
    assert page.locator("#start").is_visible()  # Task 3 can run
    detail = drawer(page, "2")
    assert "Held by the failure of Task 1" in detail.text_content()
    assert button(page, "Run task 2").count() == 0
    detail = drawer(page, "1")
    # Reassign lists the CLIs installed here (the fakes) and sim.
    offered = page.eval_on_selector_all("#reassign option", "options => options.map(o => o.value)")
    assert sorted(offered) == ["claude", "codex", "gemini", "sim"]
    assert button(page, "3. Leave it and continue the run").count() == 1
    # The reason sits above the buttons.
    reason = page.locator("#detail section[aria-label=Result]")
    assert "boom" in reason.text_content() or "exit" in reason.text_content()
    assert reason.bounding_box()["y"] < button(page, "Clarify and retry").bounding_box()["y"]
    history = page.locator("#detail section[aria-label=History]")
    assert "attempt 1 on codex" in history.text_content()
    failed = history.locator("li", has_text="blocked:").or_(
        history.locator("li", has_text="failed:")
    )
    assert failed.count() == 1
    page.screenshot(path=str(shots_dir() / "steer-decision.png"))
    page.get_by_label("1. Clarify and retry").fill("Use tabs, not spaces.")
    button(page, "Clarify and retry").click()
    page.wait_for_selector('.node[data-task="1"][data-status=running]', timeout=30000)
    page.wait_for_selector("#detail section[aria-label=History] li:has-text('clarified: Use tabs')")
    # While the retry runs, the old failure's reason is not shown as its result.
    assert page.locator("#detail section[aria-label=Result]").count() == 0
    assert "attempt 2 on codex" in history.text_content()
    assert failed.count() == 1  # the old reason, in its place in the history
    page.screenshot(path=str(shots_dir() / "steer-retry-running.png"))
    page.wait_for_selector('.node[data-task="1"][data-status=done]', timeout=30000)

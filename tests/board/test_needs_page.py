"""'Needs you' in a real browser: the header says who waits and for what, the tab's title
counts them, each task that waits is marked, and one click opens the box that answers."""

from __future__ import annotations

import pytest

expect = pytest.importorskip("playwright.sync_api").expect

from tests.board.conftest import shots_dir
from tests.board.test_page import open_board, start_run
from tests.engine.runkit import step, task, write_plan

pytestmark = pytest.mark.slow


def test_what_waits_is_in_the_header_the_title_and_on_its_node(
    cli, project, runenv, board_of, page, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(
        cli,
        project,
        [
            task(1, "Write the client", tool="codex", files=["src/one.py"]),
            task(2, "Pick the port for the server", tool="claude", agent="coder"),
        ],
    )
    runenv.script("codex", [{"http": 401}])
    ask = ["mail", "send", "--to-coordinator", "--type", "query", "--message", "Which port?"]
    wait = {"maestro": ["mail", "wait", "--timeout", "2"], "until": "port 8080", "tries": 40}
    runenv.script("claude", [step(shell=[ask, wait])])
    open_board(page, board_of(project))
    run = start_run(project)

    expect(page.locator("#needs-list li")).to_have_count(2, timeout=30000)
    assert page.title() == "(2) Maestro board · proj"
    assert page.locator("#needs-title").text_content() == "Needs you (2)"
    failed = page.locator("#needs-list li", has_text="Failed")
    assert "Task 1 · Write the client — codex: auth (after 1 attempt)" in failed.text_content()
    for tid, said in (("1", "needs you: failed"), ("2", "needs you: question")):
        node = page.locator(f'.node[data-task="{tid}"]')
        assert "needs" in node.get_attribute("class")
        assert node.get_attribute("aria-description") == said
        assert node.locator(".need-badge").count() == 1

    page.locator("#needs-list button", has_text="Question").click()
    page.wait_for_selector("#panel-title:has-text('Task 2: Pick the port for the server')")
    box = page.locator("#need-box")
    assert box.is_visible() and "Which port?" in box.text_content()
    assert "maestro mail reply m1" in box.locator("code").text_content()
    assert page.evaluate("document.activeElement.id") == "need-answer"
    page.screenshot(path=str(shots_dir() / "board-needs-1400.png"))
    page.set_viewport_size({"width": 800, "height": 900})
    page.screenshot(path=str(shots_dir() / "board-needs-800.png"))

    box.get_by_label("Your answer to m1").fill("Use port 8080.")
    box.get_by_role("button", name="Send reply").click()
    page.wait_for_selector("#toast:has-text('maestro mail reply m1')")
    assert run.wait(timeout=90) == 2
    assert "port 8080" in runenv.runs("claude")[0]["shell"][-1]["stdout"]
    expect(page).to_have_title("(1) Maestro board · proj", timeout=10000)
    assert page.locator('.node[data-task="2"] .need-badge').count() == 0
    assert box.is_hidden()

    page.locator("#needs-list button", has_text="Failed").click()
    page.wait_for_selector("#panel-title:has-text('Task 1: Write the client')")
    assert box.get_by_label("What the task needs to know").is_visible()
    assert box.get_by_role("button", name="Clarify and retry").is_visible()


def test_a_run_paused_at_its_dollar_cap_shows_its_spend_and_the_cap_in_the_header(
    cli, project, runenv, board_of, page, monkeypatch, temp_home
):
    (temp_home / ".codex").mkdir()
    (temp_home / ".codex" / "config.toml").write_text('model = "gpt-5"\n')  # estimated by it
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(
        cli,
        project,
        [
            task(
                i,
                f"Write module {i}",
                tool=tool,
                files=[f"src/m{i}.py"],
                validation=f"test -f src/m{i}.py",
            )
            for i, tool in ((1, "codex"), (2, "claude"), (3, "claude"))
        ],
    )
    runenv.script("codex", [step("src/m1.py", usage=(40_000, 1_000))])  # ~$0.06
    runenv.script("claude", [step("src/m2.py", cost=1.0), step("src/m3.py", cost=1.0)])
    assert cli("run", "--budget-usd", "1").code == 2
    open_board(page, board_of(project))
    spend = page.locator("#spend")
    expect(spend).to_be_visible()
    assert "codex 41,000 tokens, ~$0.06" in spend.text_content()
    assert "claude 1,200 tokens, $1.00" in spend.text_content()
    assert "Caps: run dollar cap: ~$1.06 of $1.00 (106%, reached)" in spend.text_content()
    expect(page.locator("#needs-list li", has_text="Dollar budget reached")).to_have_count(1)
    assert "~$0.06" in page.locator('.node[data-task="1"]').text_content()
    page.screenshot(path=str(shots_dir() / "board-caps-1400.png"))
    page.set_viewport_size({"width": 800, "height": 900})
    page.screenshot(path=str(shots_dir() / "board-caps-800.png"))

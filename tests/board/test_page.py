"""The board in a real browser (chromium through Playwright), against real runs: sim
spokes for the DAG, the fake CLIs for a transcript, a worker's question, a stop, a
decision, a review and a withheld change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from maestro.bus.mailbox import Mailbox
from maestro.cli.context import Context
from tests.board.conftest import shots_dir
from tests.cli.test_task_stop import one_slot_two_tasks
from tests.engine.runkit import answer, events, plan, prompt_of, step, task, write_plan
from tests.engine.test_workspaces import git, run_task_1_while

pytestmark = pytest.mark.slow

# Records, in the page, when each task's node first shows it done (epoch ms).
WATCH_DONE = """() => {
  window.doneAt = {};
  const mark = () => {
    for (const n of document.querySelectorAll('.node[data-status=done]'))
      if (!(n.dataset.task in window.doneAt)) window.doneAt[n.dataset.task] = performance.timeOrigin + performance.now();
  };
  new MutationObserver(mark).observe(document.getElementById('graph'), {childList: true, subtree: true});
  mark();
}"""

# Records when the transcript first shows each line of text (epoch ms).
WATCH_TRANSCRIPT = """() => {
  window.shownAt = {};
  new MutationObserver(() => {
    for (const e of document.querySelectorAll('#transcript .entry'))
      if (!(e.textContent in window.shownAt)) window.shownAt[e.textContent] = performance.timeOrigin + performance.now();
  }).observe(document.getElementById('panel'), {childList: true, subtree: true});
}"""


def start_run(root: Path, *args: str) -> subprocess.Popen[bytes]:
    """`maestro run` in the project, as a person would start it; its output beside it."""
    with (root.parent / "run-output.txt").open("ab") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "maestro", "run", *args],
            cwd=root,
            env=dict(os.environ),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


class Recorded:
    """When the engine records each event (epoch s), read from the run's events.jsonl
    every few milliseconds."""

    def __init__(self, root: Path) -> None:
        self.runs = root / ".ai" / "maestro" / "runs"
        self.seen: dict[tuple[str, str], float] = {}
        self.lines: dict[str, float] = {}  # transcript lines, when written
        self.done = False
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        while not self.done:
            now = time.time()
            latest = self.runs / "latest"
            if latest.exists():
                folder = self.runs / latest.read_text().strip()
                for event in _lines(folder / "events.jsonl"):
                    self.seen.setdefault((event["kind"], event.get("task", "")), now)
                for path in folder.glob("*.stream.jsonl"):
                    for event in _lines(path):
                        self.lines.setdefault(json.dumps(event), now)
            time.sleep(0.005)

    def stop(self) -> None:
        self.done = True
        self.thread.join()


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    found = []
    for line in text.splitlines(keepends=True):
        if line.endswith("\n"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def sim_task(tid: int, title: str, path: str, **fields: Any) -> dict[str, Any]:
    return task(tid, title, tool="sim", files=[path], validation=f"test -f {path}", **fields)


def open_board(page: Any, board: Any) -> None:
    page.goto(board.url)
    page.wait_for_selector(".node")


def test_the_dag_shows_every_task_and_turns_each_done_within_a_second(
    cli, project, board_of, page, monkeypatch
):
    (project / "README.md").write_text("project\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project, check=True)
    monkeypatch.setenv("MAESTRO_SIM_DELAY", "0.6")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "3")
    tasks = [sim_task(1, "Lay the foundation", "a.py")]
    tasks += [sim_task(i, f"Build part {i}", f"p{i}.py", depends=[1]) for i in (2, 3, 4)]
    tasks += [sim_task(5, "Tie the parts together", "z.py", depends=[2, 3, 4])]
    write_plan(cli, project, tasks, goal="Build the five-part widget")
    board = board_of(project)
    open_board(page, board)
    assert page.locator(".node").count() == 5
    for i in range(1, 6):
        assert page.locator(f'.node[data-task="{i}"]').get_attribute("data-status") == "pending"
    page.evaluate(WATCH_DONE)
    recorded = Recorded(project)
    run = start_run(project)
    page.wait_for_selector('.node[data-task="2"][data-status=done]', timeout=30000)
    page.locator('.node[data-task="3"]').click()
    page.wait_for_selector("#panel-title:has-text('Task 3')")
    page.screenshot(path=str(shots_dir() / "board-mid-run.png"))
    assert run.wait(timeout=60) == 0
    page.wait_for_selector('.node[data-task="5"][data-status=done]', timeout=10000)
    time.sleep(0.3)
    recorded.stop()
    shown = page.evaluate("window.doneAt")
    lags = {i: shown[i] / 1000 - recorded.seen[("task_done", i)] for i in map(str, range(1, 6))}
    assert all(lag < 1.0 for lag in lags.values()), lags
    page.wait_for_selector("#run:has-text(': finished')", timeout=5000)
    page.locator('.node[data-task="5"]').click()
    page.wait_for_selector("#panel-title:has-text('Task 5')")
    page.wait_for_function(  # the sessions listed, every one ended
        """() => { const shown = document.getElementById('sessions').textContent;
                   return shown.includes('completed') && !shown.includes('working'); }"""
    )
    page.screenshot(path=str(shots_dir() / "board-end.png"))


def test_a_transcript_line_shows_within_a_second_of_the_spoke_printing_it(
    cli, project, runenv, board_of, page
):
    write_plan(cli, project, [task(1, tool="claude", agent="coder")])
    runenv.script("claude", [step(stream={"events": 10, "interval": 0.5})])
    board = board_of(project)
    open_board(page, board)
    recorded = Recorded(project)
    run = start_run(project)
    page.wait_for_selector('.node[data-task="1"][data-status=running]', timeout=20000)
    page.locator('.node[data-task="1"]').click()
    page.wait_for_selector("#transcript .entry", timeout=10000)
    page.evaluate(WATCH_TRANSCRIPT)
    page.wait_for_selector("#transcript .entry:has-text('working, step 3')", timeout=10000)
    so_far = page.locator("#detail details", has_text="Its change so far")
    assert "src/app.py" in so_far.text_content()  # the running attempt's worktree
    page.screenshot(path=str(shots_dir() / "board-transcript.png"))
    page.wait_for_selector("#transcript .entry:has-text('working, step 5')", timeout=10000)
    assert run.wait(timeout=60) == 0
    recorded.stop()
    shown = page.evaluate("window.shownAt")
    written = {
        json.loads(line)["message"]["content"][0]["text"]: at
        for line, at in recorded.lines.items()
        if "working, step" in line
    }
    lags = {}
    for text, at in written.items():
        seen = [t for shown_text, t in shown.items() if text in shown_text]
        if seen and text != "working, step 0":  # the first may predate the watch
            lags[text] = seen[0] / 1000 - at
    assert len(lags) >= 4 and all(lag < 1.0 for lag in lags.values()), lags


def test_a_workers_question_is_answered_from_the_page(cli, project, runenv, board_of, page):
    write_plan(cli, project, [task(1, tool="claude", agent="coder")])
    ask = ["mail", "send", "--to-coordinator", "--type", "query", "--message", "Which port?"]
    wait = {"maestro": ["mail", "wait", "--timeout", "2"], "until": "port 8080", "tries": 40}
    runenv.script("claude", [step(shell=[ask, wait])])
    board = board_of(project)
    open_board(page, board)
    run = start_run(project)
    question = page.locator("#questions li", has_text="Which port?")
    question.wait_for(timeout=30000)
    question.get_by_label("Reply to").fill("Use port 8080.")
    question.get_by_role("button", name="Send reply").click()
    page.wait_for_selector("#toast:has-text('maestro mail reply')")
    assert run.wait(timeout=90) == 0
    shell = runenv.runs("claude")[0]["shell"]
    assert "port 8080" in shell[-1]["stdout"]
    page.wait_for_selector("#questions li:has-text('none')", timeout=5000)


def test_tasks_stopped_from_the_page_record_why(cli, project, runenv, board_of, page, monkeypatch):
    """Task 2 waits for the one slot Task 1 holds: stopped from the page, it never starts;
    then Task 1, running, is stopped from the page too. Each records why."""
    one_slot_two_tasks(cli, project, runenv, monkeypatch)
    board = board_of(project)
    open_board(page, board)
    run = start_run(project)
    page.wait_for_selector('.node[data-task="1"][data-status=running]', timeout=20000)
    for tid, why in (("2", "the spec moved"), ("1", "the requirements changed")):
        page.locator(f'.node[data-task="{tid}"]').click()
        page.get_by_label("Why stop it").fill(why)
        page.get_by_role("button", name="Stop task").click()
        page.wait_for_selector(f"#toast:has-text('maestro task stop {tid}')", timeout=30000)
        page.wait_for_selector(f'.node[data-task="{tid}"][data-status=blocked]', timeout=10000)
    run.wait(timeout=60)
    assert len(runenv.runs("claude")) == 1  # Task 2's spoke never started
    stopped = plan(project)
    assert "before it started: the spec moved" in (stopped.task("2").result or "")
    assert "the requirements changed" in (stopped.task("1").result or "")
    blocked = {e["task"]: e["reason"] for e in events(project) if e["kind"] == "task_blocked"}
    assert "the spec moved" in blocked["2"] and "the requirements changed" in blocked["1"]


def test_a_request_without_the_token_is_refused_in_the_browser(cli, project, board_of, browser):
    write_plan(cli, project, [task(1, tool="sim")])
    board = board_of(project)
    context = browser.new_context()
    stranger = context.new_page()
    assert stranger.goto(board.origin + "/").status == 200  # the page, which holds no data
    stranger.wait_for_selector("#run:has-text('refused')")
    assert stranger.locator(".node").count() == 0
    assert stranger.get_by_role("button", name="Start a run").is_disabled()
    assert stranger.goto(board.origin + "/api/state").status == 401
    assert "refused" in stranger.text_content("body")
    assert stranger.goto(board.origin + "/events").status == 401
    stranger.goto(board.origin + "/")
    stranger.wait_for_selector("#run:has-text('refused')")
    stranger.goto(board.url)  # pasted into the same tab: only the fragment changes
    stranger.wait_for_selector('.node[data-task="1"]')
    assert stranger.url == board.origin + "/"
    context.close()


def test_another_local_server_opened_after_the_board_never_receives_its_token(
    cli, project, board_of, page, other_server, monkeypatch
):
    """The token stays with the board's own origin (its port included): another server of
    127.0.0.1 that the person opens next, in the same tab or another, gets no cookie nor
    anything else holding it; the board, opened again in the tab, still reads and acts."""
    (project / "README.md").write_text("project\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project, check=True)
    monkeypatch.setenv("MAESTRO_SIM_DELAY", "0.3")
    write_plan(cli, project, [sim_task(1, "Lay the foundation", "a.py")])
    board = board_of(project)
    open_board(page, board)
    assert page.url == board.origin + "/"  # the token left the address bar
    other_url, received = other_server
    page.goto(other_url + "/same-tab")
    other = page.context.new_page()
    other.goto(other_url + "/other-tab")
    other.close()
    assert {r.split()[1] for r in received} >= {"/same-tab", "/other-tab"}
    assert all(board.token not in request for request in received), received
    assert not [r for r in received if "cookie:" in r.lower()], received
    page.goto(board.origin + "/")  # no token in the URL: the tab's session storage has it
    page.wait_for_selector('.node[data-task="1"][data-status=pending]')
    page.locator('.node[data-task="1"]').click()
    page.get_by_role("button", name="Run task 1").click()
    page.wait_for_selector("#toast:has-text('maestro run 1 --detach')", timeout=30000)
    page.wait_for_selector('.node[data-task="1"][data-status=done]', timeout=30000)
    page.screenshot(path=str(shots_dir() / "board-token-kept.png"))
    assert all(board.token not in request for request in received)


def test_spoke_text_holding_a_script_shows_as_text(cli, project, runenv, board_of, page):
    evil = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"
    write_plan(cli, project, [task(1, "Escape " + evil, tool="claude", agent="coder")])
    runenv.script("claude", [step(text=answer(summary="Done " + evil))])
    assert start_run(project).wait(timeout=60) == 0
    board = board_of(project)
    open_board(page, board)
    page.locator('.node[data-task="1"]').click()
    page.wait_for_selector("#panel-title:has-text('Task 1')")
    assert evil in page.text_content("#panel-title")
    assert evil in page.text_content("#detail")
    page.wait_for_selector("#transcript .entry")
    assert evil in page.text_content("#transcript")  # the spoke's own stream, as text
    assert page.title() == "Maestro board · proj"  # its own, with the project: no script ran
    assert page.locator("#panel script, #panel img, #graph script").count() == 0


def test_the_page_works_from_the_keyboard_and_labels_every_control(
    cli, project, runenv, board_of, page
):
    write_plan(
        cli,
        project,
        [
            task(1, tool="claude", agent="coder"),
            task(2, tool="claude", agent="coder", depends=[1], files=["b.py"]),
        ],
    )
    runenv.script("claude", [{"exit": 1, "stdout": "", "stderr": "boom"}] * 9)
    start_run(project).wait(timeout=60)
    board = board_of(project)
    open_board(page, board)
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.task") == "1":
            break
    assert page.evaluate("document.activeElement.dataset.task") == "1"
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.task") == "2"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_selector("#panel-title:has-text('Task 1')")
    page.wait_for_selector("#detail button")
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('button, textarea, select, input, [role=button]')]
            .filter(c => !(c.getAttribute('aria-label') || c.textContent.trim() ||
                           (c.id && document.querySelector(`label[for="${c.id}"]`))))
            .map(c => c.outerHTML.slice(0, 80))"""
    )
    assert unlabelled == []
    assert page.locator(".node[aria-label^='Task 1:']").count() == 1


def test_a_decision_answered_from_the_page_reaches_the_next_attempt(
    cli, project, runenv, board_of, page, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1, tool="claude", agent="coder")])
    runenv.script("claude", [{"exit": 1, "stdout": "", "stderr": "boom"}, step()])
    assert start_run(project).wait(timeout=60) != 0
    board = board_of(project)
    open_board(page, board)
    page.wait_for_selector('.node[data-task="1"][data-status=blocked]')
    page.locator('.node[data-task="1"]').click()
    page.get_by_label("1. Clarify and retry").fill("Use tabs, not spaces.")
    page.get_by_role("button", name="Clarify and retry").click()
    page.wait_for_selector(
        "#toast:has-text('maestro run 1 --clarify=Use tabs, not spaces. --detach')"
    )
    page.wait_for_selector('.node[data-task="1"][data-status=done]', timeout=30000)
    assert "Use tabs, not spaces." in prompt_of(runenv.runs("claude")[-1])
    started = [e for e in events(project) if e["kind"] == "task_started"]
    assert started[-1]["task"] == "1"


def test_a_review_is_accepted_from_the_page(cli, project, runenv, board_of, page):
    write_plan(cli, project, [task(1, tool="claude", agent="coder")])
    runenv.script("claude", [step()])
    assert start_run(project).wait(timeout=60) == 0
    approve = "I read the diff.\n\n```maestro-review\nverdict: approve\n- none\n```\n"
    runenv.script("gemini", [{"text": approve}])
    asked = cli("review", "1", "--tool", "gemini")
    assert "--auto" in asked.out + asked.err  # approved, waiting for the person's yes
    assert plan(project).task("1").review != "approved"
    board = board_of(project)
    open_board(page, board)
    page.locator('.node[data-task="1"]').click()
    page.wait_for_selector("#detail section[aria-label=Reviews]:has-text('gemini')")
    page.get_by_role("button", name="Accept the review").click()
    page.wait_for_selector("#toast:has-text('maestro review 1 --auto')", timeout=30000)
    assert plan(project).task("1").review == "approved"


def test_a_withheld_change_shows_its_patch(cli, project, runenv, board_of, page):
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'old'\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "app")

    def edit():
        (project / "src" / "app.py").write_text("def greet(name):\n    return 'mine'\n")

    assert run_task_1_while(cli, project, runenv, edit).code == 3  # done, not landed
    board = board_of(project)
    open_board(page, board)
    page.locator('.node[data-task="1"]').click()
    withheld = page.locator("#detail details", has_text="Withheld change")
    withheld.wait_for()
    assert ".ai/maestro/patches/" in withheld.text_content()
    assert "+    return f'hi {name}'" in withheld.text_content()
    assert "git merge-file src/app.py" in page.text_content("#detail")  # the Result's line


def test_a_reviewers_and_a_challengers_transcripts_show_as_they_stream(
    cli, project, runenv, board_of, page
):
    write_plan(cli, project, [task(1, tool="codex", agent="coder")])
    runenv.script("codex", [step()])
    assert start_run(project).wait(timeout=60) == 0
    approve = "I read the diff.\n\n```maestro-review\nverdict: approve\n- none\n```\n"
    runenv.script("claude", [{"text": approve, "stream": {"events": 20, "interval": 0.4}}])
    board = board_of(project)
    open_board(page, board)
    page.locator('.node[data-task="1"]').click()
    page.wait_for_selector("#panel-title:has-text('Task 1')")
    review = subprocess.Popen(
        [sys.executable, "-m", "maestro", "review", "1", "--tool", "claude"],
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    # While the reviewer answers: its dispatch listed, its transcript followed line by line.
    answering = page.locator("#detail section[aria-label=Reviews] p", has_text="answering")
    answering.get_by_role("button", name="transcript").click(timeout=20000)
    page.wait_for_selector("#transcript .entry:has-text('working, step 1')", timeout=10000)
    assert page.locator("#transcript .entry:has-text('working, step 19')").count() == 0
    page.wait_for_selector("#transcript .entry:has-text('working, step 19')", timeout=15000)
    review.wait(timeout=60)  # approved, awaiting the person: exit 1, as in a shell
    # Once recorded, the review's own line carries its transcript.
    recorded = page.locator("#detail section[aria-label=Reviews] p", has_text="R1 by claude")
    recorded.get_by_role("button", name="Transcript of review R1").click(timeout=10000)
    page.wait_for_selector("#transcript-of:has-text('review R1')")
    page.wait_for_selector("#transcript .entry:has-text('verdict: approve')")

    runenv.script("codex", [{"text": "## Scope\n- Task 1 does <b>too much</b>\n"}])
    assert cli("challenge", "--tool", "codex").code == 0
    page.get_by_role("button", name="Challenges (1)").click(timeout=10000)
    page.wait_for_selector("#detail section[aria-label='Challenge C1']:has-text('too much')")
    page.wait_for_selector("#transcript-of:has-text('challenge')")
    page.wait_for_selector("#transcript .entry:has-text('<b>too much</b>')")
    page.screenshot(path=str(shots_dir() / "board-challenges.png"), full_page=True)


SAID = '{"type":"message","role":"assistant","content":"%s"}\n'


def followed_transcript(cli: Any, project: Path, board_of: Any, page: Any) -> Path:
    """Task 1's attempt streamed one line so far, its transcript open on the page (the
    page follows it from there): the stream's path."""
    write_plan(cli, project, [task(1, tool="sim")])
    run = project / ".ai" / "maestro" / "runs" / "20261121T120000Z-1a2b"
    run.mkdir(parents=True)
    (run.parent / "latest").write_text(run.name + "\n")
    stream = run / "task-1-attempt-1.stream.jsonl"
    stream.write_text(SAID % "the first line")
    open_board(page, board_of(project))
    page.locator('.node[data-task="1"]').click()
    page.wait_for_selector("#transcript .entry:has-text('the first line')")
    return stream


def test_the_transcript_catches_up_with_11_mb_printed_at_once(cli, project, board_of, page):
    stream = followed_transcript(cli, project, board_of, page)
    lines = "".join(SAID % f"line {n:05d} of 20005 {'x' * 530}" for n in range(1, 20006))
    assert len(lines) > 11_000_000
    with stream.open("a") as handle:
        handle.write(lines)
    page.wait_for_selector("#transcript .entry:has-text('line 20005 of 20005')", timeout=10000)
    assert page.locator("#transcript .entry", has_text="bytes of the transcript not shown").count()
    page.locator("#transcript").scroll_into_view_if_needed()
    page.screenshot(path=str(shots_dir() / "board-transcript-caught-up.png"))


def test_the_transcript_moves_past_a_line_longer_than_a_read(cli, project, board_of, page):
    stream = followed_transcript(cli, project, board_of, page)
    with stream.open("a") as handle:
        handle.write(SAID % ("y" * 200 * 1024))
        handle.flush()
        time.sleep(0.5)  # the page reads the long line alone first
        handle.write(SAID % "the short line after it")
    page.wait_for_selector("#transcript .entry:has-text('the short line after it')", timeout=10000)
    cut = page.locator("#transcript .entry", has_text="bytes, cut)")
    assert cut.count() == 1 and "yyyy" in cut.text_content()
    page.locator("#transcript").scroll_into_view_if_needed()
    page.screenshot(path=str(shots_dir() / "board-transcript-long-line.png"))


def test_a_huge_mail_is_shown_cut_and_the_page_stays_quick(cli, project, board_of, page):
    write_plan(cli, project, [task(1, tool="sim")])
    body = "Which port? " + "x" * 5_000_000
    Mailbox(Context(cwd=project).paths).send(
        "t1-abcdef", ["user"], type="query", priority="normal", subject="Which port?", body=body
    )
    open_board(page, board_of(project))
    question = page.locator("#questions li", has_text="Which port?")
    question.wait_for(timeout=10000)
    assert "the whole: maestro mail show m1" in question.text_content()
    assert len(question.text_content()) < 5000
    page.locator("#threads summary").first.click()
    page.wait_for_selector("#threads li:has-text('of 5,000,012 characters')")
    question.locator("pre").evaluate("pre => (pre.scrollTop = pre.scrollHeight)")
    question.screenshot(path=str(shots_dir() / "board-mail-cut.png"))

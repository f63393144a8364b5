"""The transcript reader in a real browser (chromium through Playwright): the panel's full
height and its own scroll, following the end, the search, Markdown drawn from text nodes
only, tool calls as what they did, colour codes, and a sim run's transcript with its
node's tokens. The streams are the CLIs' genuine samples, edited where a test says."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.board.conftest import shots_dir
from tests.board.test_page import open_board
from tests.engine.runkit import plan, task, write_plan

pytestmark = pytest.mark.slow

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "host-samples"
INIT, CALL, OUTPUT, SAID, END = (
    json.loads(line) for line in (SAMPLES / "claude_stream_tool.stdout").read_text().splitlines()
)


def say(text: str) -> dict[str, Any]:
    event = copy.deepcopy(SAID)
    event["message"]["content"][0]["text"] = text
    return event


def call(n: int, name: str, given: dict[str, Any], output: str, error: bool = False) -> list[dict]:
    """Claude's tool call ``name`` with ``given`` as its input, and what it gave back."""
    used, back = copy.deepcopy(CALL), copy.deepcopy(OUTPUT)
    used["message"]["content"][0].update(id=f"toolu_{n}", name=name, input=given)
    back["message"]["content"][0].update(tool_use_id=f"toolu_{n}", content=output, is_error=error)
    return [used, back]


def lines(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def open_transcript(
    cli: Any, project: Path, board_of: Any, page: Any, events: list, *others: list
) -> Path:
    """Task 1's attempt printed ``events`` (task 2's the first of ``others``, and so on);
    the page opens task 1's transcript by hand (the panel scrolls to it): its path."""
    write_plan(cli, project, [task(n, tool="sim") for n in range(1, len(others) + 2)])
    run = project / ".ai" / "maestro" / "runs" / "20261121T120000Z-1a2b"
    run.mkdir(parents=True)
    (run.parent / "latest").write_text(run.name + "\n")
    for n, printed in enumerate(others, start=2):
        (run / f"task-{n}-attempt-1.stream.jsonl").write_text(lines(printed))
    stream = run / "task-1-attempt-1.stream.jsonl"
    stream.write_text(lines(events))
    open_board(page, board_of(project))
    page.locator('.node[data-task="1"]').click()
    page.get_by_role("button", name="Transcript of attempt 1").click()
    page.wait_for_selector("#transcript .entry.status:has-text('done:')")
    return stream


# Where the reader is, and what of it shows: its box and the panel's, and the entries whose
# whole line is inside the box's visible part.
MEASURE = """() => {
  const panel = document.getElementById('panel'), reader = document.getElementById('reader');
  const box = document.getElementById('transcript');
  const b = box.getBoundingClientRect(), r = reader.getBoundingClientRect(), p = panel.getBoundingClientRect();
  const shown = [...box.querySelectorAll('.entry')].filter((e) => {
    const at = e.getBoundingClientRect();
    return at.top >= b.top - 1 && at.bottom <= b.bottom + 1;
  });
  return {panel: panel.clientHeight, reader: r.height, inPanel: r.top >= p.top - 1 && r.bottom <= p.bottom + 1,
          shown: shown.length, last: shown.length ? shown[shown.length - 1].textContent : '',
          atEnd: box.scrollHeight - box.scrollTop - box.clientHeight < 4, top: box.scrollTop,
          following: document.getElementById('transcript-follow').getAttribute('aria-pressed'),
          label: document.getElementById('transcript-follow').textContent};
}"""


def test_the_reader_fills_the_panel_and_follows_the_end_until_the_person_scrolls_up(
    cli, project, board_of, page
):
    work = [say(f"step {n}: read module {n}") for n in range(150)]
    stream = open_transcript(cli, project, board_of, page, [INIT, *work, END])
    seen = page.evaluate(MEASURE)
    # The panel's whole height, where two lines showed: a finished task's transcript
    # stood below its fields and diff in a box of 40% of the window.
    assert seen["reader"] >= seen["panel"] - 20 and seen["inPanel"], json.dumps(seen)
    assert seen["shown"] >= 12, seen
    assert seen["atEnd"] and "done: success" in seen["last"] and seen["following"] == "true"
    page.screenshot(path=str(shots_dir() / "reader-follow-1400.png"))

    page.locator("#transcript").hover()
    page.mouse.wheel(0, -800)  # the person scrolls up: the reader stops following
    page.wait_for_function(
        "() => document.getElementById('transcript-follow').ariaPressed === 'false'"
    )
    before = page.evaluate(MEASURE)
    with stream.open("a") as handle:
        handle.write(lines([say(f"later {n}") for n in range(5)]))
    page.wait_for_selector("#transcript .entry:has-text('later 4')")
    after = page.evaluate(MEASURE)
    assert after["top"] == before["top"] and not after["atEnd"]
    assert after["label"] == "Follow (5 new)"

    page.mouse.wheel(0, 100_000)  # back at the bottom: it follows again
    page.wait_for_function(
        "() => document.getElementById('transcript-follow').ariaPressed === 'true'"
    )
    tall = "## A long answer\n\n" + "\n".join(f"- point {n}" for n in range(40))
    with stream.open("a") as handle:
        handle.write(
            lines([*call(9, "Bash", {"command": "ls"}, "a\nb"), say(tall), say("the very end")])
        )
    page.wait_for_selector("#transcript .entry:has-text('the very end')")
    seen = page.evaluate(MEASURE)
    assert seen["atEnd"] and seen["last"].endswith("the very end"), seen

    page.locator("#transcript").hover()
    page.mouse.wheel(0, -400)
    page.wait_for_function(
        "() => document.getElementById('transcript-follow').ariaPressed === 'false'"
    )
    page.get_by_role("button", name="Follow the end").click()  # or by the button
    page.wait_for_function(
        "() => document.getElementById('transcript-follow').ariaPressed === 'true'"
    )
    assert page.evaluate(MEASURE)["atEnd"]

    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_timeout(200)
    seen = page.evaluate(MEASURE)
    assert seen["reader"] >= seen["panel"] - 20 and seen["atEnd"], seen
    # From the panel's top, one click away.
    page.locator("#panel").evaluate("panel => (panel.scrollTop = 0)")
    assert not page.evaluate(MEASURE)["inPanel"]
    page.get_by_role("button", name="Read the transcript").click()
    assert page.evaluate(MEASURE)["inPanel"]
    page.screenshot(path=str(shots_dir() / "reader-follow-800.png"))


def test_the_search_marks_every_match_and_steps_through_them_opening_their_folds(
    cli, project, board_of, page
):
    events = [
        INIT,
        say("First I look for the **needle** in the module."),
        *call(1, "Bash", {"command": "grep -n needle src/app.py"}, "3: needle = 1"),
        *call(
            2,
            "Edit",
            {"file_path": "src/app.py", "old_string": "needle = 1", "new_string": "needle = 2"},
            "ok",
        ),
        say("Found it."),
        END,
    ]
    stream = open_transcript(cli, project, board_of, page, events)
    find = page.get_by_label("Search the transcript")
    find.fill("NEEDLE")
    found = page.locator("#transcript-found")
    page.wait_for_function(
        "() => document.getElementById('transcript-found').textContent === '1 of 5'"
    )
    assert page.locator("#transcript mark.found").count() == 5
    assert page.locator("mark.found.current").text_content() == "needle"
    assert page.locator("#transcript details.tool[open]").count() == 0  # the first is in a message
    find.press("Enter")  # the second: the Bash call's command, in its summary
    assert (
        found.text_content() == "2 of 5"
        and page.locator("#transcript details.tool[open]").count() == 0
    )
    find.press("Enter")
    find.press("Enter")  # the fourth: a line of the edit's diff, folded until now
    assert found.text_content() == "4 of 5"
    edit = page.locator("#transcript details.tool", has_text="Edit")
    assert edit.get_attribute("open") is not None
    assert page.locator("mark.found.current").is_visible()
    find.press("Enter")
    find.press("Enter")
    assert found.text_content() == "1 of 5"  # round again
    find.press("Shift+Enter")
    assert found.text_content() == "5 of 5"
    page.get_by_role("button", name="Previous match").click()
    assert found.text_content() == "4 of 5"
    page.get_by_role("button", name="Next match").click()
    assert found.text_content() == "5 of 5"

    # A line printed while searching is searched too; the panel built again (a running
    # task's is, every few seconds) keeps the search and the field being typed in.
    with stream.open("a") as handle:
        handle.write(lines([say("one more needle")]))
    page.wait_for_selector("#transcript .entry:has-text('one more needle')")
    assert found.text_content() == "5 of 6"
    find.focus()
    page.evaluate("() => { detailKey = ''; return loadDetail(); }")
    assert page.evaluate("document.activeElement.id") == "transcript-find"
    assert find.input_value() == "NEEDLE" and page.locator("mark.found").count() == 6

    find.press("Escape")
    assert page.locator("mark.found").count() == 0 and found.text_content() == ""
    assert "First I look for the needle in the module." in page.text_content("#transcript")


def test_another_tasks_transcript_opens_unsearched(cli, project, board_of, page):
    printed = [INIT, say("a needle here"), END]
    open_transcript(cli, project, board_of, page, printed, printed)
    page.get_by_label("Search the transcript").fill("needle")
    page.wait_for_selector("#transcript mark.found")
    page.locator('.node[data-task="2"]').click()
    page.wait_for_selector("#panel-title:has-text('Task 2')")
    page.wait_for_selector("#transcript .entry:has-text('a needle here')")
    assert page.get_by_label("Search the transcript").input_value() == ""
    assert page.locator("#transcript mark").count() == 0


HOSTILE = """# Report <img src=x onerror="document.title='pwned'">

Done <script>document.title='pwned'</script> and **bold <b>HTML</b>**.

- see [the fix](javascript:alert(1)) and [docs](https://example.com/a?b=1)
- ![diagram](http://127.0.0.1:1/beacon.png) <a href="javascript:alert(2)">link</a>

```html
<iframe src="javascript:alert(3)"></iframe><style>body{display:none}</style>
```

<svg onload=alert(4)></svg>
"""


def test_markdown_is_drawn_from_text_and_a_hostile_transcript_stays_text(
    cli, project, board_of, page
):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    answer = (
        "## Plan\n\nI'll add *one* function, `greet(name)`, then run the tests:\n\n"
        "1. Read the module\n2. Edit it\n   - keep the old name\n3. Run them\n\n"
        "| file | change |\n|---|---|\n| src/app.py | new function |\n\n"
        "```python\ndef greet(name):\n    return f'hi {name}'\n```\n\n> Nothing else changes.\n"
    )
    open_transcript(cli, project, board_of, page, [INIT, say(answer), say(HOSTILE), END])
    md = page.locator("#transcript .entry.message").first
    assert md.locator("[role=heading]").text_content() == "Plan"
    assert (
        md.locator("em").text_content() == "one"
        and md.locator("p code").text_content() == "greet(name)"
    )
    assert (
        md.locator("ol > li").count() == 3
        and md.locator("ol li ul li").text_content() == "keep the old name"
    )
    assert md.locator("table td").all_text_contents() == ["src/app.py", "new function"]
    assert md.locator("pre.code").text_content() == "def greet(name):\n    return f'hi {name}'"
    assert md.locator("blockquote").text_content() == "Nothing else changes."

    evil = page.locator("#transcript .entry.message").nth(1)
    text = evil.text_content()
    for shown in (
        "Report <img src=x onerror=\"document.title='pwned'\">",
        "Done <script>document.title='pwned'</script> and bold <b>HTML</b>.",
        "the fix (javascript:alert(1))",
        "docs (https://example.com/a?b=1)",
        "[image: diagram] (http://127.0.0.1:1/beacon.png)",
        '<a href="javascript:alert(2)">link</a>',
        '<iframe src="javascript:alert(3)"></iframe><style>body{display:none}</style>',
        "<svg onload=alert(4)></svg>",
    ):
        assert shown in text, shown
    made = "#reader script, #reader img, #reader a, #reader iframe, #reader style, #reader svg"
    assert page.locator(made).count() == 0
    assert "pwned" not in page.title() and dialogs == []
    assert not [url for url in requests if "beacon" in url or "example.com" in url]
    page.locator("#transcript").evaluate("box => (box.scrollTop = 0)")
    page.screenshot(path=str(shots_dir() / "reader-markdown-1400.png"))
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_timeout(200)
    page.screenshot(path=str(shots_dir() / "reader-markdown-800.png"))


def test_tool_calls_show_the_command_with_its_output_and_an_edit_as_a_diff(
    cli, project, board_of, page
):
    events = [
        INIT,
        *call(1, "Bash", {"command": "pytest -q", "description": "run the tests"}, "3 passed"),
        *call(
            2,
            "Edit",
            {"file_path": "src/app.py", "old_string": "x = 1\ny = 2", "new_string": "x = 1\ny = 3"},
            "The file src/app.py has been updated.",
        ),
        *call(3, "Write", {"file_path": "notes.md", "content": "# Notes\nfirst"}, "created"),
        *call(4, "Bash", {"command": "false"}, "exit 1", error=True),
        END,
    ]
    open_transcript(cli, project, board_of, page, events)
    calls = page.locator("#transcript details.tool")
    assert calls.count() == 4
    summaries = [
        s.strip() for s in page.locator("#transcript details.tool > summary").all_text_contents()
    ]
    assert summaries == [
        "Bash$ pytest -qoutput 1 line",
        "Editsrc/app.py+1 −1output 1 line",
        "Writenotes.md+2output 1 line",
        "Bash$ falsefailed, output 1 line",
    ]
    assert "{" not in page.text_content("#transcript")  # no raw JSON left
    bash = calls.nth(0)
    assert bash.get_attribute("open") is None  # folded
    bash.locator("summary").click()
    assert bash.locator("pre.output").text_content() == "3 passed"
    assert bash.locator("pre.args").text_content() == "description: run the tests"
    edit = calls.nth(1)
    edit.locator("summary").click()
    assert edit.locator("pre.diff .del").text_content() == "-y = 2\n"
    assert edit.locator("pre.diff .add").text_content() == "+y = 3\n"
    assert "error" in (calls.nth(3).get_attribute("class") or "")
    assert page.locator("#transcript > .entry.result").count() == 0  # every output under its call
    page.get_by_role("button", name="Open or close every tool call").click()
    assert page.locator("#transcript details.tool[open]").count() == 4
    page.locator("#transcript").evaluate("box => (box.scrollTop = 0)")
    page.screenshot(path=str(shots_dir() / "reader-tools-1400.png"))


def test_colour_codes_are_drawn_and_no_control_character_reaches_the_page(
    cli, project, board_of, page
):
    printed = (
        "\x1b[1m=== test session starts ===\x1b[0m\n"
        "tests/test_app.py \x1b[32m.\x1b[0m\x1b[31mF\x1b[0m\n"
        "\x1b]0;pytest\x07\x1b[2Kprogress 10%\rprogress 100%\n"
        "\x1b[31;1mFAILED\x1b[0m test_greet \x1b[38;5;9mred\x1b[39m \x1b[38;2;1;2;3mtrue\x1b[0m\x07\x00"
    )
    events = [
        INIT,
        *call(1, "Bash", {"command": "pytest"}, printed),
        say("it \x1b[33mfailed\x1b[0m"),
        END,
    ]
    open_transcript(cli, project, board_of, page, events)
    page.locator("#transcript details.tool summary").click()
    output = page.locator("#transcript pre.output")
    assert output.text_content() == (
        "=== test session starts ===\ntests/test_app.py .F\nprogress 100%\n"
        "FAILED test_greet red true"
    )
    assert output.locator("span.ansi-bold").first.text_content() == "=== test session starts ==="
    assert output.locator("span.ansi-fg-2").text_content() == "."
    failed = output.locator("span.ansi-fg-1.ansi-bold")
    assert failed.text_content() == "FAILED"
    assert output.locator("span.ansi-fg-9").text_content() == "red"
    colour = failed.evaluate("span => getComputedStyle(span).color")
    assert colour != page.locator("#transcript pre.output").evaluate(
        "pre => getComputedStyle(pre).color"
    )
    assert page.locator("#transcript .entry.message span.ansi-fg-3").text_content() == "failed"
    shown = page.text_content("#transcript")
    assert not [c for c in shown if ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F]


def test_a_sim_run_keeps_a_transcript_with_its_nodes_tokens(cli, project, board_of, page):
    """`maestro demo --keep`, then `maestro board`: the simulated spoke's work reads as a
    transcript, and its tokens are the node's."""
    write_plan(
        cli,
        project,
        [task(1, "Add the greeting helper", tool="sim", files=["src/app.py", "tests/test_app.py"])],
    )
    assert cli("run").code == 0
    tokens = plan(project).task("1").usage.total
    open_board(page, board_of(project))
    node = page.locator('.node[data-task="1"]')
    shown = f"{tokens:,} tok"
    assert shown in node.text_content()
    node.click()
    page.wait_for_selector("#transcript .entry.status:has-text('done:')")
    assert page.text_content("#transcript-tokens") == f"Task 1: {shown}, as on its node"
    assert (
        page.locator("#transcript .entry.status").last.text_content()
        == f"done: success, {tokens:,} tokens"
    )
    calls = page.locator("#transcript details.tool > summary")
    assert calls.locator(".who").all_text_contents() == ["Write", "Write"]
    assert calls.locator(".head").all_text_contents() == ["src/app.py", "tests/test_app.py"]
    answer = page.locator("#transcript .entry.message.assistant")
    assert answer.locator("[role=heading]").first.text_content() == "Status"
    assert answer.locator("ul li").count() >= 4
    page.get_by_role("button", name="Transcript of attempt 1").click()
    assert page.evaluate(MEASURE)["inPanel"]  # the panel scrolled to it
    page.screenshot(path=str(shots_dir() / "reader-sim-1400.png"))
    page.set_viewport_size({"width": 800, "height": 900})
    page.wait_for_timeout(200)
    page.screenshot(path=str(shots_dir() / "reader-sim-800.png"))

"""A real CLI spoke asks its coordinator and gets the hub's answer in the same task.

`maestro run --detach` dispatches one task to the pinned CLI, pointed at the loopback
fake model. The model, through the CLI's own shell tool, runs the office commands its
prompt lists, as they are written there: `maestro mail send --to-coordinator --type
query ...`, then `maestro mail wait`. The test plays the hub as `commands/run.md` tells
it to: `maestro wait` wakes on the question and prints the `maestro mail reply` line,
and the test answers with it. The spoke's next model turn holds the answer, the file it
then writes carries it, and the task ends done. So Maestro's spoke argv and environment
let the real CLI run `maestro` (its PATH, sandbox, approval mode, MAESTRO_* variables).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from maestro.paths import ProjectPaths
from tests.engine.runkit import answer, events, plan, write_plan

from .fake_model import ToolCall, tool_results
from .hostenv import needs
from .test_spokes import OTHER

pytestmark = pytest.mark.realcli

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Which greeting should hello.txt hold?"
ANSWER = "Write hello, office"
CRITERION = "hello.txt holds the greeting the coordinator chose"
ASK = (
    f'maestro mail send --to-coordinator --type query --subject "Greeting?" --message "{QUESTION}"'
)
WAIT = "maestro mail wait --timeout 120"
# Written with the shell, in the spoke's working folder (the project or its worktree).
WRITE = "printf 'hello, office\\n' > hello.txt"


class Spoke:
    """The spoke's model: ask, wait for the answer, write what it says, then report."""

    def __init__(self) -> None:
        self.turns: list[list[str]] = []  # the tool results each model request carried

    def __call__(self, api: str, body: Any) -> Any:
        results = tool_results(api, body)
        if "<session_context>" not in json.dumps(body):
            return "ok"  # a side request of the host (a title, a check), not the task's turn
        self.turns.append(results)
        if not results:
            return ToolCall(ASK)
        if len(results) == 1:
            return ToolCall(WAIT)
        if len(results) == 2:
            return ToolCall(WRITE)
        text = answer([CRITERION], summary="Asked the coordinator, wrote hello.txt.")
        return text.replace("src/app.py", "hello.txt")


def _hub_answers(cli: Any, spoke: Spoke, deadline_s: float = 150.0) -> tuple[str, str]:
    """Follow the run as the hub does until `maestro wait` shows a question; answer it
    with the `maestro mail reply` line printed under it. Returns (what wait printed, the
    reply's output)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        res = cli("wait", "--timeout", "60")
        # The run must not end before its question was answered.
        assert res.code == 0 and "\nnext: " in res.out, (res.out + res.err, spoke.turns)
        match = re.search(r"^  answer: (.*) mail reply (m\d+) --message", res.out, re.MULTILINE)
        if match:
            reply = cli("mail", "reply", match.group(2), "--message", ANSWER)
            assert reply.code == 0, reply.out + reply.err
            return res.out, reply.out
    raise AssertionError("the spoke's question never reached maestro wait")


def _until_ended(cli: Any) -> str:
    outputs = []
    for _ in range(10):
        res = cli("wait", "--timeout", "60")
        outputs.append(res.out)
        if res.code == 0 and "\nnext: " not in res.out:
            return "".join(outputs)
    raise AssertionError("the run never ended: " + "".join(outputs)[-2000:])


@pytest.mark.parametrize("tool", ["claude", "gemini", "codex"])
def test_a_real_spoke_asks_its_coordinator_and_gets_the_answer_in_the_same_task(
    cli, model, project, monkeypatch, tool
):
    needs(tool)
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the detached engine is `python -m maestro`
    monkeypatch.setenv("MAESTRO_AGENT_TIMEOUT", "3")  # three minutes: the hub answers in between
    task = {
        "id": 1,
        "title": "Write the greeting the coordinator chooses",
        "specialist": "code",
        "tool": tool,
        "files": ["hello.txt"],
        "criteria": [CRITERION],
        "validation": "grep -q office hello.txt",
    }
    write_plan(cli, project, [task], hub=OTHER[tool], goal="Greet the office")
    spoke = Spoke()
    model.reply = spoke
    started = cli("run", "--detach")
    assert started.code == 0, started.out + started.err
    shown, replied = _hub_answers(cli, spoke)
    assert "query from t1-" in shown and QUESTION in shown, shown
    assert replied.startswith("sent m2 to t1-"), replied
    text = _until_ended(cli)
    outcome = plan(project).task("1")
    assert outcome.status == "done", (outcome.result, text, spoke.turns)
    # The spoke asked through its shell tool, waited, and its next turn held the answer.
    asked, waited = spoke.turns[1], spoke.turns[2]
    assert any("sent m1 to run-" in r for r in asked), asked
    assert ANSWER in waited[-1], waited
    assert (project / "hello.txt").read_text() == "hello, office\n"
    # Its session, by the environment its shell had, is the task's worker of the run.
    started_event = next(e for e in events(project) if e["kind"] == "task_started")
    from maestro.bus.mailbox import Mailbox

    thread, garbled = Mailbox(ProjectPaths(project)).thread(1)
    assert [(m.sender, m.type) for m in thread] == [
        (started_event["session"], "query"),
        ("user", "answer"),
    ] and not garbled

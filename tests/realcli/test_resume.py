"""A review's revision resumes the author's Claude session (HOSTS.md section 5), with the
pinned claude and codex against the loopback fake model.

Claude Code finds a session's transcript under its working folder's slug, and every
dispatch of a task works in a worktree of its own: the revision can only continue the
conversation when Maestro puts the transcript where claude looks from the new worktree.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest

from maestro.clis.claudestore import SLUG_CAP, slug

from . import hostenv
from .fake_model import ToolCall, WriteFile, tool_results
from .hostenv import needs
from .test_spokes import CONTENT, WORKTREE, one_task, result_text, task_row, worktree_of

pytestmark = pytest.mark.realcli

FINDING = "hello.txt: the greeting ends without an exclamation mark"
REVISED = "hello, world!\n"
REVISE = "printf 'hello, world!\\n'"
REQUEST_CHANGES = f"""The file greets the world, flatly.

```maestro-review
verdict: request-changes
- major: {FINDING}
```"""
APPROVE = """The greeting is right now.

```maestro-review
verdict: approve
- none
```"""


def conversation(body: Any) -> list[Any]:
    """The request's messages but those Claude Code 2.1.332 adds with role ``system``
    (its environment, after the user's message)."""
    return [m for m in body["messages"] if m.get("role") != "system"]


def last_message(body: Any) -> str:
    return json.dumps(conversation(body)[-1])


def author_and_reviewer(api: str, body: Any) -> Any:
    """Codex reviews: changes first, then approval of the revised file. Claude writes the
    file in the worktree its prompt names and answers once the write came back; the
    revision writes with the shell (Claude's Write tool refuses to overwrite a file the
    session has not read), in the worktree its own prompt names (a resumed conversation
    names the first attempt's too), and answers once the command ran."""
    if api == "openai":
        return APPROVE if "+hello, world!" in json.dumps(body) else REQUEST_CHANGES
    conversation = json.dumps(body["messages"])
    if FINDING not in conversation:
        return (
            result_text()
            if tool_results(api, body)
            else WriteFile(str(worktree_of(body) / "hello.txt"), CONTENT)
        )
    if json.dumps(REVISE)[1:-1] in conversation:
        return result_text()
    folder = WORKTREE.findall(last_message(body))[-1]
    return ToolCall(f"{REVISE} > {folder}/hello.txt")


def revision_requests(model: Any) -> list[Any]:
    return [
        r
        for r in model.model_requests()
        if r.path.startswith("/v1/messages") and FINDING in last_message(r.body)
    ]


@pytest.fixture
def authored(cli, model, project) -> str:
    """Task 1 done by claude (codex reviews it): the session its revision would resume."""
    needs("claude")
    needs("codex")
    one_task(cli, project, "claude")
    model.reply = author_and_reviewer
    assert cli("run").code == 0
    session = task_row(project).session
    assert session
    return str(session)


def test_a_revision_continues_the_authors_claude_conversation(cli, model, project, authored):
    out = cli("review", "1", "--tool", "codex", "--auto")
    assert out.code == 0, out.out + out.err
    assert "(resuming its session)" in out.out and "fresh" not in out.out, out.out
    task = task_row(project)
    assert (task.status, task.review) == ("done", "approved")
    assert (project / "hello.txt").read_text() == REVISED
    assert task.session == authored  # the same conversation, continued
    # The revision's first request to the model carries the first attempt's conversation:
    # its prompt, the file it wrote, and its answer.
    first = revision_requests(model)[0].body
    earlier = json.dumps(conversation(first)[:-1])
    assert "Write the greeting file" in earlier and "Wrote hello.txt." in earlier
    assert len(tool_results("anthropic", first)) == 1


def test_a_revision_whose_transcript_is_gone_says_it_starts_afresh(
    cli, model, project, temp_home, authored
):
    shutil.rmtree(temp_home / ".claude" / "projects")
    out = cli("review", "1", "--tool", "codex", "--auto")
    assert out.code == 0, out.out + out.err
    assert "resuming" not in out.out and "in a fresh session" in out.out, out.out
    assert (project / "hello.txt").read_text() == REVISED
    (first, *_) = revision_requests(model)
    assert len(conversation(first.body)) == 1  # nothing of the earlier conversation


def test_a_transcript_claude_cannot_read_ends_in_a_fresh_session_that_says_so(
    cli, model, project, temp_home, authored
):
    """The transcript is there, but claude finds no conversation in it: Maestro notices
    claude's answer, dispatches the revision afresh, and says so."""
    (kept,) = (temp_home / ".claude" / "projects").glob(f"*/{authored}.jsonl")
    kept.write_text("not a transcript\n")
    out = cli("review", "1", "--tool", "codex", "--auto")
    assert out.code == 0, out.out + out.err
    assert "claude did not resume its session after all" in out.out, out.out
    assert (project / "hello.txt").read_text() == REVISED
    (first, *_) = revision_requests(model)
    assert len(conversation(first.body)) == 1
    assert task_row(project).session != authored


@pytest.mark.parametrize(
    "name",
    [
        "task 1.b_c é😀",  # each UTF-16 unit that is not an ASCII letter or digit: "-"
        "long/" + "/".join(["a" * 60] * 4),  # past the cap: cut, then the path's hash
    ],
)
def test_the_slug_is_the_folder_claude_keeps_the_transcript_in(model, temp_home, name):
    claude = needs("claude")
    folder = temp_home / "work" / name
    folder.mkdir(parents=True)
    env = hostenv.claude_env(temp_home, model.url, hostenv.shell_path())
    ran = hostenv.run([str(claude), "-p", "hi", "--output-format", "json"], cwd=folder, env=env)
    session = json.loads(ran.stdout)["session_id"]
    (kept,) = (temp_home / ".claude" / "projects").glob(f"*/{session}.jsonl")
    assert kept.parent.name == slug(os.path.realpath(folder))
    assert (len(kept.parent.name) > SLUG_CAP) == name.startswith("long")

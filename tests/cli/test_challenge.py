"""`maestro challenge` end to end, with the fake claude/gemini/codex on PATH."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from maestro.paths import ProjectPaths
from maestro.state.store import PlanStore
from tests.engine.test_workspaces import status as git_status

PLAN = """\
goal: Add a word-count command
hub: claude
tasks:
  - {id: 1, title: Count words in a file, specialist: code, files: [src/wc.py],
     criteria: ["count_words returns the number of words"], validation: "true"}
  - {id: 2, title: Add the wc subcommand, specialist: code, depends: [1], files: [src/cli.py],
     criteria: ["maestro wc FILE prints the count"], validation: "true"}
"""

ANSWER = """\
I read `src/` and the plan.

```maestro-challenge
## Assumption issues
- Task 1: assumes UTF-8 input, but the project reads files as bytes
## Missing dependencies
- None
## Scope concerns
- Task 2 also has to change the help text of the CLI
## Alternative approaches
- None
```
"""


@pytest.fixture
def planned(cli, project, fake_clis):
    (project / "README.md").write_text("# wc demo\n\nCounts words.\n", encoding="utf-8")
    res = cli("plan", "--from", "-", "--yes", stdin=PLAN)
    assert res.code == 0, res.err
    return PlanStore(ProjectPaths(project))


def test_default_challenger_is_another_vendor_read_only(cli, planned, fake_clis, monkeypatch):
    monkeypatch.setenv("MAESTRO_LOG", "summary")
    fake_clis.script("gemini", [{"text": ANSWER, "usage": {"input": 5000, "output": 300}}])
    res = cli("challenge")
    assert res.code == 0, res.err
    assert fake_clis.runs("claude") == [] and fake_clis.runs("codex") == []
    (call,) = fake_clis.runs("gemini")
    argv = call["argv"]
    assert (
        "-y" not in argv and "--yolo" not in argv and "yolo" not in argv
    )  # read-only: no write tools
    prompt = argv[argv.index("-p") + 1]
    assert (
        "### Task 1: Count words in a file" in prompt
        and "count_words returns the number of words" in prompt
    )
    assert "`README.md`:" in prompt and "# wc demo" in prompt  # recon: key files
    assert "Files the plan names that do not exist yet: src/cli.py, src/wc.py" in prompt
    assert "Assumption issues:" in res.out and "- Task 1: assumes UTF-8 input" in res.out
    assert "Scope concerns:\n    - Task 2 also has to change the help text of the CLI" in res.out
    assert "maestro plan --from <file>" in res.out and "maestro run" in res.out  # at a shell
    plan = planned.load()
    (challenge,) = plan.challenges
    assert challenge.id == "C1" and challenge.challenger == "gemini" and challenge.parsed
    assert challenge.usage.input == 5000 and challenge.usage.output == 300
    assert challenge.cost is not None and challenge.cost_estimated  # gemini reports no dollars
    assert [(f.task, f.text) for f in challenge.findings["assumptions"]] == [
        ("1", "assumes UTF-8 input, but the project reads files as bytes")
    ]
    assert [(f.task, f.text) for f in challenge.findings["scope"]] == [
        ("2", "Task 2 also has to change the help text of the CLI")
    ]
    log = (planned.paths.log).read_text(encoding="utf-8")
    assert "| Challenge | Gemini (challenge) | 5,300 (~$" in log and "C1: 2 findings" in log


def test_all_asks_every_other_cli_in_parallel(cli, planned, fake_clis):
    fake_clis.script("gemini", [{"text": ANSWER, "sleep": 0.8}])
    fake_clis.script("codex", [{"text": ANSWER.replace("UTF-8", "ASCII"), "sleep": 0.8}])
    res = cli("challenge", "--all", "--json")
    assert res.code == 0, res.err
    body = json.loads(res.out)
    assert [a["tool"] for a in body["data"]["answers"]] == ["gemini", "codex"]
    assert all(a["ok"] and a["parsed"] for a in body["data"]["answers"])
    assert fake_clis.runs("claude") == []  # the hub's own vendor is not asked
    (gemini,), (codex,) = fake_clis.runs("gemini"), fake_clis.runs("codex")
    assert abs(gemini["time"] - codex["time"]) < 0.8  # both started before either answered
    # Read-only by Maestro's sandbox (no writable worktree); codex's own bypassed.
    assert "--dangerously-bypass-approvals-and-sandbox" in codex["argv"]
    plan = planned.load()
    assert [(c.id, c.challenger) for c in plan.challenges] == [("C1", "gemini"), ("C2", "codex")]
    assert "ASCII" in plan.challenges[1].findings["assumptions"][0].text


def test_unparseable_answer_is_kept_verbatim_and_flagged(cli, planned, fake_clis):
    text = "Looks fine overall.\n\nMaybe | split task 2?\n\n```\nno format here\n```\n"
    fake_clis.script("gemini", [{"text": text}])
    res = cli("challenge")
    assert res.code == 0, res.err
    assert "did not follow the format" in res.out and "(C1)" in res.out
    (challenge,) = planned.load().challenges
    assert challenge.parsed is False and challenge.findings == {}
    assert challenge.raw == text
    assert "Maybe | split task 2?" in planned.paths.plan.read_text(encoding="utf-8")


def test_tool_names_the_challenger_and_a_missing_one_is_refused(cli, planned, fake_clis):
    fake_clis.script("codex", [{"text": ANSWER}])
    assert cli("challenge", "--tool", "codex").code == 0
    assert len(fake_clis.runs("codex")) == 1 and fake_clis.runs("gemini") == []
    fake_clis.uninstall("gemini")
    res = cli("challenge", "--tool", "gemini")
    assert res.code == 1
    assert res.err.count("\n") == 1
    assert (
        "gemini CLI is not installed" in res.err and "npm install -g @google/gemini-cli" in res.err
    )


def test_only_the_hubs_vendor_installed_says_so(cli, planned, fake_clis):
    fake_clis.uninstall("gemini")
    fake_clis.uninstall("codex")
    fake_clis.script("claude", [{"text": ANSWER}])
    res = cli("challenge")
    assert res.code == 0, res.err
    assert "note: only claude is installed, so the challenger is the same vendor" in res.out
    (call,) = fake_clis.runs("claude")
    tools = call["argv"][call["argv"].index("--allowedTools") + 1]
    assert "Write" not in tools and "Edit" not in tools and "Bash" not in tools


def test_a_challenger_that_fails_records_nothing(cli, planned, fake_clis):
    before = planned.paths.plan.read_text(encoding="utf-8")
    fake_clis.script("gemini", [{"http": 500}])
    res = cli("challenge")
    assert res.code == 1
    assert "gemini: failed:" in res.out and "No challenger answered" in res.out
    assert planned.paths.plan.read_text(encoding="utf-8") == before


def test_a_challenger_that_tries_to_write_is_refused_by_its_cli(cli, planned, fake_clis, project):
    fake_clis.script(
        "gemini", [{"text": ANSWER, "write": {"path": "src/wc.py", "content": "hacked"}}]
    )
    assert cli("challenge").code == 0
    (call,) = fake_clis.runs("gemini")
    assert (
        call["writes"][0]["written"] is False
        and "not offered headless" in call["writes"][0]["refused"]
    )
    assert not (project / "src" / "wc.py").exists()


def test_a_challenger_that_writes_anyway_changes_nothing_of_the_users(
    cli, planned, fake_clis, project
):
    """A CLI that writes despite its read-only tier (``force``: the tier is only asked of
    it) works in a worktree of the project, which its sandbox keeps read-only."""
    (project / "src").mkdir()
    (project / "src" / "util.py").write_text("def helper():\n    return 1\n")  # not committed
    writes = [
        {"path": "README.md", "content": "rewritten by the challenger\n"},
        {"path": "src/util.py", "content": "hacked\n"},
        {"path": "src/wc.py", "content": "hacked\n"},
    ]
    fake_clis.script("gemini", [{"text": ANSWER, "write": writes, "force": True}])
    before = git_status(project)
    res = cli("challenge")
    assert res.code == 0, res.err
    (call,) = fake_clis.runs("gemini")
    worktrees = project / ".ai" / "maestro" / "worktrees"
    assert Path(call["cwd"]).is_relative_to(worktrees)  # it read a worktree, not the project
    assert [w["refused"] for w in call["writes"]] == ["Read-only file system"] * 3
    assert all(Path(w["path"]).is_relative_to(worktrees) for w in call["writes"])
    assert (project / "README.md").read_text() == "# wc demo\n\nCounts words.\n"
    assert (project / "src" / "util.py").read_text() == "def helper():\n    return 1\n"
    assert not (project / "src" / "wc.py").exists()
    after = git_status(project)
    assert after == before
    assert not [p for p in worktrees.iterdir() if p.is_dir()]  # gone with the challenge
    assert planned.load().challenges[0].parsed  # the answer was still recorded


def test_no_plan_is_one_line_with_the_fix(cli, project, fake_clis):
    res = cli("challenge")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "no plan" in res.err and "maestro plan --from" in res.err


def test_each_challenger_is_a_session_that_ends_with_its_answer(cli, planned, fake_clis):
    fake_clis.script("gemini", [{"text": ANSWER}])
    fake_clis.script("codex", [{"http": 500}])
    cli("challenge", "--all")
    listed = json.loads(cli("session", "list", "--json").out)["data"]["sessions"]
    by_cli = {s["cli"]: s for s in listed if s["id"].startswith("challenge-")}
    assert set(by_cli) == {"gemini", "codex"}
    for name, status in (("gemini", "completed"), ("codex", "failed")):
        session = by_cli[name]
        (call,) = fake_clis.runs(name)
        assert (session["mode"], session["status"], session["parent_session_id"]) == (
            "worker",
            status,
            "user",
        )
        assert call["env"]["MAESTRO_SESSION_ID"] == session["id"]
        # The sandbox's pid (the fake's own means nothing outside its pid namespace).
        assert call["sandboxed"] and session["process"]["pid"] != call["pid"]
        assert session["directive"]["subject"] == "Challenge the plan"
    assert "high demand" in by_cli["codex"]["reason"]  # the error the CLI gave


def test_a_challenger_that_writes_into_the_project_is_put_back_and_not_heard_finding_8(
    cli, planned, fake_clis, project, unconfined
):
    """A challenger that writes by absolute path into the user's tree: the file is put
    back, the answer is not recorded, and the message names what it did."""
    target = project / "README.md"
    fake_clis.script(
        "gemini",
        [{"text": ANSWER, "write": [{"path": str(target), "content": "defaced\n"}], "force": True}],
    )
    res = cli("challenge")
    assert target.read_text() == "# wc demo\n\nCounts words.\n"
    assert "README.md (changed)" in res.out + res.err
    assert not planned.load().challenges


def test_a_quiet_challenger_gets_a_line_with_what_it_last_said(
    cli, planned, fake_clis, monkeypatch
):
    monkeypatch.setattr("maestro.process.QUIET_S", 0.4)
    fake_clis.script(
        "claude", [{"early": {"stderr": "waiting for network\n"}, "sleep": 1.1, "text": ANSWER}]
    )
    res = cli("challenge", "--tool", "claude")
    assert res.code == 0, res.err
    quiet = [line for line in res.out.splitlines() if "no answer yet" in line]
    assert len(quiet) >= 2, res.out  # one each 0.4 s of a 1.1 s silence
    said = "s; last on its stderr: waiting for network"
    for line in quiet:
        assert line.startswith("claude: no answer yet after ")
        # (A line before its first word on stderr, on a machine slow to start it, says so.)
        assert line.endswith((said, "s, nothing on its stderr")), line
    assert quiet[-1].endswith(said), res.out
    assert "no answer yet" not in cli("challenge", "--tool", "claude", "--json").out


def test_a_codex_waiting_for_network_fails_in_seconds_with_its_reason(cli, planned, fake_clis):
    events = [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {
            "type": "error",
            "message": "Reconnecting... waiting for network (Connection failed: error sending request)",
        },
    ]
    early = "".join(json.dumps(event) + "\n" for event in events)
    fake_clis.script("codex", [{"early": {"stdout": early}, "hang": True}])
    started = time.monotonic()
    res = cli("challenge", "--tool", "codex", "--json")
    assert time.monotonic() - started < 10
    (answer,) = json.loads(res.out)["data"]["answers"]
    assert "waiting for network" in answer["error"]
    # The temporary HOME holds no codex login, which the error names with its fix.
    assert "codex is not signed in" in answer["error"] and "codex login" in answer["error"]


def test_next_steps_pipe_a_hubs_plan_and_name_a_persons_file():
    from maestro.cli.challenge import next_steps

    assert "`maestro plan --from -`" in next_steps({"CLAUDECODE": "1"})[0]
    assert "`maestro plan --from <file>`" in next_steps({})[0]

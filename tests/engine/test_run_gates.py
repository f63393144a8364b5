"""The four quality gates and the rungs of the retry ladder, against fake CLIs."""

import pytest

from tests.engine.runkit import answer, events, plan, prompt_of, step, task, write_plan


def test_unverified_criterion_warns_under_normal(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(text=answer(checked=False))])
    assert cli("run").code == 0
    t = plan(project).task("1")
    assert t.status == "done" and "criteria: warn" in t.result and "not verified" in t.result
    done = next(e for e in events(project) if e["kind"] == "task_done")
    assert any("criteria: warn" in w for w in done["warnings"])


def test_unverified_criterion_fails_under_strict_and_retries_with_context(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_VALIDATION_STRICTNESS", "strict")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(text=answer(checked=False)), step()])
    assert cli("run").code == 0
    second = runenv.runs("codex")[1]
    retry_prompt = prompt_of(second)
    assert "Retry context" in retry_prompt and "The criteria gate failed" in retry_prompt
    # The first attempt's worktree is gone; its diff is the context.
    assert "previous attempt's changes" in retry_prompt and "+def greet" in retry_prompt
    assert plan(project).task("1").attempts == 2


def test_spoke_reporting_failure_fails_criteria_even_lenient(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_VALIDATION_STRICTNESS", "lenient")
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(text=answer(status="failed"))])
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "blocked" and "spoke reported status failed" in t.result


def test_format_gate_missing_result_block_retries_with_context(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(text="All done, trust me."), step()])
    assert cli("run").code == 0
    second = runenv.runs("codex")[1]
    assert "could not be read" in prompt_of(second)


def run_with_an_extra_write(cli, project, fakes, path, content):
    """Task 1 owns src/app.py; its spoke also writes ``path``."""
    write_plan(cli, project, [task(1)])
    s = step()
    s["write"].append({"path": path, "content": content})
    fakes.script("codex", [s])
    return cli("run").code


def test_out_of_scope_edit_fails_at_once_without_retry(cli, project, runenv):
    assert (
        run_with_an_extra_write(cli, project, runenv, "README.md", "rewritten by the spoke\n") == 2
    )
    t = plan(project).task("1")
    assert t.status == "failed" and "scope gate" in t.result and "README.md" in t.result
    assert len(runenv.runs("codex")) == 1
    assert t.receipt is not None and "README.md" in t.receipt.files_changed
    # Thrown away with its worktree: the user's tree is as it was.
    assert (project / "README.md").read_text() == "project\n"
    assert not list((project / ".ai" / "maestro" / "worktrees").glob("*-task-*"))


def test_out_of_scope_edit_only_warns_when_lenient(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_VALIDATION_STRICTNESS", "lenient")
    assert run_with_an_extra_write(cli, project, runenv, "notes.txt", "x\n") == 0
    t = plan(project).task("1")
    assert t.status == "done" and "scope: warn" in t.result and "notes.txt" in t.result


def test_untracked_new_file_outside_scope_is_caught(cli, project, runenv):
    assert run_with_an_extra_write(cli, project, runenv, "scratch/tmp.py", "x = 1\n") == 2
    assert "scratch/tmp.py" in plan(project).task("1").result


def test_integration_failure_retries_with_the_output_then_passes(cli, project, runenv):
    check = "grep -q greet src/app.py || (echo 'greet is missing' && exit 3)"
    write_plan(cli, project, [task(1, validation=check)])
    runenv.script("codex", [step(content="x = 1\n"), step()])
    assert cli("run").code == 0
    t = plan(project).task("1")
    assert t.status == "done" and t.receipt.validation_exit == 0 and t.attempts == 2
    retry_prompt = prompt_of(runenv.runs("codex")[1])
    assert "greet is missing" in retry_prompt and "x = 1" in retry_prompt


def test_gate_failure_exhausts_the_ladder_and_needs_decomposition(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "2")
    write_plan(
        cli, project, [task(1, validation="false"), task(2, files=["src/b.py"], depends=[1])]
    )
    runenv.default("codex", step())
    assert cli("run").code == 2
    one, two = plan(project).task("1"), plan(project).task("2")
    assert one.status == "blocked" and one.attempts == 3
    assert one.result.startswith("needs decomposition: integration gate: `false` exited 1")
    assert two.status == "pending"
    decision = next(e for e in events(project) if e["kind"] == "decision")
    assert [o["option"] for o in decision["options"]] == ["1", "2", "3", "4"]
    ended = events(project)[-1]
    assert ended["kind"] == "run_ended" and ended["status"] == "incomplete"


def test_clarify_reruns_a_blocked_task_with_the_clarification(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "0")
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(text="no result block"), step()])
    assert cli("run").code == 2 and plan(project).task("1").status == "blocked"
    res = cli("run", "1", "--clarify", "greet must say hello in French")
    assert res.code == 0, res.out + res.err
    assert "greet must say hello in French" in prompt_of(runenv.runs("codex")[1])
    t = plan(project).task("1")
    assert t.status == "done" and t.attempts == 2


def test_reassign_a_failed_task_to_another_cli(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{"http": 401}])
    runenv.script("gemini", [step()])
    assert cli("run").code == 2
    assert cli("run", "1", "--tool", "gemini").code == 0
    t = plan(project).task("1")
    assert t.status == "done" and t.tool == "gemini" and len(runenv.runs("gemini")) == 1


@pytest.mark.parametrize("flag", ["--clarify", "--agent"])
def test_clarify_and_agent_need_a_task(cli, project, runenv, flag):
    write_plan(cli, project, [task(1)])
    res = cli("run", flag, "x")
    assert res.code == 1 and "needs a TASK_ID" in res.err

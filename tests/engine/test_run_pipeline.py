"""One task through the pipeline against fake CLIs: success, receipts, error kinds."""

import json

import pytest

from tests.engine.runkit import events, kinds, plan, prompt_of, step, task, write_plan


def test_success_writes_state_receipt_tokens_and_events(cli, project, runenv, temp_home):
    (temp_home / ".codex").mkdir()
    (temp_home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n')  # priced by it
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "done" and t.tool == "codex" and t.attempts == 1
    assert t.usage.input == 1000 and t.usage.output == 200
    assert t.cost is not None and t.cost_estimated  # codex reports no dollars: estimated
    assert t.receipt.files_changed == ["src/app.py"] and "1 file changed" in t.receipt.diff_stat
    assert t.receipt.validation == "test -f src/app.py" and t.receipt.validation_exit == 0
    assert t.receipt.commit and len(t.receipt.diff_sha) == 64
    assert "greet(name)" in t.downstream_context
    assert t.pid is None and t.run_id and t.started and t.finished
    assert kinds(project) == ["run_started", "task_started", "spend", "task_done", "run_ended"]
    call = runenv.runs("codex")[0]
    assert call["stdin_devnull"] and call["env"]["MAESTRO_SPOKE"] == "1"
    assert call["env"]["MAESTRO_TASK_ID"] == "1"
    assert "task 1 done: codex, 1,200 tokens" in res.out


def test_json_output_is_the_summary(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    res = cli("run", "--json")
    body = json.loads(res.out)
    assert body["ok"] and body["data"]["status"] == "finished"
    assert body["data"]["tasks"][0]["status"] == "done" and body["data"]["tokens"] == 1200


def test_dependant_gets_the_downstream_context(cli, project, runenv):
    write_plan(
        cli,
        project,
        [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])],
    )
    runenv.script("codex", [step(), step("src/b.py")])
    assert cli("run").code == 0
    second = runenv.runs("codex")[1]
    assert "greet(name) -> str in src/app.py" in prompt_of(second)


@pytest.mark.parametrize("http,kind", [(401, "auth")])
def test_auth_fails_at_once_with_the_fix(cli, project, runenv, http, kind):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{"http": http}])
    runenv.uninstall("gemini")
    res = cli("run")
    assert res.code == 2
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 1
    assert "log in to codex" in t.result and "Options:" in t.result
    assert "maestro run 1 --tool <claude|codex>" in t.result  # gemini is not installed
    assert len(runenv.runs("codex")) == 1
    assert "decision" in kinds(project)


@pytest.mark.parametrize("http", [429, 500, 503])
def test_rate_limit_and_server_errors_retry_then_succeed(cli, project, runenv, http):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{"http": http}, step()])
    assert cli("run").code == 0
    t = plan(project).task("1")
    assert t.status == "done" and t.attempts == 2
    retry = next(e for e in events(project) if e["kind"] == "task_retry")
    assert retry["action"] == "retry"


def test_transient_failure_that_persists_fails_after_max_retries(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "2")
    write_plan(cli, project, [task(1)])
    runenv.default("codex", {"http": 429})
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "failed" and t.attempts == 3 and "still failing after 3 attempts" in t.result
    assert len(runenv.runs("codex")) == 3


def test_turn_limit_retries_with_context(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    runenv.script("claude", [{"turn_limit": True}, step()])
    assert cli("run").code == 0
    first, second = runenv.runs("claude")
    assert "Retry context" not in prompt_of(first)
    assert "ran out of turns" in prompt_of(second)
    assert plan(project).task("1").attempts == 2


def test_timeout_without_output_retries(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_AGENT_TIMEOUT", "0.02")  # 1.2 s
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [{"hang": True}, step()])
    assert cli("run").code == 0
    t = plan(project).task("1")
    assert t.status == "done" and t.attempts == 2
    assert "timeout" in next(e for e in events(project) if e["kind"] == "task_retry")["reason"]


def test_bad_flag_fails_at_once(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    runenv.script("claude", [{"sample": "claude_bad_flag"}])
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "failed" and "rejected Maestro's command line" in t.result
    assert len(runenv.runs("claude")) == 1


def test_untrusted_folder_fails_at_once(cli, project, runenv):
    from tests.fakes.samples import read_sample

    write_plan(cli, project, [task(1, tool="gemini")])
    runenv.script(
        "gemini", [{"stdout": "", "stderr": read_sample("gemini_no_trust_env").stderr, "exit": 55}]
    )
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "failed" and "trust this folder" in t.result
    assert len(runenv.runs("gemini")) == 1


def test_garbage_output_fails_the_format_gate_then_blocks(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_RETRIES", "1")
    write_plan(cli, project, [task(1)])
    runenv.default("codex", {"garbage": True})
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "blocked" and t.result.startswith("needs decomposition")
    assert t.attempts == 2
    assert "Options: 1) provide clarification and retry" in t.result


def test_missing_cli_blocks_before_dispatch_with_the_remedy(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="codex")])
    runenv.uninstall("codex")
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert (
        t.status == "blocked"
        and "not dispatched: AAVSR Authority" in t.result
        and "codex" in t.result
    )
    assert runenv.runs("codex") == []


def test_cli_gone_after_detection_fails_with_the_install_command(cli, project, runenv, monkeypatch):
    """codex is uninstalled between the run's lookup and its spoke's start."""
    from maestro.engine import run as engine_run

    write_plan(cli, project, [task(1, tool="codex")])
    seen = engine_run.detect_available()
    monkeypatch.setattr(engine_run, "detect_available", lambda env=None, **_: dict(seen))
    runenv.uninstall("codex")
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert t.status == "failed" and "install it with `npm" in t.result


def test_a_claude_task_keeps_its_session_for_a_later_review(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    runenv.script("claude", [step()])
    assert cli("run").code == 0
    (call,) = runenv.runs("claude")
    assert "--no-session-persistence" not in call["argv"]
    assert plan(project).task("1").session  # what `maestro review` resumes


def test_a_task_no_installed_cli_can_take_fails_with_the_decision(cli, project, runenv):
    write_plan(cli, project, [task(1, tool=None)])
    for name in ("claude", "gemini", "codex"):
        runenv.uninstall(name)
    res = cli("run")
    assert res.code == 2
    t = plan(project).task("1")
    assert (
        t.status == "failed"
        and "no spoke CLI is installed" in t.result
        and "--tool sim" in t.result
    )
    assert "decision" in kinds(project)


def test_huge_output_is_handled(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    runenv.script("claude", [step(huge_mb=3)])
    assert cli("run").code == 0
    assert plan(project).task("1").status == "done"


def test_outside_git_the_scope_gate_is_skipped_and_said_so(cli, tmp_path, fake_clis, monkeypatch):
    root = tmp_path / "plain"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0")
    write_plan(cli, root, [task(1, tool="claude")])
    fake_clis.script("claude", [step()])
    res = cli("run", "--log", "summary")
    assert res.code == 0
    first = res.out.splitlines()[0]
    assert "; in place, in the shared working tree (not a git repository);" in first
    t = plan(root).task("1")
    assert t.status == "done" and "scope: skipped (not a git repository" in t.result
    assert (
        t.receipt.validation_exit == 0
        and t.receipt.files_changed == []
        and t.receipt.commit is None
    )
    assert (
        "changes not measured (not a git repository)"
        in (root / ".ai" / "MAESTRO-LOG.md").read_text()
    )


def test_a_change_made_between_dispatches_is_reported_not_attributed(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    two = [task(1), task(2, files=["src/b.py"], validation="test -f src/b.py", depends=[1])]
    write_plan(cli, project, two)
    # Task 1's validation writes outside any task: it runs while no spoke writes.
    (project / ".ai" / "MAESTRO.md").write_text(
        (project / ".ai" / "MAESTRO.md")
        .read_text()
        .replace("test -f src/app.py", "test -f src/app.py && echo made > by-validation.txt")
    )
    runenv.script("codex", [step(), step("src/b.py")])
    res = cli("run", "--json", "--in-place")  # the shared tree: the only mode that can see it
    body = json.loads(res.out)
    assert body["data"]["status"] == "finished", body
    assert body["data"]["unattributed"] == ["by-validation.txt"]
    assert "(not attributed to any task): by-validation.txt" in body["data"]["message"]
    assert plan(project).task("2").receipt.files_changed == ["src/b.py"]


def test_bad_budget_table_stops_the_run_before_any_dispatch(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    (project / ".ai" / "maestro.toml").write_text("[budgets.codex]\nbudget = 'lots'\n")
    res = cli("run")
    assert res.code == 1 and "[budgets.codex] budget" in res.err and "Fix:" in res.err
    assert runenv.runs("codex") == [] and plan(project).task("1").status == "pending"
    assert events(project)[-1]["status"] == "error"


def test_an_error_outside_the_ladder_fails_the_task_instead_of_leaving_it_running(
    cli, project, runenv, monkeypatch
):
    from maestro.engine import workspace
    from maestro.errors import MaestroError

    def broken(*args, **kwargs):
        raise MaestroError("git broke.", "repair it.")

    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step()])
    monkeypatch.setattr(workspace.Worktrees, "measure", broken)
    assert cli("run").code == 2
    t = plan(project).task("1")
    assert (
        t.status == "failed" and t.result.startswith("git broke. Fix: repair it.") and t.pid is None
    )


def test_a_read_write_task_goes_to_a_cli_that_can_forbid_the_shell(cli, project, runenv):
    # technical-writer is read+write: codex would run it with the shell (workspace-write).
    write_plan(
        cli,
        project,
        [
            task(1, agent="technical-writer", files=["docs/a.md"], validation="test -f docs/a.md"),
            task(
                2,
                agent="technical-writer",
                files=["docs/b.md"],
                validation="test -f docs/b.md",
                tool="codex",
            ),
        ],
        hub="gemini",
    )
    runenv.script("claude", [step("docs/a.md")])
    runenv.script("codex", [step("docs/b.md")])
    assert cli("run").code == 0
    assert plan(project).task("1").tool == "claude"  # routed away from codex
    assert plan(project).task("2").tool == "codex"  # named by the plan: kept
    assert len(runenv.runs("claude")) == 1 and len(runenv.runs("codex")) == 1

"""Dispatching to the fake CLIs: every error kind, timeouts, budgets, writes, environment."""

from __future__ import annotations

import time

import pytest

from maestro.config import load_settings
from maestro.errors import MaestroError
from maestro.spokes.base import refuse_if_inside_spoke
from maestro.spokes.contract import DispatchRequest
from maestro.spokes.registry import get_spoke

CLIS = ("claude", "gemini", "codex")
SUBMISSION = "## Status\nsuccess\n\n## Summary\nDid it.\n\n## Changes\n- none\n\n## Verification\n- [x] ok\n\n## Issues\nNone\n"


def dispatch(cli: str, project, **kw):
    kw.setdefault("timeout_s", 30)
    return get_spoke(cli).dispatch(DispatchRequest(prompt="Do the task.", cwd=project, **kw))


@pytest.mark.parametrize("cli", CLIS)
def test_success_returns_the_final_text(fake_clis, project, cli):
    fake_clis.script(
        cli,
        [
            {
                "text": SUBMISSION,
                "usage": {"input": 1200, "output": 300, "cached": 50},
                "session_id": "sess-1",
            }
        ],
    )
    result = dispatch(cli, project)
    assert result.success and result.error_kind is None
    assert result.text == SUBMISSION
    assert (result.usage.input, result.usage.output, result.usage.cached) == (1200, 300, 50)
    assert result.session_id == "sess-1"
    if cli == "codex":  # its output names no model, and none was set: no price, named
        assert result.cost is None and result.unpriced == "codex's default model (it named none)"
    else:
        assert result.cost is not None and result.cost > 0
        assert result.cost_estimated is (cli != "claude")
    assert result.argv[0] == cli and result.duration_s > 0 and result.exit_code == 0


@pytest.mark.parametrize("cli", CLIS)
@pytest.mark.parametrize(
    ("status", "kind", "transient"),
    [(401, "auth", False), (429, "rate_limit", True), (500, "server", True)],
)
def test_api_errors(fake_clis, project, cli, status, kind, transient):
    fake_clis.script(cli, [{"http": status}])
    result = dispatch(cli, project)
    assert not result.success
    assert result.error_kind == kind
    assert result.transient is transient
    # Codex words a 500 without its status, as the real one does.
    assert ("high demand" if (cli, status) == ("codex", 500) else str(status)) in result.error


def test_gemini_api_error_exits_with_the_status_mod_256(fake_clis, project):
    fake_clis.script("gemini", [{"http": 429, "retries": 0}])
    result = dispatch("gemini", project)
    assert result.exit_code == 429 % 256 and result.error_kind == "rate_limit"


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit"), (500, "server"), (503, "server")]
)
def test_gemini_is_stopped_at_its_own_first_retry(fake_clis, project, status, kind):
    # The fake retries like the real gemini (for an hour here); the spoke stops it at the
    # first retry notice so that Maestro's ladder decides, long before the time limit.
    fake_clis.script("gemini", [{"http": status}])
    started = time.monotonic()
    result = dispatch("gemini", project, timeout_s=60)
    assert time.monotonic() - started < 20
    assert (result.error_kind, result.transient, result.timed_out) == (kind, True, False)
    assert result.error.startswith(f"gemini failed (HTTP {status}): fake {status}")


def test_claude_spoke_env_turns_off_its_own_retries(fake_clis, project):
    dispatch("claude", project)
    assert fake_clis.runs("claude")[0]["env"]["CLAUDE_CODE_MAX_RETRIES"] == "0"


@pytest.mark.parametrize("cli", ["claude", "gemini"])
def test_turn_limit(fake_clis, project, cli):
    fake_clis.script(cli, [{"turn_limit": True}])
    result = dispatch(cli, project, max_turns=1)
    assert (result.success, result.error_kind, result.transient) == (False, "turn_limit", False)


@pytest.mark.parametrize("cli", CLIS)
def test_garbage_output_is_a_clear_failure(fake_clis, project, cli):
    fake_clis.script(cli, [{"garbage": True}])
    result = dispatch(cli, project)
    assert (result.success, result.error_kind) == (False, "other")
    assert (
        result.error
        == f"{cli} exited 0 without a readable JSON result; its output starts with '<html><body><h1>502 Bad Gateway</h1></body></html>'."
    )


@pytest.mark.parametrize("cli", CLIS)
def test_truncated_json_is_a_clear_failure(fake_clis, project, cli):
    fake_clis.script(cli, [{"truncate": True}])
    result = dispatch(cli, project)
    assert (result.success, result.error_kind) == (False, "other")
    assert "without a readable JSON result" in result.error


@pytest.mark.parametrize("cli", CLIS)
def test_huge_output(fake_clis, project, cli):
    fake_clis.script(cli, [{"huge_mb": 12, "text": "BIG"}])
    result = dispatch(cli, project, timeout_s=60)
    assert result.success, result.error
    assert result.text.startswith("BIG\n") and len(result.text) > 12 * 1024 * 1024
    assert len(result.stderr) > 12 * 1024 * 1024


@pytest.mark.parametrize("cli", CLIS)
def test_hang_is_a_transient_timeout(fake_clis, project, cli):
    fake_clis.script(cli, [{"hang": True}])
    started = time.monotonic()
    result = dispatch(cli, project, timeout_s=1.0)
    assert time.monotonic() - started < 10
    assert (result.success, result.error_kind, result.timed_out, result.transient) == (
        False,
        "timeout",
        True,
        True,
    )
    assert "time limit of 1s" in result.error


@pytest.mark.parametrize("cli", CLIS)
def test_complete_output_before_a_hang_is_a_soft_success(fake_clis, project, cli):
    fake_clis.script(cli, [{"text": SUBMISSION, "sleep_after": 60}])
    result = dispatch(cli, project, timeout_s=1.5)
    assert result.success and result.timed_out
    assert result.text == SUBMISSION


def test_claude_stream_over_the_abort_threshold_is_stopped_mid_flight(fake_clis, project):
    fake_clis.script(
        "claude", [{"stream": {"events": 40, "input": 1000, "output": 100, "interval": 0.1}}]
    )
    started = time.monotonic()
    result = dispatch("claude", project, abort_tokens=5000)
    elapsed = time.monotonic() - started
    assert (
        "--output-format" in result.argv
        and result.argv[result.argv.index("--output-format") + 1] == "stream-json"
    )
    assert (result.success, result.error_kind, result.aborted_over_budget) == (
        False,
        "over_budget",
        True,
    )
    assert 5000 < result.usage.total < 8000
    assert elapsed < 3.5  # the whole stream would take 4 s
    assert "abort threshold of 5,000 tokens" in result.error


def test_claude_stream_under_the_threshold_succeeds(fake_clis, project):
    fake_clis.script(
        "claude",
        [{"stream": {"events": 3, "input": 100, "output": 10, "interval": 0.01}, "text": "fine"}],
    )
    result = dispatch("claude", project, abort_tokens=50_000)
    assert result.success and result.text == "fine" and not result.aborted_over_budget


@pytest.mark.parametrize("cli", ["gemini", "codex"])
def test_usage_reported_at_the_end_still_trips_the_threshold(fake_clis, project, cli):
    fake_clis.script(cli, [{"usage": {"input": 70_000, "output": 500}}])
    result = dispatch(cli, project, abort_tokens=60_000)
    assert (result.success, result.error_kind, result.aborted_over_budget) == (
        False,
        "over_budget",
        True,
    )
    assert result.usage.total == 70_500


def test_writes_inside_the_project_under_a_write_tier(fake_clis, project):
    fake_clis.script(
        "claude", [{"write": {"path": "src/x.py", "content": "X = 1\n"}, "text": SUBMISSION}]
    )
    result = dispatch("claude", project, tier="read+write")
    assert result.success and (project / "src" / "x.py").read_text() == "X = 1\n"


def test_writes_outside_the_task_scope_still_happen(fake_clis, project):
    # Scope is the engine's gate: the CLI lets the model write anywhere in the project.
    fake_clis.script(
        "codex",
        [
            {
                "write": [
                    {"path": "src/x.py", "content": "ok"},
                    {"path": "README.md", "content": "stray"},
                ]
            }
        ],
    )
    dispatch("codex", project, tier="full", files=[project / "src" / "x.py"])
    assert (project / "README.md").read_text() == "stray"


@pytest.mark.parametrize("cli", CLIS)
def test_read_only_tier_blocks_writes(fake_clis, project, cli):
    fake_clis.script(cli, [{"write": {"path": "x.txt", "content": "no"}}])
    dispatch(cli, project, tier="read-only")
    assert not (project / "x.txt").exists()
    assert fake_clis.runs(cli)[0]["writes"][0]["written"] is False


# Not codex: its workspace-write sandbox also allows /tmp, where every test folder lives.
@pytest.mark.parametrize("cli", ["claude", "gemini"])
def test_writes_outside_the_project_are_refused(fake_clis, project, tmp_path, cli):
    outside = tmp_path / "elsewhere" / "x.txt"
    fake_clis.script(cli, [{"write": {"path": str(outside), "content": "no"}}])
    dispatch(cli, project, tier="full")
    assert not outside.exists()


@pytest.mark.parametrize("cli", CLIS)
@pytest.mark.parametrize("tier", ["read-only", "read+shell", "read+write", "full"])
def test_every_tier_command_line_is_accepted(fake_clis, project, cli, tier):
    result = dispatch(cli, project, tier=tier, model="m-1", system_prompt="Rules.", max_turns=5)
    assert result.success, result.error
    call = fake_clis.runs(cli)[0]
    assert call["stdin_devnull"] is True
    assert "rejected" not in call


def test_gemini_receives_the_policy_for_its_tier(fake_clis, project):
    dispatch("gemini", project, tier="read+shell")
    (policy,) = fake_clis.runs("gemini")[0]["policies"]
    denied = policy["rules"][0]["toolName"]
    assert {"write_file", "replace", "save_memory", "web_fetch", "invoke_agent"} <= set(denied)
    assert "run_shell_command" not in denied
    assert policy["rules"][0]["decision"] == "deny"


def test_environment_isolation(fake_clis, project, monkeypatch):
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    monkeypatch.setenv("JAVA_HOME", "/opt/jdk")
    dispatch("claude", project, env_extra={"MAESTRO_TASK_ID": "3"})
    env = fake_clis.runs("claude")[0]["environ"]
    assert env["MAESTRO_SPOKE"] == "1"
    assert "CLAUDECODE" not in env and "CLAUDE_CODE_ENTRYPOINT" not in env
    assert env["JAVA_HOME"] == "/opt/jdk" and env["MAESTRO_TASK_ID"] == "3"


def test_base_env_is_the_one_passed(fake_clis, project):
    import os

    base = dict(os.environ, CLAUDECODE="1", TZ="base")
    get_spoke("codex").dispatch(
        DispatchRequest(prompt="x", cwd=project, timeout_s=30), base_env=base
    )
    env = fake_clis.runs("codex")[0]["environ"]
    assert env["TZ"] == "base" and "CLAUDECODE" not in env and env["MAESTRO_SPOKE"] == "1"


def test_a_nested_maestro_refuses_to_run_inside_a_spoke():
    refuse_if_inside_spoke({})
    with pytest.raises(MaestroError, match="inside a spoke") as caught:
        refuse_if_inside_spoke({"MAESTRO_SPOKE": "1"})
    assert caught.value.fix and "Result Submission" in caught.value.fix


def test_codex_cost_uses_the_configured_model(fake_clis, project, temp_home):
    (temp_home / ".codex").mkdir()
    (temp_home / ".codex" / "config.toml").write_text('model = "gpt-5-mini"\n')
    fake_clis.script(
        "codex",
        [
            {"usage": {"input": 1_000_000, "output": 0}},
            {"usage": {"input": 1_000_000, "output": 0}},
        ],
    )
    assert dispatch("codex", project).cost == pytest.approx(0.25)
    assert dispatch("codex", project, model="gpt-5.5").cost == pytest.approx(1.25)


def test_project_prices_override_the_table(fake_clis, project):
    (project / ".ai").mkdir()
    (project / ".ai" / "maestro.toml").write_text(
        '[prices."gemini-2.5-flash"]\ninput = 10.0\noutput = 20.0\n'
    )
    spoke = get_spoke("gemini", load_settings(project))
    fake_clis.script("gemini", [{"usage": {"input": 100_000, "output": 50_000}}])
    result = spoke.dispatch(
        DispatchRequest(prompt="x", cwd=project, model="gemini-2.5-flash", timeout_s=30)
    )
    assert result.cost == pytest.approx(1.0 + 1.0) and result.cost_estimated


def test_codex_without_the_git_check_flag_would_be_refused(fake_clis, tmp_path):
    # The fake codex refuses a folder outside git like the real one: proof the adapter's
    # --skip-git-repo-check matters.
    from maestro.process import run_process

    outcome = run_process(["codex", "exec", "--json", "hi"], cwd=tmp_path, timeout_s=30)
    assert get_spoke("codex").parse(outcome).error_kind == "untrusted_folder"
    assert dispatch("codex", tmp_path).success

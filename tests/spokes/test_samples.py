"""Every genuine host-CLI output in tests/fixtures/host-samples, parsed by its adapter.

The text-mode samples (no --output-format json / -o json / --json) are outputs Maestro
never asks for: plain text cannot prove success, so they read as "other" failures.
"""

from __future__ import annotations

import pytest

from maestro.process import ProcessOutcome
from maestro.spokes.registry import get_spoke
from tests.fakes.samples import read_sample, sample_names

REPLY = "FAKE-REPLY: hello from the fake model server."

# name: (success, error_kind, (input, output, cached), cost, cost_estimated, session prefix, text)
EXPECTED = {
    "claude_bad_flag": (False, "bad_flag", (0, 0, 0), 0.0, True, "", ""),
    "claude_bare": (True, None, (100, 7, 0), 0.000675, False, "e529c46f", REPLY),
    "claude_bypass_as_root": (False, "bad_flag", (0, 0, 0), 0.0, True, "", ""),
    "claude_bypass_is_sandbox": (True, None, (200, 8, 0), 0.0012, False, "0ae49043", REPLY),
    "claude_flags": (True, None, (100, 7, 0), 0.000405, False, "1ad510ad", REPLY),
    "claude_http400": (
        False,
        "other",
        (0, 0, 0),
        0.0,
        False,
        "a40450a3",
        "API Error: 400 fake 400",
    ),
    "claude_http401": (
        False,
        "auth",
        (0, 0, 0),
        0.0,
        False,
        "ca2e6a11",
        "Failed to authenticate. API Error: 401 fake 401",
    ),
    "claude_http429": (
        False,
        "rate_limit",
        (0, 0, 0),
        0.0,
        False,
        "90b0720e",
        "API Error: Request rejected (429) · fake 429",
    ),
    "claude_http500": (
        False,
        "server",
        (0, 0, 0),
        0.0,
        False,
        "da6817a6",
        (
            "API Error: 500 fake 500. This is a server-side issue, usually temporary — try again in a moment. "
            "If it persists, check your inference gateway (127.0.0.1:PORT)."
        ),
    ),
    "claude_json": (True, None, (100, 7, 0), 0.000675, False, "71cf165f", REPLY),
    "claude_json_default_env": (True, None, (100, 7, 0), 0.000675, False, "a31a1cc1", REPLY),
    "claude_max_turns": (False, "turn_limit", (100, 1, 0), 0.000525, False, "8f727547", ""),
    "claude_plugin_dir": (True, None, (100, 7, 0), 0.000675, False, "60d5915b", REPLY),
    "claude_skill_slash": (True, None, (100, 7, 0), 0.000675, False, "b496f60b", REPLY),
    "claude_resume_missing": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "claude_slash": (True, None, (100, 7, 0), 0.000675, False, "3d4dc2bc", REPLY),
    "claude_stdin_open_pipe": (True, None, (100, 7, 0), 0.000675, False, "aa8bba96", REPLY),
    "claude_stream": (True, None, (100, 7, 0), 0.000675, False, "f62c7341", REPLY),
    "claude_stream_http401": (
        False,
        "auth",
        (0, 0, 0),
        0.0,
        False,
        "efb196f5",
        "Failed to authenticate. API Error: 401 fake 401",
    ),
    "claude_stream_no_verbose": (False, "bad_flag", (0, 0, 0), 0.0, True, "", ""),
    "claude_stream_resume_missing": (False, "other", (0, 0, 0), 0.0, False, "0b5e3c1a", ""),
    "claude_stream_tool": (True, None, (200, 8, 0), 0.0012, False, "b15bb569", REPLY),
    "claude_text": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "claude_tool_allowed": (True, None, (200, 8, 0), 0.0012, False, "26e7f4b8", REPLY),
    "claude_tool_denied": (True, None, (200, 8, 0), 0.0012, False, "072414a5", REPLY),
    "claude_unknown_slash": (
        False,
        "other",
        (0, 0, 0),
        0.0,
        False,
        "5dc41385",
        "Unknown command: /maestro:nope",
    ),
    "codex_ask_for_approval_flag": (False, "bad_flag", (0, 0, 0), 0.0, True, "", ""),
    "codex_c_overrides_default_privacy": (
        True,
        None,
        (100, 7, 0),
        None,
        False,
        "01a20083",
        REPLY,
    ),
    "codex_c_overrides_only": (True, None, (100, 7, 0), None, False, "01a20083", REPLY),
    "codex_flags": (True, None, (100, 7, 0), None, False, "01a20083", REPLY),
    "codex_full_auto": (False, "bad_flag", (0, 0, 0), 0.0, True, "", ""),
    "codex_http400": (False, "other", (0, 0, 0), 0.0, True, "01a20083", ""),
    "codex_http401": (False, "auth", (0, 0, 0), 0.0, True, "01a20083", ""),
    "codex_http429": (False, "rate_limit", (0, 0, 0), 0.0, True, "01a20d95", ""),
    # A 500 from the provider: codex says only "We're currently experiencing high demand".
    "codex_http500": (False, "server", (0, 0, 0), 0.0, True, "01a20d95", ""),
    "codex_json": (True, None, (100, 7, 0), None, False, "01a20083", REPLY),
    "codex_json_plugins_on": (True, None, (100, 7, 0), None, False, "01a20083", REPLY),
    "codex_no_git": (False, "untrusted_folder", (0, 0, 0), 0.0, True, "", ""),
    "codex_prompts_slash": (True, None, (100, 7, 0), None, False, "01a20083", REPLY),
    "codex_skill_mention": (True, None, (100, 7, 0), None, False, "01a20083", REPLY),
    "codex_stdin_open_pipe": (False, "timeout", (0, 0, 0), 0.0, True, "", ""),
    "codex_text": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "codex_text_approve_for_me": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "codex_text_bypass": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "codex_text_workspace_write": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "codex_tool": (True, None, (200, 8, 0), None, False, "01a20083", REPLY),
    # Gemini with model "auto": the flash-lite router (100 in, 18 out) plus the main model.
    "gemini_agents_md_context": (True, None, (200, 25, 0), 0.000088, True, "dad7a178", REPLY),
    "gemini_approval_mode": (True, None, (200, 25, 0), 0.000088, True, "3a2d8bfd", REPLY),
    "gemini_bad_flag": (False, "bad_flag", (0, 0, 0), 0.0, True, "", ""),
    "gemini_cmd_shell": (False, "other", (0, 0, 0), 0.0, True, "5af7b482", ""),
    "gemini_cmd_shell_yolo": (True, None, (200, 25, 0), 0.000088, True, "b1ec31ff", REPLY),
    "gemini_extension": (True, None, (200, 25, 0), 0.000088, True, "6ee17015", REPLY),
    "gemini_flags": (True, None, (100, 7, 0), 0.000048, True, "a4242416", REPLY),
    "gemini_folder_trust_on": (False, "untrusted_folder", (0, 0, 0), 0.0, True, "", ""),
    "gemini_http400": (False, "other", (0, 0, 0), 0.0, True, "b4419ab0", ""),
    "gemini_http401": (False, "auth", (0, 0, 0), 0.0, True, "b966a535", ""),
    "gemini_json": (True, None, (200, 25, 0), 0.000088, True, "16e8d1e5", REPLY),
    "gemini_json_default_settings": (True, None, (200, 25, 0), 0.000088, True, "c5d0f04a", REPLY),
    "gemini_max_turns": (False, "turn_limit", (0, 0, 0), 0.0, True, "6493b68d", ""),
    "gemini_no_trust_env": (False, "untrusted_folder", (0, 0, 0), 0.0, True, "", ""),
    "gemini_project_agent_acked": (True, None, (200, 25, 0), 0.000088, True, "a005a7fe", REPLY),
    # Stopped after 4 s while gemini was still retrying a 429 / 500 on its own.
    "gemini_retry429": (False, "timeout", (0, 0, 0), 0.0, True, "", ""),
    "gemini_retry500": (False, "timeout", (0, 0, 0), 0.0, True, "", ""),
    "gemini_slash": (True, None, (200, 25, 0), 0.000088, True, "91c451b1", REPLY),
    "gemini_stdin_open_pipe": (True, None, (200, 25, 0), 0.000088, True, "30360857", REPLY),
    "gemini_stream": (True, None, (200, 25, 0), 0.000088, True, "e4fb48db", REPLY),
    "gemini_stream_http401": (False, "auth", (0, 0, 0), 0.0, True, "ad8baafb", ""),
    "gemini_stream_tool_yolo": (True, None, (300, 26, 0), 0.000141, True, "48c5c82c", REPLY),
    "gemini_text": (False, "other", (0, 0, 0), 0.0, True, "", ""),
    "gemini_tool_default": (True, None, (300, 26, 0), 0.000141, True, "d7f5acbc", REPLY),
    "gemini_tool_yolo": (True, None, (300, 26, 0), 0.000141, True, "b8b94256", REPLY),
    "gemini_unknown_slash": (True, None, (200, 25, 0), 0.000088, True, "e69862a1", REPLY),
}


def parse(name: str):
    sample = read_sample(name)
    outcome = ProcessOutcome(sample.stdout, sample.stderr, sample.exit_code, sample.timed_out, 1.5)
    return sample, get_spoke(sample.cli).parse(outcome)


def test_every_sample_has_an_expectation():
    assert sorted(EXPECTED) == sample_names()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses(name):
    success, kind, tokens, cost, estimated, session, text = EXPECTED[name]
    sample, result = parse(name)
    assert result.tool == sample.cli
    assert result.success is success
    assert result.error_kind == kind
    assert (result.usage.input, result.usage.output, result.usage.cached) == tokens
    assert result.cost == (None if cost is None else pytest.approx(cost, abs=1e-9))
    assert result.cost_estimated is estimated
    assert (result.session_id or "").startswith(session) and bool(result.session_id) == bool(
        session
    )
    assert result.text == text
    assert result.exit_code == sample.exit_code
    assert result.duration_s == 1.5  # the runner's measure, not the CLI's duration_ms
    if success:
        assert result.error is None
    else:
        # One clear line naming the CLI, never a traceback.
        assert result.error and "\n" not in result.error and result.error.startswith(sample.cli)
        assert "Traceback" not in result.error


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("claude_bad_flag", "argument 'yaml' is invalid"),
        ("claude_stream_no_verbose", "requires --verbose"),
        ("claude_bypass_as_root", "root"),
        ("claude_http400", "HTTP 400"),
        ("claude_max_turns", "Reached maximum number of turns (1)"),
        ("claude_unknown_slash", "ran no turn"),
        ("codex_full_auto", "unexpected argument '--full-auto'"),
        ("codex_ask_for_approval_flag", "unexpected argument '-a'"),
        ("codex_http400", "fake 400"),
        ("codex_http401", "unexpected status 401"),
        ("codex_http500", "We’re currently experiencing high demand"),
        ("claude_http429", "HTTP 429"),
        ("claude_http500", "HTTP 500"),
        ("gemini_bad_flag", 'Argument: output-format, Given: "yaml"'),
        ("gemini_http401", "HTTP 401): fake 401"),
        ("gemini_stream_http401", "HTTP 401): fake 401"),
        ("gemini_max_turns", "Reached max session turns"),
        ("gemini_cmd_shell", "Blocked by policy"),
        ("codex_text", "without a readable JSON result"),
    ],
)
def test_failure_messages_name_the_cause(name, words):
    _, result = parse(name)
    assert words in result.error


def test_a_claude_answer_with_a_denied_tool_call_is_read():
    assert parse("claude_tool_denied")[1].success
    assert parse("claude_tool_allowed")[1].success


def test_models_reported_by_the_cli():
    assert parse("claude_json")[1].model == "claude-opus-4-8[1m]"
    assert parse("gemini_json")[1].model == "gemini-3.5-flash-lite,gemini-3.8-flash"
    assert parse("gemini_flags")[1].model == "gemini-2.5-flash"


def test_timed_out_sample_is_transient_and_auth_is_not():
    assert parse("codex_stdin_open_pipe")[1].transient
    assert not parse("claude_http401")[1].transient
    assert not parse("claude_json")[1].transient


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("gemini_retry429", "rate_limit", "gemini failed (HTTP 429): fake 429"),
        ("gemini_retry500", "server", "gemini failed (HTTP 500): fake 500"),
    ],
)
def test_gemini_stopped_at_its_first_retry_reports_the_failed_call(name, kind, words):
    sample = read_sample(name)
    outcome = ProcessOutcome(sample.stdout, sample.stderr, -15, False, 1.5, stopped_on_stderr=True)
    result = get_spoke("gemini").parse(outcome)
    assert (result.error_kind, result.transient, result.timed_out) == (kind, True, False)
    assert result.error.startswith(words) and "Maestro's retry ladder decides" in result.error


def test_the_codex_500_wording_is_a_server_error_the_ladder_retries():
    from maestro.engine import ladder

    _, result = parse("codex_http500")
    failure = ladder.spoke_failure(result, "codex")
    assert failure.kind == ladder.TRANSIENT
    step = ladder.next_step(failure, attempts=1, max_retries=2, transient_retries=0, backoff_s=1.0)
    assert step.action == "retry" and ladder.NEEDS_DECOMPOSITION not in step.reason

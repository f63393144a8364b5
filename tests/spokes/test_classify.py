"""Error kinds from outputs the samples do not cover: exit codes, wordings, streams."""

from __future__ import annotations

import json

import pytest

from maestro.process import ProcessOutcome
from maestro.sandbox import Rules
from maestro.spokes.contract import DispatchRequest
from maestro.spokes.registry import get_spoke


def parse(
    cli: str,
    stdout: str = "",
    stderr: str = "",
    code: int | None = 1,
    timed_out: bool = False,
    aborted: bool = False,
):
    return get_spoke(cli).parse(ProcessOutcome(stdout, stderr, code, timed_out, 0.5, aborted))


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (41, "auth"),
        (42, "other"),
        (44, "other"),
        (52, "other"),
        (53, "turn_limit"),
        (54, "other"),
        (55, "untrusted_folder"),
        (130, "other"),
        (145, "auth"),
        (147, "auth"),
        (173, "rate_limit"),
        (244, "server"),
        (247, "server"),
        (144, "other"),
        (7, "other"),
    ],
)
def test_gemini_exit_codes(code, kind):
    result = parse(
        "gemini", stderr="Warning: Basic terminal detected\nsomething went wrong\n", code=code
    )
    assert (result.success, result.error_kind) == (False, kind)
    assert result.error.startswith("gemini ")


def test_gemini_error_code_wins_over_the_exit_code():
    stderr = 'trace\n{\n  "session_id": "s",\n  "error": {"type": "Error", "message": "quota exceeded", "code": 429}\n}\n'
    result = parse("gemini", stderr=stderr, code=1)
    assert (result.error_kind, result.session_id) == ("rate_limit", "s")
    assert result.error == "gemini failed (HTTP 429): quota exceeded"


def test_gemini_stream_error_result():
    events = [
        {"type": "init", "session_id": "abc", "model": "auto"},
        {
            "type": "result",
            "status": "error",
            "error": {
                "type": "unknown",
                "message": '[API Error: {"error":{"code":503,"message":"overloaded"}}]',
            },
            "stats": {},
        },
    ]
    result = parse("gemini", stdout="\n".join(json.dumps(e) for e in events) + "\n", code=247)
    assert (result.error_kind, result.session_id, result.transient) == ("server", "abc", True)
    assert result.error == "gemini failed (HTTP 503): overloaded"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("unexpected status 403 Forbidden: no access", "auth"),
        ("exceeded retry limit, last status: 429 Too Many Requests", "rate_limit"),
        ("unexpected status 502 Bad Gateway", "server"),
        ("stream disconnected before completion: error sending request", "network"),
        ("You've hit your usage limit. Try again later.", "rate_limit"),
        ("model refused the request", "other"),
    ],
)
def test_codex_turn_failures(message, kind):
    events = [
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.started"},
        {"type": "error", "message": message},
        {"type": "turn.failed", "error": {"message": message}},
    ]
    result = parse("codex", stdout="\n".join(json.dumps(e) for e in events), code=1)
    assert (result.success, result.error_kind, result.session_id) == (False, kind, "t1")


def test_codex_turn_without_a_final_message():
    events = [
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}},
    ]
    result = parse("codex", stdout="\n".join(json.dumps(e) for e in events), code=0)
    assert (result.success, result.error_kind) == (False, "other")
    assert result.error == "codex finished its turn without a final message."
    assert (result.usage.input, result.usage.output) == (10, 2)


def test_codex_reconnect_errors_before_a_completed_turn_are_not_failures():
    events = [
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2},
        },
    ]
    result = parse("codex", stdout="\n".join(json.dumps(e) for e in events), code=0)
    assert result.success and result.text == "done"
    assert (result.usage.input, result.usage.cached) == (6, 4)


def claude_result(**fields):
    base = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "num_turns": 1,
        "result": "",
        "session_id": "s",
        "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    return json.dumps({**base, **fields})


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"api_error_status": 429, "result": "API Error: 429 rate limited"}, "rate_limit"),
        ({"api_error_status": 529, "result": "API Error: 529 overloaded"}, "server"),
        ({"api_error_status": 403, "result": "API Error: 403"}, "auth"),
        ({"api_error_status": None, "result": "API Error: Connection error."}, "network"),
        ({"api_error_status": None, "result": "Invalid API key · Please run /login"}, "auth"),
        ({"subtype": "error_during_execution", "result": "it broke"}, "other"),
    ],
)
def test_claude_error_results(fields, kind):
    assert parse("claude", stdout=claude_result(**fields)).error_kind == kind


def test_claude_cache_tokens():
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 50000,
        "output_tokens": 300,
    }
    result = parse(
        "claude",
        stdout=claude_result(is_error=False, result="ok", usage=usage, total_cost_usd=0.12),
        code=0,
    )
    assert (result.usage.input, result.usage.output, result.usage.cached) == (2010, 300, 50000)
    assert (result.cost, result.cost_estimated) == (0.12, False)


def test_claude_without_a_cost_field_is_estimated_from_its_model():
    text = claude_result(
        is_error=False, result="ok", usage={"input_tokens": 1_000_000, "output_tokens": 0}
    )
    stdout = text.replace('"total_cost_usd": 0, ', "")
    result = parse("claude", stdout=stdout, code=0)
    # No model named, no cost reported: the dollars are unknown, and said to be.
    assert (result.cost, result.cost_estimated) == (None, False)
    assert result.unpriced == "claude's default model (it named none)"
    named = stdout.replace('"usage"', '"modelUsage": {"claude-sonnet-4-5": {}}, "usage"', 1)
    result = parse("claude", stdout=named, code=0)
    assert (result.cost, result.cost_estimated) == (3.0, True)  # Sonnet's input price


@pytest.mark.parametrize("cli", ["claude", "gemini", "codex"])
@pytest.mark.parametrize("stdout", ["", "not json at all", '{"type": "resu', "[1, 2, 3]", "{}\n{}"])
def test_never_an_exception_on_odd_output(cli, stdout):
    result = parse(cli, stdout=stdout, stderr="", code=1)
    assert (result.success, result.error_kind) == (False, "other")


def test_partial_output_at_the_timeout_is_a_timeout():
    result = parse(
        "claude", stdout='{"type":"system","subtype":"init"}\n', code=-15, timed_out=True
    )
    assert (result.error_kind, result.transient, result.timed_out) == ("timeout", True, True)


def test_aborted_is_over_budget_whatever_the_output():
    result = parse("codex", stdout='{"type":"turn.started"}\n', code=-15, aborted=True)
    assert (result.success, result.error_kind, result.aborted_over_budget, result.transient) == (
        False,
        "over_budget",
        True,
        False,
    )


@pytest.mark.parametrize("is_error", [None, "no"])
def test_claude_json_without_is_error_is_a_parse_failure(is_error):
    fields = json.loads(claude_result(result="ok", api_error_status=500))
    if is_error is None:
        del fields["is_error"]
    else:
        fields["is_error"] = is_error
    result = parse("claude", stdout=json.dumps(fields), code=0)
    assert (result.success, result.error_kind, result.transient) == (False, "other", False)
    assert result.error.startswith("claude's JSON result could not be read: ")
    assert ("no is_error field" if is_error is None else "is_error='no'") in result.error
    assert "maestro doctor" in result.error and "HTTP" not in result.error


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("We’re currently experiencing high demand, which may cause temporary errors.", "server"),
        ("We're currently experiencing high demand, which may cause temporary errors.", "server"),
        ("Selected model is at capacity. Please try a different model.", "server"),
        ("Policy-restricted capacity is unavailable. Please try again later.", "server"),
        ("Quota exceeded. Check your plan and billing details.", "rate_limit"),
    ],
)
def test_codex_fixed_wordings_without_a_status(message, kind):
    test_codex_turn_failures(message, kind)


def test_claude_status_in_its_wording_when_the_field_is_missing():
    assert (
        parse(
            "claude", stdout=claude_result(result="API Error: Request rejected (429) · slow down")
        ).error_kind
        == "rate_limit"
    )


@pytest.mark.parametrize(
    ("line", "kind", "words"),
    [
        (
            'Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}',
            "rate_limit",
            "gemini failed (HTTP 429): quota",
        ),
        (
            "Attempt 1 failed: Resource has been exhausted (e.g. check quota).",
            "rate_limit",
            "gemini failed (rate limit): Resource has been exhausted (e.g. check quota).",
        ),
        (
            "Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request",
            "network",
            "gemini failed (network): Error: exception TypeError: fetch failed sending request",
        ),
    ],
)
def test_gemini_retry_notices(line, kind, words):
    spoke = get_spoke("gemini")
    assert spoke.retry_notice(line) and not spoke.retry_notice("Attempt to read the file failed")
    outcome = ProcessOutcome(
        "",
        f"Warning: Basic terminal detected\n{line}\n    at x (y.js:1:2)\n",
        -15,
        False,
        1.0,
        stopped_on_stderr=True,
    )
    result = spoke.parse(outcome)
    assert (result.error_kind, result.transient) == (kind, True)
    assert result.error.startswith(words)


CONFINED = DispatchRequest(prompt="p", sandbox=Rules("/usr/bin/bwrap"))
UNSTARTED = "bwrap: Can't find source path /home/me/network-share/work: No such file or directory\n"


@pytest.mark.parametrize("cli", ["claude", "gemini", "codex"])
def test_a_sandbox_that_could_not_start_is_no_network_failure(cli):
    """bwrap's own line, whatever words its path holds: no network retry, no sign-in."""
    result = get_spoke(cli).parse(ProcessOutcome("", UNSTARTED, 1, False, 0.1), CONFINED)
    assert result.error_kind == "sandbox"
    assert result.error.startswith(f"the sandbox could not start the {cli} spoke: bwrap: Can't")
    assert "; fix: " in result.error
    # Unconfined, a "bwrap:" line is the CLI's own (its sandbox), not Maestro's.
    assert (
        get_spoke(cli).parse(ProcessOutcome("", UNSTARTED, 1, False, 0.1)).error_kind != "sandbox"
    )


@pytest.mark.parametrize(
    "stderr",
    [
        "OSError: [Errno 30] Read-only file system: '/home/me/.newcli/log'\n",
        "mkdir: cannot create directory \u2018/home/me/.newcli/log\u2019: Read-only file system\n",
        (
            "Error: EROFS: read-only file system, open '/home/me/.newcli/log'\n"
            "    at open (node:fs:1)\n{ errno: -30, code: 'EROFS' }\n\nNode.js v22.12.0\n"
        ),
    ],
)
def test_a_path_the_sandbox_kept_read_only_is_named_with_the_setting(stderr):
    result = get_spoke("claude").parse(ProcessOutcome("", stderr, 1, False, 0.1), CONFINED)
    assert result.error_kind == "sandbox"
    assert result.error.startswith("the sandbox kept /home/me/.newcli/log read-only")
    assert "MAESTRO_SANDBOX_WRITE" in result.error


def test_a_sandbox_killed_from_outside_is_no_timeout_and_a_timeout_stays_one():
    killed = get_spoke("codex").parse(ProcessOutcome("", "", -9, False, 1.0), CONFINED)
    assert (killed.error_kind, killed.error.split(";")[0]) == (
        "sandbox",
        "the sandbox of the codex spoke was killed (SIGKILL) before it answered",
    )
    stopped = ProcessOutcome("", "", -9, True, 1.0)  # the runner's SIGKILL at the deadline
    assert get_spoke("codex").parse(stopped, CONFINED).error_kind == "timeout"


def test_a_retry_notice_printed_as_the_time_limit_stops_it_is_a_timeout():
    """Stopped at its time limit, Gemini CLI's cut request prints a retry notice, which the
    runner also stops on: the limit is why, not the network."""
    line = "Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request"
    outcome = ProcessOutcome("", f"{line}\n", -15, True, 6.0, stopped_on_stderr=True)
    result = get_spoke("gemini").parse(outcome)
    assert (result.error_kind, result.timed_out) == ("timeout", True), result.error


def test_an_error_reported_as_the_time_limit_stops_it_is_a_timeout():
    """Claude Code stopped at its time limit reports its cut-off request as an error result
    ("Connection dropped"): the limit is why it failed."""
    line = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "API Error: Connection dropped (ECONNRESET).",
        "session_id": "s1",
    }
    outcome = ProcessOutcome(json.dumps(line) + "\n", "", 143, True, 6.0)
    result = get_spoke("claude").parse(outcome)
    assert (result.error_kind, result.timed_out) == ("timeout", True), result.error

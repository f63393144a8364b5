"""The exact command line each adapter builds, per tool tier, and what each CLI enforces."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from maestro.clis.geminifiles import policy_toml
from maestro.errors import SpokeError
from maestro.spokes.contract import DispatchRequest
from maestro.spokes.registry import get_spoke

CWD = Path("/work/proj")
SCRATCH = Path("/work/proj/.ai/maestro/runs/r1/scratch")


def req(tier: str, **kw) -> DispatchRequest:
    return DispatchRequest(prompt="Do the task.", tier=tier, cwd=CWD, scratch_dir=SCRATCH, **kw)


CLAUDE = ["claude", "-p", "Do the task.", "--output-format", "json", "--no-session-persistence"]


@pytest.mark.parametrize(
    ("tier", "tail"),
    [
        (
            "read-only",
            [
                "--tools",
                "Read,Grep,Glob",
                "--allowedTools",
                "Read,Grep,Glob",
                "--disallowedTools",
                "Bash,Edit,Write,NotebookEdit",
            ],
        ),
        (
            "read+shell",
            [
                "--tools",
                "Read,Grep,Glob,Bash",
                "--allowedTools",
                "Read,Grep,Glob,Bash",
                "--disallowedTools",
                "Edit,Write,NotebookEdit",
            ],
        ),
        (
            "read+write",
            [
                "--tools",
                "Read,Grep,Glob,Edit,Write,NotebookEdit",
                "--allowedTools",
                "Read,Grep,Glob,Edit,Write,NotebookEdit",
                "--disallowedTools",
                "Bash",
                "--permission-mode",
                "acceptEdits",
            ],
        ),
        (
            "full",
            [
                "--tools",
                "Read,Grep,Glob,Edit,Write,NotebookEdit,Bash",
                "--allowedTools",
                "Read,Grep,Glob,Edit,Write,NotebookEdit,Bash",
                "--permission-mode",
                "acceptEdits",
            ],
        ),
    ],
)
def test_claude_argv_per_tier(tier, tail):
    # --tools is what the model is offered (verified with Claude Code 2.1.197: without it a
    # read-only spoke also had Agent, WebFetch, WebSearch, Skill, SendMessage, Cron*, Task*).
    assert get_spoke("claude").build_argv(req(tier)) == CLAUDE + tail


def test_claude_offers_web_search_only_when_the_agent_has_it():
    argv = get_spoke("claude").build_argv(req("read-only", web_search=True))
    assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob,WebSearch"
    assert "WebSearch" not in get_spoke("claude").build_argv(req("read-only"))[7]


def test_claude_spoke_never_retries_on_its_own(tmp_path):
    env = get_spoke("claude").spoke_env(
        req("full"), {"PATH": "/bin", "CLAUDE_CODE_MAX_RETRIES": "10"}
    )
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert "CLAUDE_CODE_MAX_RETRIES" not in get_spoke("gemini").spoke_env(
        req("full"), {"PATH": "/bin"}
    )


GEMINI = ["gemini", "-p", "Do the task.", "-o", "json", "--skip-trust"]


@pytest.mark.parametrize(
    ("tier", "tail"),
    [
        ("read-only", ["--policy", str(SCRATCH / "gemini-policy-read-only.toml")]),
        (
            "read+shell",
            ["--approval-mode", "yolo", "--policy", str(SCRATCH / "gemini-policy-read-shell.toml")],
        ),
        (
            "read+write",
            [
                "--approval-mode",
                "auto_edit",
                "--policy",
                str(SCRATCH / "gemini-policy-read-write.toml"),
            ],
        ),
        ("full", ["--approval-mode", "yolo", "--policy", str(SCRATCH / "gemini-policy-full.toml")]),
    ],
)
def test_gemini_argv_per_tier(tier, tail):
    assert get_spoke("gemini").build_argv(req(tier)) == GEMINI + tail


# What Gemini CLI 0.61 offered the model under each policy (read from its request to a
# loopback model): exactly the tier's tools.
OFFERED = {
    "read-only": {"glob", "grep_search", "list_directory", "read_file"},
    "read+shell": {
        "glob",
        "grep_search",
        "list_directory",
        "read_file",
        "run_shell_command",
        "list_background_processes",
        "read_background_output",
    },
    "read+write": {"glob", "grep_search", "list_directory", "read_file", "write_file", "replace"},
    "full": {
        "glob",
        "grep_search",
        "list_directory",
        "read_file",
        "write_file",
        "replace",
        "run_shell_command",
        "list_background_processes",
        "read_background_output",
    },
}
# ... and what it offered before the policy named them: invoke_agent, web tools and more.
OFFERED_BEFORE = {
    "enter_plan_mode",
    "google_web_search",
    "invoke_agent",
    "update_topic",
    "web_fetch",
    "activate_skill",
    "write_todos",
    "save_memory",
}


@pytest.mark.parametrize("tier", sorted(OFFERED))
def test_gemini_policy_denies_every_tool_outside_the_tier(tier):
    (rule,) = tomllib.loads(policy_toml(tier))["rule"]
    assert (rule["decision"], rule["priority"]) == ("deny", 999)
    assert (
        rule["denyMessage"]
        == f"Maestro dispatched this task with tool tier {tier}: this tool is not allowed."
    )
    denied = set(rule["toolName"])
    assert not denied & OFFERED[tier]
    assert OFFERED_BEFORE <= denied
    assert {"run_shell_command", "write_file"} - OFFERED[tier] <= denied


def test_gemini_web_search_only_for_agents_that_have_it():
    assert "google_web_search" in tomllib.loads(policy_toml("read-only"))["rule"][0]["toolName"]
    granted = tomllib.loads(policy_toml("read-only", web_search=True))["rule"][0]["toolName"]
    assert "google_web_search" not in granted and "web_fetch" in granted


def test_gemini_prepare_writes_the_policy_file_named_in_argv(tmp_path):
    spoke = get_spoke("gemini")
    request = DispatchRequest(
        prompt="x", tier="read+write", cwd=tmp_path, scratch_dir=tmp_path / "scratch"
    )
    spoke.prepare(request)
    path = Path(spoke.build_argv(request)[-1])
    assert path.parent == tmp_path / "scratch"
    denied = tomllib.loads(path.read_text())["rule"][0]["toolName"]
    assert "run_shell_command" in denied and "write_file" not in denied


CODEX_HEAD = ["codex", "exec", "--json", "--skip-git-repo-check", "--sandbox"]


@pytest.mark.parametrize(
    ("tier", "sandbox"),
    [
        ("read-only", "read-only"),
        ("read+shell", "read-only"),
        ("read+write", "workspace-write"),
        ("full", "workspace-write"),
    ],
)
def test_codex_argv_per_tier(tier, sandbox):
    argv = get_spoke("codex").build_argv(req(tier))
    assert argv == CODEX_HEAD + [
        sandbox,
        "-c",
        'web_search="disabled"',
        "-c",
        "allow_login_shell=false",
        "-C",
        str(CWD),
        "--ephemeral",
        "Do the task.",
    ]
    assert "--full-auto" not in argv and "-a" not in argv


def test_codex_keeps_web_search_only_for_agents_that_have_it():
    assert 'web_search="disabled"' not in get_spoke("codex").build_argv(
        req("read-only", web_search=True)
    )


@pytest.mark.parametrize(
    ("cli", "expected"),
    [
        ("claude", {"read-only": True, "read+shell": False, "read+write": True, "full": True}),
        ("gemini", {"read-only": True, "read+shell": False, "read+write": True, "full": True}),
        ("codex", {"read-only": True, "read+shell": True, "read+write": False, "full": True}),
        ("sim", {"read-only": True, "read+shell": True, "read+write": True, "full": True}),
    ],
)
def test_enforces(cli, expected):
    spoke = get_spoke(cli)
    assert {tier: spoke.enforces(tier) for tier in expected} == expected


def test_claude_options():
    argv = get_spoke("claude").build_argv(
        req(
            "read-only",
            model="sonnet",
            max_turns=7,
            system_prompt="Be brief.",
            resume_session="abc-123",
            abort_tokens=5000,
        )
    )
    assert argv[:6] == [
        "claude",
        "-p",
        "Do the task.",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    assert argv[6:14] == [
        "--model",
        "sonnet",
        "--max-turns",
        "7",
        "--append-system-prompt",
        "Be brief.",
        "--resume",
        "abc-123",
    ]
    assert "--no-session-persistence" not in argv
    assert "bypassPermissions" not in argv and "--dangerously-skip-permissions" not in argv


def test_a_dispatch_whose_lines_are_kept_streams_without_a_token_limit():
    """A reviewer or challenger (no abort_tokens) streams when its lines are kept; else
    it answers in one JSON document."""
    for cli, flag in (("claude", "--output-format"), ("gemini", "-o")):
        plain, kept = (
            get_spoke(cli).build_argv(req("read-only", stream=on)) for on in (False, True)
        )
        assert plain[plain.index(flag) + 1] == "json"
        assert kept[kept.index(flag) + 1] == "stream-json"
    assert "--verbose" in get_spoke("claude").build_argv(req("read-only", stream=True))


def test_claude_keeps_a_session_only_when_asked():
    assert "--no-session-persistence" in get_spoke("claude").build_argv(req("full"))
    kept = get_spoke("claude").build_argv(req("full", keep_session=True))
    assert "--no-session-persistence" not in kept and "--resume" not in kept


def test_gemini_and_codex_carry_the_system_prompt_in_the_prompt():
    gem = get_spoke("gemini").build_argv(
        req("full", system_prompt="SYSTEM RULES", model="gemini-2.5-pro", abort_tokens=10)
    )
    assert gem[:7] == [
        "gemini",
        "-p",
        "SYSTEM RULES\n\nDo the task.",
        "-o",
        "stream-json",
        "--skip-trust",
        "-m",
    ]
    cod = get_spoke("codex").build_argv(req("full", system_prompt="SYSTEM RULES", model="gpt-5.5"))
    assert cod[5:12] == [
        "workspace-write",
        "-c",
        'web_search="disabled"',
        "-c",
        "allow_login_shell=false",
        "-m",
        "gpt-5.5",
    ]
    assert cod[-1] == "SYSTEM RULES\n\nDo the task."


def test_a_prompt_starting_with_a_dash_stays_a_value():
    for cli in ("claude", "gemini", "codex"):
        argv = get_spoke(cli).build_argv(
            DispatchRequest(prompt="--help me", cwd=CWD, scratch_dir=SCRATCH)
        )
        assert "\n--help me" in argv and "--help me" not in argv


@pytest.mark.parametrize("cli", ["gemini", "codex"])
def test_resume_needs_a_spoke_that_supports_it(cli):
    spoke = get_spoke(cli)
    assert not spoke.supports_resume
    with pytest.raises(SpokeError, match="cannot resume"):
        spoke.build_argv(req("full", resume_session="abc"))
    assert get_spoke("claude").supports_resume


def test_unknown_tier_is_refused():
    with pytest.raises(SpokeError, match="unknown tool tier 'root'"):
        DispatchRequest(prompt="x", tier="root")


STATE = Path("/work/proj/.ai/maestro")


@pytest.mark.parametrize("tier", ["read-only", "read+shell", "read+write", "full"])
def test_the_office_state_is_made_writable_where_the_sandbox_allows(tier):
    """Codex's workspace-write sandbox writes the workdir and /tmp only: the mailbox needs
    --add-dir (codex 0.169 `exec --help`); read-only writes nowhere, so such a spoke is not
    offered the office at all. Gemini adds the folder to its workspace."""
    codex = get_spoke("codex")
    argv = codex.build_argv(req(tier, shared_dirs=[STATE]))
    writable = tier in ("read+write", "full")
    assert codex.reaches_office(tier) == writable
    assert (
        (argv[argv.index("--add-dir") + 1] == str(STATE)) if writable else "--add-dir" not in argv
    )
    assert argv.index("-C") > (argv.index("--add-dir") if writable else 0)
    gemini = get_spoke("gemini").build_argv(req(tier, shared_dirs=[STATE]))
    assert gemini[gemini.index("--include-directories") + 1] == str(STATE)
    assert get_spoke("gemini").reaches_office(tier) and get_spoke("claude").reaches_office(tier)
    assert "--add-dir" not in codex.build_argv(
        req(tier)
    ) and "--include-directories" not in get_spoke("gemini").build_argv(req(tier))

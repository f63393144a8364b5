"""Every file each host gets, as a snapshot (tests/install/__snapshots__/test_render/),
plus the properties every rendering must have."""

import shlex
import tomllib

import pytest
import yaml

from maestro.install import block
from maestro.install.host import RenderOptions, hosts
from maestro.install.sources import VERBS, load_agent, load_commands

from .helpers import FIXED_INVOCATION

OPTS = RenderOptions(invocation=shlex.join([FIXED_INVOCATION]), version="0.1.0")
# The host bundles (maestro/install/bundle.py) are committed files: tests/install/test_bundle.py.
CASES = [
    (host, scope, f.path)
    for host in hosts()
    for scope in ("project", "user")
    for f in hosts()[host].files(scope, OPTS)
]


def rendered(host, scope, path):
    return next(f.content for f in hosts()[host].files(scope, OPTS) if f.path == path)


@pytest.mark.parametrize(
    "host, scope, path", CASES, ids=["-".join(c).replace("/", "__") for c in CASES]
)
def test_rendered_file(text_snapshot, host, scope, path):
    assert rendered(host, scope, path) == text_snapshot


@pytest.mark.parametrize("host", list(hosts()))
def test_stub_block(text_snapshot, host):
    assert block.render(host, hosts()[host].stub(OPTS)) + "\n" == text_snapshot


def test_file_layout_per_host():
    claude = [f.path for f in hosts()["claude"].files("project", OPTS)]
    gemini = [f.path for f in hosts()["gemini"].files("user", OPTS)]
    codex = [f.path for f in hosts()["codex"].files("project", OPTS)]
    assert claude == [f".claude/commands/maestro/{v}.md" for v in VERBS]
    assert gemini == [
        *(f"commands/maestro/{v}.toml" for v in VERBS),
        "agents/maestro-recon.md",
        "policies/maestro.toml",
    ]
    assert codex == [
        ".agents/skills/maestro/SKILL.md",
        *[f".agents/skills/maestro/verbs/{v}.md" for v in VERBS],
        ".codex/agents/maestro-recon.toml",
    ]


# Gemini CLI 0.61 rejects an agent with any other key (its schema is strict).
GEMINI_AGENT_KEYS = {"kind", "name", "description", "display_name", "tools", "mcp_servers"}
GEMINI_AGENT_KEYS |= {"model", "temperature", "max_turns", "timeout_mins"}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_gemini_recon_agent_can_only_read(scope):
    path = (".gemini/" if scope == "project" else "") + "agents/maestro-recon.md"
    head, body = rendered("gemini", scope, path).removeprefix("---\n").split("\n---\n", 1)
    meta = yaml.safe_load(head)
    assert set(meta) <= GEMINI_AGENT_KEYS
    assert meta["name"] == "maestro-recon" and meta["kind"] == "local"
    assert set(meta["tools"]) == {"read_file", "list_directory", "glob", "grep_search"}
    assert isinstance(meta["timeout_mins"], int) and meta["max_turns"] > 0
    assert "## Relevant files" in body and "## Risks" in body


@pytest.mark.parametrize("scope", ["project", "user"])
def test_codex_recon_role(scope):
    path = (".codex/" if scope == "project" else "") + "agents/maestro-recon.toml"
    role = tomllib.loads(rendered("codex", scope, path))
    assert role["name"] == "maestro-recon" and role["description"]
    assert role["sandbox_mode"] == "read-only" and role["model_reasoning_effort"] == "low"
    assert role["developer_instructions"] == load_agent("maestro-recon").body


def test_claude_installs_no_agent_of_its_own():
    for scope in ("project", "user"):
        assert not any("agents/" in f.path for f in hosts()["claude"].files(scope, OPTS))
    assert not any("agents/" in f.path for f in hosts()["claude"].bundle(OPTS))


@pytest.mark.parametrize("verb", VERBS)
def test_claude_command_frontmatter(verb):
    text = rendered("claude", "project", f".claude/commands/maestro/{verb}.md")
    head, body = text.removeprefix("---\n").split("\n---\n", 1)
    meta = yaml.safe_load(head)
    assert meta["description"] and meta["disable-model-invocation"] is True
    # The path the file names and a bare `maestro`, as a model may type it (both verified
    # headless with Claude Code 2.1.197: tests/realcli/test_hubs.py).
    assert meta["allowed-tools"] == f"Bash({shlex.join([FIXED_INVOCATION])}:*), Bash(maestro:*)"
    assert "{{args}}" not in body and "$HUB" not in body
    if verb != "status":
        assert "$ARGUMENTS" in body and meta["argument-hint"]


def test_gemini_user_policy_allows_maestros_own_commands_only():
    data = tomllib.loads(rendered("gemini", "user", "policies/maestro.toml"))
    assert data == {
        "rule": [
            {
                "toolName": "run_shell_command",
                "commandPrefix": [shlex.join([FIXED_INVOCATION]), "maestro"],
                "decision": "allow",
                "priority": 500,
            }
        ]
    }


@pytest.mark.parametrize("verb", VERBS)
def test_gemini_command_is_toml_with_args_and_no_shell_injection(verb):
    data = tomllib.loads(rendered("gemini", "project", f".gemini/commands/maestro/{verb}.toml"))
    assert set(data) == {"description", "prompt"}
    assert (
        "!{" not in data["prompt"]
        and "@{" not in data["prompt"]
        and "$ARGUMENTS" not in data["prompt"]
    )
    assert ("{{args}}" in data["prompt"]) == (verb != "status")


def test_gemini_prompt_survives_toml_exactly():
    host = hosts()["gemini"]
    for source in load_commands():
        data = tomllib.loads(host.command_file(source, OPTS))
        assert data["prompt"] == host.body(source, OPTS)


def test_codex_router_and_verbs():
    router = rendered("codex", "user", "skills/maestro/SKILL.md")
    meta = yaml.safe_load(router.split("---\n")[1])
    assert meta["name"] == "maestro" and "$maestro" in meta["description"]
    for verb in VERBS:
        body = rendered("codex", "user", f"skills/maestro/verbs/{verb}.md")
        assert "/maestro:" not in body and "$ARGUMENTS" not in body


def test_every_maestro_call_is_pinned():
    for host, scope, path in CASES:
        content = rendered(host, scope, path)
        for line in content.splitlines():
            for word in (
                "maestro plan",
                "maestro run",
                "maestro wait",
                "maestro status",
                "maestro skill",
            ):
                at = line.find(word)
                while at != -1:
                    assert line[at - 1] in "$/" or line[:at].endswith(FIXED_INVOCATION), (
                        path,
                        line,
                    )
                    at = line.find(word, at + 1)


def test_plan_passes_the_hub_of_each_host():
    for host in hosts():
        expanded = hosts()[host].expanded("plan", OPTS)
        assert f"--hub {host} --dry-run" in expanded and f"--hub {host} --yes" in expanded

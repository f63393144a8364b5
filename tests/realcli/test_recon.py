"""Each host's hub recons through its own subagent during `/maestro:plan` (Codex:
`$maestro plan`), with no prompt and no denial, the subagent offered read tools only
where the host can limit them, and the plan validates (docs/hosts.md, "The recon
subagent").

The pinned CLIs run against the loopback model; hub and subagent are the scripted
models of planscript.py, in a fixture repository of about 200 files.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from maestro.tokens import count_tokens

from . import hostenv
from .fake_model import Call, FakeModel
from .hostenv import needs
from .hubscript import hub_env
from .planscript import (
    DRY_RUN_OK,
    GOAL,
    REFERENCE_MEDIAN_TOKENS,
    REFERENCE_TOKENS,
    SUB_MARKER,
    TOUCHED,
    Planner,
    fixture_files,
    fixture_repo,
    kind,
    request_tokens,
)

pytestmark = pytest.mark.realcli

GEMINI_READ_TOOLS = {"read_file", "list_directory", "glob", "grep_search"}
CLAUDE_EDIT_TOOLS = {"Edit", "Write", "NotebookEdit", "Agent"}


def plan_argv(host: str, exe: Path, sandbox: str | None = None) -> list[str]:
    """Each host's headless mode for planning, the goal after the plan command."""
    if host == "claude":
        return [str(exe), "-p", f"/maestro:plan {GOAL}", "--output-format", "json"]
    if host == "gemini":
        # auto_edit: default approval allows `invoke_agent` too, but refuses the plan's
        # heredoc (a redirection) even where the user policy allows `maestro`.
        return [str(exe), "-p", f"/maestro:plan {GOAL}", "-o", "json", "--skip-trust"] + [
            *("-m", "gemini-2.5-flash", "--approval-mode", "auto_edit")
        ]
    box = ["--sandbox", sandbox] if sandbox else []
    return [str(exe), "exec", "--json", "--skip-git-repo-check", *box, f"$maestro plan {GOAL}"]


@pytest.mark.parametrize("median", [False, True])
def test_the_fixture_files_are_as_large_as_the_reference_projects(median):
    """Each kind of file is within 15% of the mean (or median) of its kind in the
    reference projects (planscript.REFERENCE_TOKENS), the twelve the recon reads within
    5% of their sum."""
    references = REFERENCE_MEDIAN_TOKENS if median else REFERENCE_TOKENS
    files = fixture_files(median)
    sizes: dict[str, list[int]] = {}
    for rel, text in files.items():
        sizes.setdefault(kind(rel), []).append(count_tokens(text))
    assert 190 <= len(files) <= 210
    for name, reference in references.items():
        got = sizes[name]
        assert abs(sum(got) / len(got) / reference - 1) <= 0.15, (name, got, reference)
    read = sum(count_tokens(files[rel]) for rel in TOUCHED)
    expected = sum(references[kind(rel)] for rel in TOUCHED)
    assert abs(read / expected - 1) <= 0.05, (read, expected)


def test_a_request_counts_its_texts_as_the_model_reads_them():
    """A file's lines count as themselves, not as their JSON escapes."""
    text = 'def f():\n    return "x"\n' * 50
    assert request_tokens({"content": text}) < count_tokens(json.dumps({"content": text}))
    assert request_tokens({"content": text}) <= count_tokens(text) + 8


def _plan(cli, project: Path, home: Path, host: str, **kw: str) -> tuple[Planner, str]:
    exe = needs(host)
    assert fixture_repo(project) >= 190
    # Gemini: the user scope lists the agent at once and its policy lets the hub run
    # `maestro`; Codex: user-scope roles are listed in any project.
    scope = "project" if host == "claude" else "user"
    assert cli("install", "--host", host, "--scope", scope).code == 0
    planner = Planner(host, project, subagent=True)
    with FakeModel(reply=planner) as fake:
        out = hostenv.run(
            plan_argv(host, exe, **kw), cwd=project, env=hub_env(home, fake.url), timeout=300
        )
        hub = [r for r in fake.model_requests() if planner.role(r.body) == "hub"]
        hub_texts = [r.text for r in hub]
    assert out.code == 0, (out.stderr[-2000:], planner.results[-1:])
    assert planner.final and DRY_RUN_OK in planner.results[-1], planner.results[-1:]
    # Both skills came back from the one shell call the command names, allowed.
    assert any("# Decomposing" in r and "# Routing" in r for r in planner.results)
    if host == "codex":  # the search the command names loads the two tools it uses
        found = [i for i in hub[-1].body["input"] if i.get("type") == "tool_search_output"]
        loaded = {t["name"] for i in found for ns in i["tools"] for t in ns.get("tools", [ns])}
        assert loaded == {"spawn_agent", "wait_agent"}, loaded
    subs = [c for c in planner.counted if c.role == "sub"]
    # The subagent made every read and answered; the hub kept its brief and never saw
    # a line of the files it read.
    assert len(subs) == len(TOUCHED) + 2, [c.tools for c in planner.counted]
    assert any("BRIEF" in r and "## Risks" in r for r in planner.results), planner.results
    assert not any("what HttpSession keeps" in text for text in hub_texts)
    return planner, out.stdout


def test_claude_hub_recons_through_explore(cli, project, temp_home):
    planner, stdout = _plan(cli, project, temp_home, "claude")
    result = json.loads(stdout)
    assert result["permission_denials"] == [] and not result["is_error"]
    # Explore runs on the small model and is offered no tool that edits a file; its
    # Bash is held to reading by its own instructions only (docs/hosts.md).
    sub_tools = {t for c in planner.counted if c.role == "sub" for t in c.tools}
    assert "Read" in sub_tools and not sub_tools & CLAUDE_EDIT_TOOLS
    assert any("haiku" in m for m in result["modelUsage"]), result["modelUsage"]


def test_gemini_hub_recons_through_maestro_recon(cli, project, temp_home):
    planner, stdout = _plan(cli, project, temp_home, "gemini")
    stats = json.loads(stdout)["stats"]["tools"]["byName"]
    assert stats["invoke_agent"]["success"] == 1 and stats["invoke_agent"]["fail"] == 0
    assert stats["read_file"]["fail"] == 0 and stats["read_file"]["success"] == len(TOUCHED)
    for sub in (c for c in planner.counted if c.role == "sub"):
        assert set(sub.tools) == GEMINI_READ_TOOLS | {"complete_task"}


def test_codex_hub_recons_through_a_role_in_its_sandbox(cli, project, temp_home):
    planner, stdout = _plan(cli, project, temp_home, "codex")
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    spawned = [
        e["item"]
        for e in events
        if e.get("type") == "item.completed" and e["item"].get("type") == "collab_tool_call"
    ]
    assert [i["tool"] for i in spawned] == ["spawn_agent", "wait"]
    assert all(i["status"] == "completed" for i in spawned)
    # The role's tools are the hub's but the search; in the hub's default (read-only)
    # sandbox its shell cannot write.
    sub_tools = {t for c in planner.counted if c.role == "sub" for t in c.tools}
    assert "exec_command" in sub_tools and "tool_search" not in sub_tools


def test_codex_runs_the_role_in_the_hubs_sandbox_whatever_it_asks(project, temp_home, cli):
    """The role asks for read-only; Codex 0.169 gives it the hub's workspace-write: the
    docs say so, and this fails once Codex honours the role."""
    exe = needs("codex")
    fixture_repo(project)
    assert cli("install", "--host", "codex", "--scope", "user").code == 0
    wrote = project / "written-by-recon.txt"
    hub = Planner("codex", project, subagent=True, steps=False)

    def reply(api: str, body: object) -> object:
        text = json.dumps(body)
        if hub.role(body) == "sub":
            return (
                Call("exec_command", {"cmd": f"touch {wrote}"})
                if '"function_call_output"' not in text
                else "BRIEF"
            )
        return hub(api, body)

    with FakeModel(reply=reply) as fake:
        hostenv.run(
            plan_argv("codex", exe, sandbox="workspace-write"),
            cwd=project,
            env=hub_env(temp_home, fake.url),
            timeout=300,
        )
        assert fake.seen(SUB_MARKER) and '"effort": "low"' in json.dumps(
            next(r.body for r in fake.model_requests() if SUB_MARKER in r.text)
        )
    assert wrote.exists()


def _listed(host: str, project: Path, home: Path) -> bool:
    """Does the host list maestro-recon to its model in this project?"""
    exe = needs(host)
    if host == "gemini":
        argv = [str(exe), "-p", "hello", "-o", "json", "--skip-trust", "-m", "gemini-2.5-flash"]

        def reply(api: str, body: object) -> object:
            return "hi"
    else:
        argv = [str(exe), "exec", "--json", "--skip-git-repo-check", "hello"]

        def reply(api: str, body: object) -> object:
            if "tool_search" in json.dumps(body.get("input")):  # type: ignore[union-attr]
                return "hi"
            return Call("tool_search", {"query": "spawn_agent sub-agent"})

    with FakeModel(reply=reply) as fake:
        env = hub_env(home, fake.url)
        config = home / ".codex/config.toml"  # written once, with the first run's server
        config.write_text(
            re.sub(r"(?m)^base_url = .*$", f'base_url = "{fake.url}/v1"', config.read_text())
        )
        out = hostenv.run(argv, cwd=project, env=env, timeout=120)
        assert out.code == 0, out.stderr[-1500:]
        # Gemini's list of sub-agents; Codex's roles in `spawn_agent`'s description.
        return fake.seen("- maestro-recon ->" if host == "gemini" else "maestro-recon: {")


def test_a_project_install_is_listed_only_after_the_users_own_choice(cli, project, temp_home):
    """Gemini: after the user acknowledged the project's agent (its interactive dialog
    writes this file); Codex: once the user trusts the project."""
    (project / "README.md").write_text("hello\n")
    for host in ("gemini", "codex"):
        assert cli("install", "--host", host).code == 0
    assert not _listed("gemini", project, temp_home)
    assert not _listed("codex", project, temp_home)
    agent = (project / ".gemini/agents/maestro-recon.md").read_bytes()
    acks = temp_home / ".gemini/acknowledgments"
    acks.mkdir(parents=True)
    sha = hashlib.sha256(agent).hexdigest()
    (acks / "agents.json").write_text(json.dumps({str(project): {"maestro-recon": sha}}))
    config = temp_home / ".codex/config.toml"
    config.write_text(config.read_text() + f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    assert _listed("gemini", project, temp_home)
    assert _listed("codex", project, temp_home)

"""Token budgets: the stub at most 50 cl100k tokens per host, each command within the
design notes' budget even with a long install path, and `maestro tokens --check`."""

import json

import pytest

from maestro.install import footprint, sources
from maestro.install.host import RenderOptions, hosts
from maestro.tokens import count_tokens

from .helpers import LONG_INVOCATION, TYPICAL_INVOCATION


@pytest.fixture(params=[TYPICAL_INVOCATION, LONG_INVOCATION])
def measured(request):
    return footprint.measure(RenderOptions(invocation=request.param))


def test_stub_within_50_tokens_and_names_syntax_and_state_files(measured):
    for fp in measured.hosts:
        assert fp.stub_block <= sources.STUB_BUDGET, fp
        stub = hosts()[fp.host].stub(RenderOptions(invocation="maestro"))
        assert hosts()[fp.host].invoke("plan").split()[0] in stub
        assert ".ai/MAESTRO.md" in stub and ".ai/MAESTRO-LOG.md" in stub


def test_stub_is_smaller_than_the_notes_example(measured):
    assert measured.notes_stub == count_tokens(footprint.NOTES_EXAMPLE_STUB) == 65
    assert all(fp.stub_block < measured.notes_stub for fp in measured.hosts)


def test_claude_model_does_not_see_the_markers(measured):
    claude = next(fp for fp in measured.hosts if fp.host == "claude")
    assert claude.stub_seen < claude.stub_block


def test_every_command_body_within_budget(measured):
    assert measured.problems() == []


def test_command_bodies_well_below_budget_with_the_usual_path():
    measured = footprint.measure(RenderOptions(invocation=TYPICAL_INVOCATION))
    for fp in measured.hosts:
        for verb, tokens in fp.bodies.items():
            assert tokens <= sources.BUDGETS[verb] * 0.8, (fp.host, verb, tokens)


def test_what_each_host_lists_every_session(measured):
    listed = {fp.host: fp.listed for fp in measured.hosts}
    assert sum(listed["claude"].values()) == 0
    # Gemini lists its sub-agents in the system prompt; Codex its skills (its agent roles
    # only once the model looks `spawn_agent` up).
    assert listed["gemini"]["skills"] == 0 and 0 < listed["gemini"]["agents"] <= 25
    assert listed["codex"]["agents"] == 0 and 0 < listed["codex"]["skills"] < 50


def test_tokens_check_passes(cli):
    res = cli("tokens", "--check")
    assert res.code == 0, res.out
    assert "All within budget." in res.out and "Design notes' example stub" in res.out


def test_tokens_check_fails_over_budget(cli, monkeypatch):
    monkeypatch.setitem(sources.BUDGETS, "status", 20)
    res = cli("tokens", "--check", "--json")
    assert res.code == 1
    data = json.loads(res.out)["data"]
    assert any("status" in p for p in data["problems"])
    assert cli("tokens").code == 0  # without --check it only reports

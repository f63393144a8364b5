"""Dollar caps with real CLIs as spokes, against the loopback fake model: Claude Code's
own `total_cost_usd` is taken at its word and pauses a capped run; Codex with no model
configured is named as unpriced (never $0), and a dollar cap over it is refused before
the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.runkit import events, plan, write_plan

from .hostenv import needs
from .test_spokes import CRITERION, write_then_answer

pytestmark = pytest.mark.realcli


def two_tasks(cli, root: Path, tool: str) -> None:
    tasks = [
        {
            "id": n,
            "title": f"Write greeting {n}",
            "specialist": "code",
            "tool": tool,
            "files": ["hello.txt"] if n == 1 else ["other.txt"],
            "criteria": [CRITERION],
            "validation": "true",
        }
        for n in (1, 2)
    ]
    write_plan(cli, root, tasks, hub="gemini", goal="Greet the world twice")


def test_claudes_own_cost_pauses_a_run_at_its_dollar_cap(cli, model, project, monkeypatch):
    needs("claude")
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    two_tasks(cli, project, "claude")
    model.reply = write_then_answer("hello.txt")
    res = cli("run", "--budget-usd", "0.000001")
    assert res.code == 2, res.out + res.err
    assert "run dollar budget reached" in res.out and "--budget-usd N" in res.out
    assert [t.status for t in plan(project).tasks] == ["done", "pending"]
    spent = [e for e in events(project) if e["kind"] == "spend"]
    assert len(spent) == 1 and spent[0]["cost"] > 0 and not spent[0].get("estimated")


def test_codex_with_no_model_configured_is_named_unpriced_never_zero(
    cli, model, project, temp_home
):
    needs("codex")
    config = temp_home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace('model = "gpt-5.5"\n', ""))
    two_tasks(cli, project, "codex")
    model.reply = write_then_answer("hello.txt")
    assert cli("run", "1").code == 0
    sent = len([r for r in model.model_requests() if isinstance(r.body, dict)])
    # Its own default model, which its --json output never names (and, run --ephemeral,
    # it keeps no record of): its dollars are unknown and said to be, never $0.
    (spent,) = [e for e in events(project) if e["kind"] == "spend"]
    assert spent["tokens"] > 0 and "cost" not in spent
    assert spent["unpriced"] == "codex's default model (it named none)"
    assert "unknown" in cli("status").out
    refused = cli("run", "2", "--budget-usd", "5")
    assert refused.code == 1, refused.out
    assert "codex would run its own default model, which its answer never names" in refused.err
    assert len([r for r in model.model_requests() if isinstance(r.body, dict)]) == sent

"""A fifth CLI is one module: this one. It registers ``acme``, an adapter and its roster
entry, and every verb works with it without another module knowing its name.

Acme speaks Claude's headless format (its adapter is Claude's, renamed), so the fake
``acme`` on PATH is the fake claude under another name, and the other three CLIs are
uninstalled: routing, the challenger and the reviewer can only be acme.
"""

from __future__ import annotations

import json
import stat
import sys

import pytest

# Everything that holds the list of CLIs is imported before acme registers, as in a
# process where a plugin registers its CLI late: they must see it all the same.
import maestro.planning.planschema
import maestro.state.planfile  # noqa: F401
from maestro import roster
from maestro.spokes import registry
from maestro.spokes.claude import ClaudeSpoke
from tests.engine.runkit import plan, step, task, write_plan

ACME = roster.Cli(
    "acme",
    "Acme CLI",
    "Acme",
    vendor="Acme Corp",
    executable="acme",
    install_hint="pipx install acme-cli",
    budget=(20_000, 24_000, 30_000),
    prices=(("acme-large*", 2.0, 8.0, 0.2),),
    fallback_price=(1.0, 4.0, 0.1),
    model_prefixes=("acme",),
    route_rank={"code": -1, "test": -1, "review": -1, "research": -1},
    opinion_rank=-1,
    # Its adapter is Claude's: the same flags, so the same tier its flags cannot enforce.
    unenforced_tiers=roster.CLIS["claude"].unenforced_tiers,
)


class AcmeSpoke(ClaudeSpoke):
    name = "acme"
    executable = "acme"
    install_hint = ACME.install_hint


CHALLENGE = """\
I read the plan.

```maestro-challenge
## Assumption issues
- Task 1: assumes the folder src/ exists
## Missing dependencies
- None
## Scope concerns
- None
## Alternative approaches
- None
```
"""
VERDICT = "I read the diff.\n\n```maestro-review\nverdict: approve\n- none\n```\n"


@pytest.fixture
def acme(runenv):
    """acme registered and on PATH (the fake claude's program), claude, gemini and codex
    not installed."""
    from tests.fakes.plugin import FAKES

    exe = runenv.bin_dir / "acme"
    exe.write_text(
        f"#!{sys.executable} -IS\nimport sys\nsys.path.insert(0, {str(FAKES)!r})\n"
        "from fake_cli import main\nsys.exit(main('claude'))\n",
        encoding="utf-8",
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    for name in ("claude", "gemini", "codex"):
        runenv.uninstall(name)
    registry.register(AcmeSpoke, ACME)
    yield runenv
    registry.unregister("acme")


def test_every_verb_works_with_a_fifth_cli(cli, project, acme, monkeypatch):
    monkeypatch.setenv("MAESTRO_LOG", "summary")
    # plan: acme is a hub and a Tool the plan format accepts; a task without a Tool is
    # routed at run time.
    write_plan(
        cli,
        project,
        [
            task(1, tool="acme"),
            task(2, files=["src/b.py"], depends=[1], validation="test -f src/b.py"),
        ],
        hub="acme",
    )
    assert plan(project).task("1").tool == "acme"

    # challenge: the only installed CLI is the challenger, and says it is the hub's vendor.
    acme.script("claude", [{"text": CHALLENGE}])
    res = cli("challenge")
    assert res.code == 0, res.err
    assert "assumes the folder src/ exists" in res.out and "acme" in res.out

    # run: task 1 names acme, task 2 is routed to it (nothing else is installed).
    acme.script("claude", [step(), step("src/b.py")])
    res = cli("run")
    assert res.code == 0, res.err + res.out
    done = plan(project)
    assert [(t.status, t.tool) for t in done.tasks] == [("done", "acme"), ("done", "acme")]
    assert len(acme.runs("claude")) == 3  # the challenge, then one dispatch per task
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "Acme (Task 1" in log and "Acme CLI" in log  # the roster's short and display names

    # review: acme reviews acme's work (the only CLI), read-only.
    acme.script("claude", [{"text": VERDICT}])
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.err + res.out
    assert "approve" in res.out.lower()

    # a failed task's options offer it for reassignment.
    from maestro.engine.ladder import decision_options

    assert "--tool <claude|gemini|codex|acme>" in decision_options("2", roster.NAMES)[1]["command"]

    # status and report name it.
    res = cli("status", "--json")
    assert res.code == 0 and {t["tool"] for t in json.loads(res.out)["data"]["tasks"]} == {"acme"}
    res = cli("report")
    assert res.code == 0, res.err
    assert "Acme" in res.out

    # budgets: acme's defaults come from its roster entry, and [budgets.acme] is read.
    from maestro.engine.budgets import Limits, limits_for

    assert limits_for("acme", {}) == Limits(20_000, 24_000, 30_000)
    (project / ".ai" / "maestro.toml").write_text("[budgets.acme]\nbudget = 0\n", encoding="utf-8")
    res = cli("run", "--tool", "acme")
    assert res.code == 1 and "[budgets.acme] budget = 0" in res.err

    # doctor lists acme with its version; tokens works with it registered.
    res = cli("doctor", "--json")
    assert res.code in (0, 1), res.err
    checks = {c["name"]: c for c in json.loads(res.out)["data"]["checks"]}
    assert checks["acme"]["level"] == "ok" and "Acme CLI" in checks["acme"]["detail"]
    assert checks["claude"]["level"] == "info" and "not on PATH" in checks["claude"]["detail"]
    res = cli("tokens")
    assert res.code == 0, res.err


def test_prices_and_models_of_a_fifth_cli(acme):
    from maestro.agents.catalog import model_vendor
    from maestro.spokes.pricing import price_for

    assert model_vendor("acme-large-2") == "acme"
    assert price_for("acme-large-2").input == 2.0
    fallback = price_for("something-else", tool="acme")
    assert (fallback.input, fallback.source) == (1.0, "fallback")


def test_unregistered_cli_is_unknown_again(cli, project, acme):
    registry.unregister("acme")
    write_plan_res = cli("run", "--tool", "acme")
    assert write_plan_res.code != 0
    registry.register(AcmeSpoke, ACME)

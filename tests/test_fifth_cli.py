"""A fifth CLI is one module, ``tests/fifth/acme.py``, plus its fake, ``fake_acme.py``.

The module is found the way a plugin's is: ``MAESTRO_CLIS`` names it, and ``maestro``
registers it when it starts. Nothing else names acme: no module of the package. With it, acme is a spoke (plan,
challenge, run, review, status, report, budgets, prices) and a hub (install, uninstall,
doctor, tokens, completion). Claude, gemini and codex are uninstalled, and acme ranks
first, so routing, the challenger and the reviewer can only be acme.
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

# Everything that holds the list of CLIs is imported before acme registers, as in a
# process where a plugin registers its CLI late: they must see it all the same.
import maestro
import maestro.planning.planschema
import maestro.state.planfile
from maestro import clis, roster
from maestro.config import load_settings
from tests.engine.runkit import plan, step, task, write_plan

FIFTH = Path(__file__).resolve().parent / "fifth"

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


class Acme:
    def __init__(self, state: Path) -> None:
        self.state = state

    def script(self, steps: list[dict]) -> None:
        (self.state / "acme.script.json").write_text(json.dumps(steps))
        (self.state / "acme.count").write_text("0")

    def calls(self) -> list[list[str]]:
        found = self.state / "acme.calls.jsonl"
        return (
            [json.loads(line) for line in found.read_text().splitlines()] if found.exists() else []
        )


@pytest.fixture
def acme(runenv, tmp_path, monkeypatch):
    """acme's module named as a plugin's, its fake on PATH; claude, gemini and codex not
    installed."""
    monkeypatch.setenv("MAESTRO_CLIS", "tests.fifth.acme")
    state = tmp_path / "acme-state"
    state.mkdir()
    # Where the fake keeps its script and calls: writable to it, confined (sandbox_write).
    monkeypatch.setenv("MAESTRO_SANDBOX_WRITE", f"{runenv.state_dir},{state}")
    # Its code beside the other fakes', where a confined spoke sees it.
    shutil.copy2(FIFTH / "fake_acme.py", runenv.lib / "fake_acme.py")
    exe = runenv.bin_dir / "acme"
    exe.write_text(
        f"#!{sys.executable} -IS\nimport sys, pathlib\nsys.path.insert(0, {str(runenv.lib)!r})\n"
        f"from fake_acme import main\nsys.exit(main(pathlib.Path({str(state)!r})))\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    for name in ("claude", "gemini", "codex"):
        runenv.uninstall(name)
    yield Acme(state)
    roster.unregister("acme")
    sys.modules.pop("tests.fifth.acme", None)


def test_nothing_in_the_package_names_the_fifth_cli():
    package = Path(maestro.__file__).parent
    assert [p for p in package.rglob("*.py") if "acme" in p.read_text().lower()] == []


def test_a_plugins_cli_is_registered_when_maestro_starts(cli, project, acme, capsys):
    assert "acme" not in roster.NAMES
    res = cli("install", "--help")
    assert res.code == 0 and "--host {claude,gemini,codex,acme,all}" in capsys.readouterr().out
    assert roster.NAMES[-1] == "acme" and "acme" in roster.REAL and "acme" in roster.HOSTS
    clis.load({"MAESTRO_CLIS": "tests.fifth.acme"})  # a second start registers nothing twice
    assert roster.NAMES.count("acme") == 1


def test_the_fifth_cli_as_a_spoke(cli, project, acme, monkeypatch):
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
    acme.script([{"text": CHALLENGE}])
    res = cli("challenge")
    assert res.code == 0, res.err
    assert "assumes the folder src/ exists" in res.out and "acme" in res.out

    # run: task 1 names acme, task 2 is routed to it (nothing else is installed).
    acme.script([step(), step("src/b.py")])
    res = cli("run")
    assert res.code == 0, res.err + res.out
    done = plan(project)
    assert [(t.status, t.tool) for t in done.tasks] == [("done", "acme"), ("done", "acme")]
    assert (project / "src" / "b.py").is_file()
    calls = acme.calls()
    assert len(calls) == 3 and all(c[0] == "--print" and "rw" in c for c in calls[1:])
    log = (project / ".ai" / "MAESTRO-LOG.md").read_text()
    assert "Acme (Task 1" in log and "Acme CLI" in log  # the roster's short and display names

    # review: acme reviews acme's work (the only CLI), read-only.
    acme.script([{"text": VERDICT}])
    res = cli("review", "1", "--auto")
    assert res.code == 0, res.err + res.out
    assert "approve" in res.out.lower() and "ro" in acme.calls()[-1]

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


def test_the_fifth_cli_as_a_hub(cli, project, acme, temp_home):
    # install writes its commands and its stub, and `--host all` counts it.
    res = cli("install", "--host", "acme")
    assert res.code == 0, res.err
    command = (project / ".acme" / "commands" / "maestro" / "run.md").read_text()
    assert command.startswith("---\ndescription:") and "/maestro:" in command
    assert "/maestro:plan|" in (project / "ACME.md").read_text()
    res = cli("install", "--host", "all", "--dry-run", "--json")
    assert res.code == 0, res.err
    assert "acme" in res.out and "claude" in res.out
    # the other hosts' commands offer it too.
    assert cli("install", "--host", "claude").code == 0
    challenge = (project / ".claude" / "commands" / "maestro" / "challenge.md").read_text()
    assert "--tool claude|gemini|codex|acme | --all" in challenge

    # doctor: the CLI with its version, its install, its hub mode and its own pitfall.
    (temp_home / ".acme").mkdir()
    (temp_home / ".acme" / "config.json").write_text('{"yolo": true}')
    res = cli("doctor", "--json")
    assert res.code in (0, 1), res.err
    checks = {(c["area"], c["name"]): c for c in json.loads(res.out)["data"]["checks"]}
    assert (
        checks["hosts", "acme"]["level"] == "ok"
        and "Acme CLI 1.2.3" in checks["hosts", "acme"]["detail"]
    )
    assert checks["hosts", "claude"]["level"] == "info"
    assert checks["installs", "acme (project)"]["level"] == "ok"
    assert (
        checks["hubs", "acme"]["level"] == "ok"
        and "acme /maestro:run" in checks["hubs", "acme"]["detail"]
    )
    assert checks["pitfalls", "acme yolo"]["level"] == "warn"

    # tokens measures it; completion offers it; uninstall takes its files away.
    res = cli("tokens", "--json")
    assert res.code == 0, res.err
    assert "acme" in [h["host"] for h in json.loads(res.out)["data"]["hosts"]]
    res = cli("completion", "bash")
    assert res.code == 0 and "acme" in res.out
    res = cli("uninstall", "--host", "acme")
    assert res.code == 0, res.err
    assert not (project / ".acme").exists() and not (project / "ACME.md").exists()


def test_prices_and_models_of_a_fifth_cli(cli, project, acme):
    cli("--version")  # maestro's start registers acme
    from maestro.agents.catalog import model_vendor
    from maestro.spokes.pricing import price_for

    assert model_vendor("acme-large-2") == "acme"
    assert price_for("acme-large-2") is None  # not in the price table, never guessed
    (project / ".ai").mkdir(exist_ok=True)
    (project / ".ai" / "maestro.toml").write_text('[prices."acme-large*"]\ninput = 2\noutput = 8\n')
    price = price_for("acme-large-2", load_settings(project))
    assert (price.input, price.output, price.source) == (2.0, 8.0, "config")


def test_a_plugin_that_fails_to_load_is_one_line(cli, project, acme, monkeypatch):
    monkeypatch.setenv("MAESTRO_CLIS", "tests.fifth.acme, tests.fifth.nosuch")
    res = cli("status")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "MAESTRO_CLIS names 'tests.fifth.nosuch'" in res.err and "Traceback" not in res.err


def test_without_its_module_the_fifth_cli_is_unknown(cli, project, acme, monkeypatch):
    monkeypatch.delenv("MAESTRO_CLIS")
    res = cli("run", "--tool", "acme")
    assert res.code != 0 and "acme" not in roster.NAMES

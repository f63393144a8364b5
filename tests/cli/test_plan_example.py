"""A first plan in minutes: `maestro plan --example` writes a commented plan that passes
the check, the printed schema requires what the check requires, and `maestro plan FILE`
asks whether `--from FILE` was meant instead of sending a file name to a model."""

import copy
import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from maestro import planning

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = planning.EXAMPLE.read_text(encoding="utf-8")


def test_the_example_passes_the_check_with_nothing_to_say(cli, project):
    printed = cli("plan", "--example")
    assert printed.code == 0 and printed.out == EXAMPLE
    assert EXAMPLE.count("\n# ") + EXAMPLE.count("  # ") > 10  # commented, key by key
    checked = cli("plan", "--from", "-", "--dry-run", "--json", stdin=printed.out)
    assert checked.code == 0, checked.err
    data = json.loads(checked.out)["data"]
    assert data["findings"] == [] and [t["id"] for t in data["tasks"]] == ["1", "2", "3"]


def test_example_to_a_file_never_over_one(cli, project):
    res = cli("plan", "--example", "plan.yaml")
    assert res.code == 0 and "`maestro plan --from plan.yaml --dry-run`" in res.out
    assert (project / "plan.yaml").read_text() == EXAMPLE
    (project / "plan.yaml").write_text("mine\n")
    again = cli("plan", "--example", "plan.yaml")
    assert again.code == 1 and again.err.count("\n") == 1 and "not overwritten" in again.err
    assert (project / "plan.yaml").read_text() == "mine\n"
    assert cli("plan", "--from", "plan.yaml", "--example").code == 1  # one source at a time


def test_the_docs_show_the_example_as_it_is():
    assert f"```yaml\n{EXAMPLE}```" in (ROOT / "docs/plan-file.md").read_text(encoding="utf-8")


def _variants():
    """The example less one thing the check requires, each: (what, plan data)."""
    base = yaml.safe_load(EXAMPLE)
    for what, task, key in [
        ("review task without criteria", 2, "criteria"),
        ("code task without validation", 0, "validation"),
        ("test task without files", 1, "files"),
        ("test task without validation", 1, "validation"),
    ]:
        data = copy.deepcopy(base)
        del data["tasks"][task][key]
        yield what, data
    data = copy.deepcopy(base)
    data["tasks"][0]["criteria"] = []
    yield "empty criteria", data


@pytest.mark.parametrize(
    "what, data", list(_variants()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_the_schema_requires_what_the_check_requires(what, data):
    schema = Draft202012Validator(planning.SCHEMA)
    assert not list(schema.iter_errors(yaml.safe_load(EXAMPLE)))
    assert list(schema.iter_errors(data)), f"the schema allows a {what}"
    findings = planning.errors(planning.aavsr(planning.to_plan(data)))
    assert findings, f"the check allows a {what}"


def test_the_schema_says_the_rest_in_words():
    task = planning.SCHEMA["properties"]["tasks"]["items"]
    assert "criteria on every task" in task["description"]
    assert "read-only" in task["description"] and ".ai/" in task["description"]
    assert "maestro plan --example" in planning.SCHEMA["description"]


def test_plan_with_a_file_name_asks_whether_from_was_meant(cli, project, fake_clis):
    (project / "plan.yaml").write_text(EXAMPLE)
    res = cli("plan", "plan.yaml", "--hub", "claude")
    assert res.code == 1 and res.out == "" and res.err.count("\n") == 1
    assert "did you mean `maestro plan --from plan.yaml`?" in res.err
    assert fake_clis.runs("claude") == []  # no model was asked
    assert not (project / ".ai/MAESTRO.md").exists()


def test_a_hub_that_cannot_plan_is_not_offered(cli, project, capsys, monkeypatch):
    assert cli("plan", "--help").code == 0
    assert "--hub {claude,gemini,codex}" in capsys.readouterr().out
    res = cli("plan", "Add a health endpoint", "--hub", "sim")
    assert res.code == 1 and "invalid choice: 'sim'" in capsys.readouterr().err
    monkeypatch.setenv("MAESTRO_HUB", "sim")
    res = cli("plan", "Add a health endpoint")
    assert res.code == 1 and "MAESTRO_HUB=sim cannot plan a goal" in res.err

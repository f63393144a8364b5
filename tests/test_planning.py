import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from maestro import planning
from maestro.errors import MaestroError, NotFound, PlanError
from maestro.paths import ProjectPaths
from maestro.state.model import Plan, Task

GOOD = (Path(__file__).resolve().parent / "fixtures" / "plan-inputs" / "auth.yaml").read_text()


def load_error(text):
    with pytest.raises(PlanError) as err:
        planning.load(text)
    message = str(err.value)
    assert "\n" not in message and "Fix:" in message
    return message


def test_schema_is_valid_json_schema_and_accepts_the_example():
    Draft202012Validator.check_schema(planning.SCHEMA)
    import yaml

    assert not list(Draft202012Validator(planning.SCHEMA).iter_errors(yaml.safe_load(GOOD)))
    json.dumps(planning.SCHEMA)  # printable


def test_load_yaml_converts_to_plan():
    plan = planning.load(GOOD)
    assert isinstance(plan, Plan)
    assert plan.goal == "Add user authentication"
    assert [t.id for t in plan.tasks] == ["1", "2", "3"]
    first = plan.tasks[0]
    assert (first.specialist, first.agent, first.tool, first.status) == (
        "code",
        "coder",
        None,
        "pending",
    )
    assert first.files == ["src/auth.py"] and first.validation == "pytest tests/test_auth.py"
    assert plan.tasks[2].depends == ["1", "2"]
    assert plan.source.hub == "claude"


def test_dotted_ids_as_text_and_numbers():
    plan = planning.load(
        "goal: g\ntasks:\n  - {id: 1, title: a, specialist: code}\n"
        "  - {id: '1.1', title: b, specialist: code, depends: [1]}\n"
        "  - {id: 2, title: c, specialist: code, depends: ['1.1', 1]}"
    )
    assert [t.id for t in plan.tasks] == ["1", "1.1", "2"] and plan.tasks[2].depends == ["1.1", "1"]


def test_load_json_same_as_yaml():
    import yaml

    assert planning.load(json.dumps(yaml.safe_load(GOOD))) == planning.load(GOOD)


def test_load_without_hub_has_no_source():
    assert planning.load("goal: g\ntasks: [{id: 1, title: t, specialist: code}]").source is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "plan input is empty"),
        ("   \n", "plan input is empty"),
        ("goal: x\ntasks:\n  - id: 1\n    title: [oops\n", "not valid YAML"),
        ('{"goal": "x", "tasks": [}', "not valid JSON"),
        ("just a sentence", "the plan: expected a mapping, got text"),
        ("goal: x\ntasks: []", "tasks: is empty"),
        ("tasks: [{id: 1, title: t, specialist: code}]", "missing required key 'goal'"),
        (
            "goal: x\ntasks:\n  - {id: 1, specialist: code}",
            "task 1: missing required key 'title'",
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: coding}",
            "task 1: specialist: 'coding' is not allowed",
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, dependz: [2]}",
            "did you mean 'depends'",
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, files: src/a.py}",
            "task 1: files: expected a list",
        ),
        ("goal: x\ntasks:\n  - {id: 2.1, title: t, specialist: code}", "read as a decimal number"),
        ("goal: x\ntasks:\n  - {id: a1, title: t, specialist: code}", "'a1' is not a task id"),
        (
            "goal: x\ntasks:\n  - {id: 1, title: yes, specialist: code}",
            "task 1: title: expected text",
        ),
        (
            'goal: x\ntasks:\n  - {id: 1, title: "a\\nb", specialist: code}',
            "must be one non-empty line",
        ),
        ("goal: x\nversion: 2\ntasks: [{id: 1, title: t, specialist: code}]", "format version 2"),
        (
            "goal: x\nowner: me\ntasks: [{id: 1, title: t, specialist: code}]",
            "the plan: unknown key 'owner'",
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, tool: gemnii}",
            "did you mean 'gemini'",
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, depends: [1, 1]}",
            "lists the same item twice",
        ),
    ],
)
def test_bad_input_is_one_line_error_naming_key_path(text, expected):
    assert expected in load_error(text)


def test_yaml_error_names_the_line():
    with pytest.raises(PlanError) as err:
        planning.load("goal: x\ntasks:\n  - id: 1\n    title: [oops\n", name="plan.yaml")
    assert err.value.file == "plan.yaml" and err.value.line == 5


def test_every_problem_is_shown_each_by_its_task_id():
    message = load_error(
        "goal: x\ntasks:\n  - {id: 1, title: a, specialist: coding}\n"
        "  - {id: 2, title: b, specialist: code, dependss: [1]}\n"
        "  - {title: c, specialist: code}\n"
    )
    assert message.startswith("plan input: 3 problems: task 1: specialist: 'coding' is not allowed")
    assert "; task 2: unknown key 'dependss' (did you mean 'depends'?" in message
    assert "; tasks[2]: missing required key 'id' (add id: 1" in message  # it has no id to name
    assert "more problem" not in message and "tasks[1]" not in message


def test_graph_errors_after_schema():
    assert "1 -> 3 -> 1" in load_error(
        "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, depends: [3]}\n"
        "  - {id: 3, title: t, specialist: code, depends: [1]}"
    )
    assert "depends on 9, which is not in the plan" in load_error(
        "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, depends: [9]}"
    )
    assert "Task 1 appears twice" in load_error(
        "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code}\n  - {id: '1', title: u, specialist: code}"
    )


# AAVSR ----------------------------------------------------------------------------------


def good_task(tid="1", **fields):
    base = dict(
        title="Add the login endpoint",
        specialist="code",
        files=["src/auth.py"],
        criteria=["pytest tests/test_auth.py passes"],
        validation="pytest tests/test_auth.py",
    )
    base.update(fields)
    return Task(tid, **base)


def check(*tasks, **kwargs):
    return planning.aavsr(Plan("goal", list(tasks)), **kwargs)


def only(findings, check_name):
    return [f for f in findings if f.check == check_name]


def test_clean_task_has_no_findings():
    assert check(good_task()) == []


def test_atomic_too_many_files_criteria_and_joined_title():
    found = check(
        good_task(files=[f"src/m{i}.py" for i in range(9)]),
        good_task("2", criteria=[f"check {i} passes" for i in range(7)]),
        good_task("3", title="Implement login and write the tests"),
        good_task("4", title="Add login and logout endpoints"),
    )
    atomic = only(found, "Atomic")
    assert [(f.task, f.level) for f in atomic] == [
        ("1", "warning"),
        ("2", "warning"),
        ("3", "warning"),
    ]
    assert all("split it into smaller tasks" in f.remedy for f in atomic)
    assert "9 files" in atomic[0].why and "7 success criteria" in atomic[1].why


@dataclass
class FakeAgent:
    name: str
    tier: str


class FakeCatalog:
    agents = {
        "coder": FakeAgent("coder", "full"),
        "architect": FakeAgent("architect", "read-only"),
        "code-reviewer": FakeAgent("code-reviewer", "read-only"),
        "technical-writer": FakeAgent("technical-writer", "read+write"),
    }
    disabled = {"technical-writer"}

    def names(self):
        return sorted(self.agents)

    def get(self, name):
        if name not in self.agents:
            raise NotFound(f"no agent named '{name}'.", "use one of: " + ", ".join(self.names()))
        if name in self.disabled:
            raise MaestroError(
                f"agent '{name}' is disabled by MAESTRO_DISABLED_AGENTS.", "use another agent."
            )
        return self.agents[name]

    def for_task(self, task):
        return self.get(task.agent or {"code": "coder", "review": "code-reviewer"}[task.specialist])


def test_authority_agent_checks():
    found = check(
        good_task(agent="architect"),
        good_task("2", agent="codr"),
        good_task("3", agent="technical-writer"),
        Task(
            "4", "Review auth", specialist="review", agent="coder", criteria=["findings (severity)"]
        ),
        catalog=FakeCatalog(),
    )
    authority = only(found, "Authority")
    assert [(f.task, f.level) for f in authority] == [
        ("1", "error"),
        ("2", "error"),
        ("3", "error"),
        ("4", "warning"),
    ]
    assert "read-only and cannot write" in authority[0].why and "coder" in authority[0].remedy
    assert "no agent named 'codr'" in authority[1].why
    assert "disabled" in authority[2].why
    assert "code-reviewer" in authority[3].remedy


def test_a_coordinating_task_needs_an_agent_with_a_shell():
    found = check(
        good_task(mode="coordinate"),  # coder: full, it can type `maestro task spawn`
        good_task("2", agent="architect", files=[], mode="coordinate"),
        catalog=FakeCatalog(),
    )
    authority = only(found, "Authority")
    assert [(f.task, f.level) for f in authority] == [("2", "error")]
    assert "no shell to run `maestro task spawn`" in authority[0].why
    assert "coder" in authority[0].remedy


def test_authority_tool_not_installed():
    found = check(
        good_task(tool="codex"),
        good_task("2", tool="claude"),
        good_task("3", tool="sim"),
        available={"claude": object()},
    )
    authority = only(found, "Authority")
    assert [(f.task, f.level) for f in authority] == [("1", "error")]
    assert "codex is not installed" in authority[0].why and "claude" in authority[0].remedy
    assert "run `maestro doctor` once from a shell whose PATH has it" in authority[0].remedy


def test_authority_warns_when_no_cli_could_take_an_unassigned_task():
    found = check(good_task(tool=None), available={"sim": object()})
    (warning,) = only(found, "Authority")
    assert (
        warning.level == "warning"
        and "no tool is named and no spoke CLI is installed" in warning.why
    )
    assert "--tool sim" in warning.remedy
    assert only(check(good_task(tool=None), available={"gemini": object()}), "Authority") == []


def test_authority_skipped_without_catalog_or_availability():
    assert check(good_task(agent="nobody", tool="codex")) == []


def test_verifiable():
    found = check(
        good_task(criteria=[]),
        good_task("2", validation=None),
        good_task("3", criteria=["the code works properly"]),
        Task(
            "4",
            "Research session storage",
            specialist="research",
            criteria=["options listed in a table"],
        ),
    )
    verifiable = only(found, "Verifiable")
    assert [(f.task, f.level) for f in verifiable] == [
        ("1", "error"),
        ("2", "error"),
        ("3", "warning"),
    ]
    assert (
        "no success criteria" in verifiable[0].why and "no validation command" in verifiable[1].why
    )


def test_scope_no_files_and_escapes(tmp_path):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    paths = ProjectPaths(root)
    found = check(
        good_task(files=[]),
        good_task("2", files=["../secrets.txt"]),
        good_task("3", files=["/etc/hosts"]),
        good_task("4", files=["link/evil.py"]),
        good_task("5", files=[str(root / "src" / "ok.py")]),
        good_task("6", files=[".git/hooks/pre-commit"]),
        good_task("7", files=[".ai/MAESTRO.md"]),
        Task("8", "Research options", specialist="research", criteria=["table of options"]),
        paths=paths,
    )
    scope = only(found, "Scope")
    assert [(f.task, f.level) for f in scope] == [
        ("1", "error"),
        ("2", "error"),
        ("3", "error"),
        ("4", "error"),
        ("6", "error"),
        ("7", "error"),
    ]
    assert "owns no files" in scope[0].why
    assert "'..'" in scope[1].why
    assert "outside the project" in scope[2].why
    assert "symlink" in scope[3].why and str(outside) in scope[3].why
    assert all("inside the project" in f.remedy for f in scope[1:])


def test_scope_without_paths_still_catches_dotdot_and_absolute():
    found = only(check(good_task(files=["a/../../b"]), good_task("2", files=["/abs/x"])), "Scope")
    assert [f.task for f in found] == ["1", "2"]


def test_scope_file_conflict_is_a_warning():
    found = only(check(good_task(), good_task("2", title="Add the logout endpoint")), "Scope")
    assert len(found) == 1 and found[0].level == "warning"
    assert "Task 1 and Task 2 both own src/auth.py" in found[0].why


def test_risk_flags_high_risk_without_review():
    found = check(
        good_task(title="Write the users table migration", files=["db/migrations/0002.sql"]),
        good_task("2", title="Rotate the API key handling", files=["src/keys.py"], risk="high"),
        good_task("3", title="Add the logout endpoint", files=["src/logout.py"], risk="high"),
        Task(
            "4",
            "Review the logout endpoint",
            specialist="review",
            depends=["3"],
            criteria=["findings listed (severity)"],
        ),
    )
    risk = only(found, "Risk")
    assert [(f.task, f.level) for f in risk] == [("1", "warning"), ("2", "warning")]
    assert "a migration" in risk[0].why and "rollback" in risk[0].remedy
    assert "add a review task" in risk[0].remedy
    assert "secrets" in risk[1].why


def test_risk_reviewed_but_not_marked_high():
    found = only(
        check(
            good_task(title="Delete the legacy export job", files=["src/export.py"]),
            Task(
                "2",
                "Review the removal",
                specialist="review",
                depends=["1"],
                criteria=["findings listed (severity)"],
            ),
        ),
        "Risk",
    )
    assert len(found) == 1 and "set risk: high" in found[0].remedy


def test_risk_destructive_validation_is_an_error():
    found = only(check(good_task(validation="pytest && git push origin main")), "Risk")
    assert [(f.level, "git push" in f.why) for f in found] == [("error", True)]


def test_findings_serialise():
    finding = check(good_task(criteria=[]))[0]
    data = finding.to_dict()
    assert set(data) == {"check", "task", "why", "remedy", "level"}
    assert str(finding).startswith("error: Task 1: Verifiable:")


def test_real_catalog_unknown_and_disabled_agents_are_errors(project, monkeypatch):
    catalog_mod = pytest.importorskip("maestro.agents.catalog")
    from maestro.config import load_settings

    monkeypatch.setenv("MAESTRO_DISABLED_AGENTS", "data-engineer")
    catalog = catalog_mod.load_catalog(load_settings(project, dict(os.environ)))
    found = only(
        check(
            good_task(agent="codr"),
            good_task(
                "2",
                agent="data-engineer",
                title="Add the sessions table",
                files=["db/sessions.sql"],
            ),
            good_task(
                "3", agent="architect", title="Add the logout endpoint", files=["src/logout.py"]
            ),
            good_task("4", agent="coder", title="Add the session store", files=["src/session.py"]),
            catalog=catalog,
        ),
        "Authority",
    )
    assert [(f.task, f.level) for f in found] == [("1", "error"), ("2", "error"), ("3", "error")]
    assert "coder" in found[0].why + found[0].remedy  # closest match named
    assert "disabled" in found[1].why
    assert "read-only" in found[2].why


def test_a_task_names_a_specialist_an_agent_or_both():
    plan = planning.load(
        "goal: g\ntasks:\n"
        "  - {id: 1, title: Add a migration, agent: data-engineer}\n"
        "  - {id: 2, title: Add the endpoint, specialist: code}\n"
        "  - {id: 3, title: Test it, specialist: test, agent: tester}\n"
    )
    assert [(t.specialist, t.agent) for t in plan.tasks] == [
        (None, "data-engineer"),
        ("code", None),
        ("test", "tester"),
    ]
    message = load_error("goal: g\ntasks:\n  - {id: 1, title: Something}\n")
    assert "task 1: names neither a specialist nor an agent" in message
    assert "specialist: code (or agent: coder, or both)" in message


def test_an_agent_only_task_is_checked_by_what_its_agent_does():
    from maestro.agents.catalog import load_catalog
    from maestro.config import load_settings

    catalog = load_catalog(load_settings())
    writer = good_task(specialist=None, agent="data-engineer", validation=None, files=[])
    reviewer = good_task("2", specialist=None, agent="security-engineer", validation=None, files=[])
    tester = good_task("3", specialist=None, agent="tester", validation=None)
    found = check(writer, reviewer, tester, catalog=catalog)
    assert {(f.task, f.check) for f in found if f.level == "error"} == {
        ("1", "Verifiable"),
        ("1", "Scope"),
        ("3", "Verifiable"),
    }
    assert "it is a code task with no validation command" in only(found, "Verifiable")[0].why
    assert "it is a test task" in only(found, "Verifiable")[1].why

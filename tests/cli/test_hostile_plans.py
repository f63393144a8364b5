"""Plans written to hurt: NUL characters, unclosed fences, deep nesting, YAML aliases.
Each is refused in one line naming where (exit 1), before anything is dispatched."""

from __future__ import annotations

import json

import pytest

SIM_TASK = """\
  - id: "{id}"
    title: Task number {id}
    tool: sim
    specialist: code
    files: [src/a.py]
    validation: "test -f src/a.py"
    criteria: [{criterion}]
"""


def plan_yaml(*criteria: str) -> str:
    tasks = "".join(
        SIM_TASK.format(id=n, criterion=c) for n, c in enumerate(criteria or ['"writes a"'], 1)
    )
    return f"goal: test\ntasks:\n{tasks}"


def refused(res, *words):
    assert res.code == 1, res.out + res.err
    lines = res.err.splitlines()
    assert len(lines) == 1 and "Fix:" in lines[0] and "Traceback" not in res.err, res.err
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture
def planned(project, cli):
    """A project with a one-task sim plan written by `maestro plan --from`."""
    (project / "plan.yaml").write_text(plan_yaml())
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    return project / ".ai" / "MAESTRO.md"


@pytest.mark.parametrize(
    "text,where,what",
    [
        (plan_yaml('"writes \\0 a"'), "plan.yaml: tasks[0].criteria[0]", "'\\x00'"),
        (plan_yaml('"writes \\e[2J a"'), "plan.yaml: tasks[0].criteria[0]", "'\\x1b'"),
        ('{"goal": "g\\u0000", "tasks": []}', "plan.yaml: goal", "'\\x00'"),
        ('{"goal": "g\\udc80", "tasks": []}', "plan.yaml: goal", "half a surrogate pair"),
        ("goal: test\x00\ntasks: []\n", "plan.yaml:1:", "NUL"),
    ],
)
def test_a_nul_in_plan_input_is_refused_naming_where_finding_10(project, cli, text, where, what):
    (project / "plan.yaml").write_text(text)
    refused(cli("plan", "--from", "plan.yaml", "--yes"), where, what)
    assert not (project / ".ai" / "MAESTRO.md").exists()


@pytest.mark.parametrize(
    "field,value,refusal",
    [
        ("title", "A" * 100_000, "task 1: title: is 100,000 characters, over the limit of 200"),
        ("files", [f"src/f{i}.py" for i in range(3_000)], "files: lists 3,000 items, over the"),
        ("criteria", ["c" * 1_001], "task 1: criteria[0]: is 1,001 characters, over the limit"),
        ("validation", "v" * 1_001, "task 1: validation: is 1,001 characters"),
        ("depends", [str(n) for n in range(2, 103)], "depends: lists 101 items, over the limit"),
    ],
)
def test_a_field_past_its_bound_is_refused_naming_the_limit(project, cli, field, value, refusal):
    task = {
        "id": 1,
        "title": "Write the module",
        "specialist": "code",
        "files": ["src/a.py"],
        "criteria": ["writes a"],
        "validation": "test -f src/a.py",
        field: value,
    }
    (project / "plan.json").write_text(json.dumps({"goal": "g", "tasks": [task]}))
    refused(cli("plan", "--from", "plan.json", "--yes"), refusal)
    assert not (project / ".ai" / "MAESTRO.md").exists()


def test_a_nul_in_a_hand_edited_plan_is_refused_with_its_line_finding_10(planned, cli, fake_clis):
    text = planned.read_text().replace("tool: sim", "tool: claude")
    planned.write_text(text.replace("- writes a", "- writes \x00 a"))
    line = planned.read_text().splitlines().index("  - writes \x00 a") + 1
    for argv in (("status",), ("run", "--dry-run"), ("run",)):
        refused(cli(*argv), f".ai/MAESTRO.md:{line}:", "NUL")
    assert fake_clis.runs("claude") == []
    assert "Status:** pending" in planned.read_text()


@pytest.mark.parametrize("depth", [40, 500, 100_000])
def test_deeply_nested_json_is_one_line_finding_16(project, cli, depth):
    (project / "plan.json").write_text('{"goal": ' + "[" * depth + "]" * depth + ', "tasks": []}')
    refused(cli("plan", "--from", "plan.json"), "plan.json", "nested deeper than 20 levels")


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_yaml_is_one_line_with_its_line_finding_16(project, cli, depth):
    (project / "plan.yaml").write_text("goal: test\ntasks:\n- " + "[" * depth + "]" * depth)
    refused(cli("plan", "--from", "plan.yaml"), "plan.yaml:3:", "nested deeper")


LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([previous] * 9)}]\n"
    for name, previous in zip("bcdefghi", ["*a", *(f"*{c}" for c in "bcdefgh")], strict=True)
)


def test_yaml_billion_laughs_stop_at_once_in_little_memory_finding_17(project, cli):
    import time
    import tracemalloc

    text = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + LAUGHS
    (project / "plan.yaml").write_text(text + "goal: *i\ntasks: []\n")
    tracemalloc.start()
    started = time.monotonic()
    res = cli("plan", "--from", "plan.yaml")
    took = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    refused(res, "plan.yaml:", "aliases repeat more than 10,000 values")
    assert took < 1.0 and peak < 30_000_000, (took, peak)


def test_a_plan_that_shares_its_criteria_by_alias_still_loads_finding_17(project, cli):
    task = SIM_TASK.format(id=1, criterion='"writes a"').replace(
        "criteria: [", "criteria: &shared ["
    )
    second = SIM_TASK.format(id=2, criterion="").replace("criteria: []", "criteria: *shared")
    (project / "plan.yaml").write_text(f"goal: test\ntasks:\n{task}{second}")
    res = cli("plan", "--from", "plan.yaml", "--dry-run", "--json")
    assert res.code == 0, res.err


def three_tasks(project, cli):
    (project / "plan.yaml").write_text(plan_yaml('"writes a"', '"writes b"', '"writes c"'))
    assert cli("plan", "--from", "plan.yaml", "--yes").code == 0
    return project / ".ai" / "MAESTRO.md"


def test_an_unclosed_fence_that_swallows_tasks_names_its_line_finding_11(project, cli):
    path = three_tasks(project, cli)
    text = path.read_text().replace("### Task 2:", "```python\n\n### Task 2:")
    path.write_text(text)
    line = text.splitlines().index("```python") + 1
    for argv in (("status",), ("run",), ("run", "--dry-run")):
        refused(cli(*argv), f".ai/MAESTRO.md:{line}:", '"```python"', "Tasks 2, 3 would be lost")
    assert not (project / "src").exists()


def test_an_unclosed_fence_that_swallows_fields_names_its_line_finding_11(project, cli):
    path = three_tasks(project, cli)
    text = path.read_text()
    at = text.rindex("- **Criteria:**")
    path.write_text(text[:at] + "<!-- later\n" + text[at:])
    refused(cli("status"), "HTML comment", "fields of Task 3 would be lost")


def test_an_unclosed_fence_around_notes_at_the_end_still_reads_finding_11(project, cli):
    path = three_tasks(project, cli)
    path.write_text(path.read_text() + "\n## Notes\n\n```python\nprint('draft')\n")
    assert cli("status").code == 0

import io
import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from maestro.cli import main
from maestro.cli.context import Context
from maestro.paths import ProjectPaths
from maestro.state.store import PlanStore

GOOD = (Path(__file__).resolve().parents[1] / "fixtures" / "plan-inputs" / "auth.yaml").read_text()


@pytest.fixture
def plan_path(project):
    return project / ".ai" / "MAESTRO.md"


def store(project):
    return PlanStore(ProjectPaths(project))


def assert_refused(res, plan_path, *words):
    assert res.code == 1
    lines = [line for line in res.err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("maestro: error:") and "Fix:" in lines[0], (
        res.err
    )
    assert "Traceback" not in res.err + res.out
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not plan_path.exists()


def test_schema_prints_valid_json_schema(cli, project):
    res = cli("plan", "--schema")
    assert res.code == 0
    schema = json.loads(res.out)
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["tasks"]["items"]["additionalProperties"] is False
    assert set(schema["properties"]["tasks"]["items"]["properties"]) >= {
        "id",
        "title",
        "specialist",
        "agent",
        "tool",
        "depends",
        "files",
        "criteria",
        "validation",
        "risk",
    }


def test_schema_json_envelope(cli, project):
    body = json.loads(cli("plan", "--schema", "--json").out)
    assert body["ok"] and body["data"]["schema"]["title"] == "Maestro plan input"


def test_from_file_with_yes_writes_the_plan(cli, project, plan_path, monkeypatch):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-11-21T12:00:00Z")
    (project / "plan.yaml").write_text(GOOD)
    res = cli("plan", "--from", "plan.yaml", "--yes")
    assert res.code == 0, res.err
    assert "Wrote .ai/MAESTRO.md: 3 tasks" in res.out
    assert "Add the login endpoint" in res.out and "code/coder" in res.out
    plan = store(project).load()
    assert plan.goal == "Add user authentication"
    assert [t.id for t in plan.tasks] == ["1", "2", "3"]
    assert plan.tasks[2].depends == ["1", "2"]
    assert (plan.source.hub, plan.source.time) == ("claude", "2026-11-21 12:00 UTC")


def test_from_stdin_json_with_hub_flag(cli, project, plan_path):
    import yaml

    data = yaml.safe_load(GOOD)
    del data["hub"]
    res = cli("plan", "--from", "-", "--hub", "gemini", "--yes", "--json", stdin=json.dumps(data))
    assert res.code == 0, res.err
    body = json.loads(res.out)
    assert body["ok"] and body["data"]["written"] is True and body["data"]["hub"] == "gemini"
    assert body["data"]["waves"] == [["1"], ["2"], ["3"]]
    assert store(project).load().source.hub == "gemini"


def test_hub_from_setting_and_conflicting_hubs(cli, project, plan_path, monkeypatch):
    monkeypatch.setenv("MAESTRO_HUB", "codex")
    no_hub = GOOD.replace("hub: claude\n", "")
    assert cli("plan", "--from", "-", "--yes", stdin=no_hub).code == 0
    assert store(project).load().source.hub == "codex"
    res = cli("plan", "--from", "-", "--hub", "gemini", "--dry-run", stdin=GOOD)
    assert res.code == 1 and "hub: claude but --hub says gemini" in res.err


def test_dry_run_writes_nothing(cli, project, plan_path):
    res = cli("plan", "--from", "-", "--dry-run", stdin=GOOD)
    assert res.code == 0 and "Dry run" in res.out
    assert not plan_path.exists() and not (project / ".ai").exists()


def test_non_interactive_without_yes_refuses(cli, project, plan_path):
    res = cli("plan", "--from", "-", stdin=GOOD)
    assert_refused(res, plan_path, "--yes")
    assert "Add the login endpoint" in res.out  # the plan is still shown


def test_non_interactive_json_refusal_has_structured_data(cli, project, plan_path):
    res = cli("plan", "--from", "-", "--json", stdin=GOOD)
    assert res.code == 1
    body = json.loads(res.out)
    assert (
        body["ok"] is False
        and body["data"]["written"] is False
        and "--yes" in body["data"]["error"]["fix"]
    )
    assert not plan_path.exists()


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _interactive(answer):
    out, err = _Tty(), io.StringIO()
    ctx = Context(cwd=Path.cwd(), env=dict(os.environ), stdout=out, stderr=err, stdin=_Tty(answer))
    return ctx, out


def test_interactive_yes_writes(project, plan_path):
    (project / "plan.yaml").write_text(GOOD)
    ctx, out = _interactive("y\n")
    assert main(["plan", "--from", "plan.yaml"], ctx) == 0
    text = out.getvalue()
    assert text.index("Add the login endpoint") < text.index("Write .ai/MAESTRO.md? [y/N]")
    assert plan_path.exists()


def test_interactive_no_writes_nothing(project, plan_path):
    (project / "plan.yaml").write_text(GOOD)
    ctx, out = _interactive("n\n")
    assert main(["plan", "--from", "plan.yaml"], ctx) == 0
    assert "Not written" in out.getvalue() and not plan_path.exists()


@pytest.mark.parametrize(
    "text, words",
    [
        ("goal: x\ntasks:\n  - id: 1\n    title: [oops\n", ["not valid YAML", "stdin:5"]),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: coding}",
            ["task 1: specialist", "'code'"],
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, owner: me}",
            ["unknown key 'owner'"],
        ),
        (
            (
                "goal: x\ntasks:\n  - {id: 1, title: a, specialist: code, depends: [3]}\n"
                "  - {id: 2, title: b, specialist: code, depends: [1]}\n"
                "  - {id: 3, title: c, specialist: code, depends: [2]}"
            ),
            ["1 -> 3 -> 2 -> 1"],
        ),
        (
            "goal: x\ntasks:\n  - {id: 1, title: t, specialist: code, depends: [7]}",
            ["depends on 7"],
        ),
        ("", ["empty"]),
    ],
)
def test_bad_input_is_one_line_error_and_writes_nothing(cli, project, plan_path, text, words):
    assert_refused(cli("plan", "--from", "-", "--yes", stdin=text), plan_path, *words)


def test_missing_file(cli, project, plan_path):
    assert_refused(
        cli("plan", "--from", "nope.yaml", "--yes"), plan_path, "nope.yaml does not exist"
    )


def test_no_source_given(cli, project, plan_path):
    assert_refused(cli("plan", "--yes"), plan_path, "--from")


def test_path_escape_is_refused_with_findings(cli, project, plan_path, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    for bad in ("../escape.py", "/etc/passwd", "link/evil.py"):
        res = cli(
            "plan",
            "--from",
            "-",
            "--yes",
            stdin=GOOD.replace("files: [src/auth.py]", f"files: [{bad}]"),
        )
        assert_refused(res, plan_path, "AAVSR error", "Scope")
        assert "remedy: use a path inside the project" in res.out


def test_findings_in_json(cli, project, plan_path):
    risky = GOOD.replace("Add the login endpoint", "Add the login endpoint and write the docs")
    res = cli(
        "plan",
        "--from",
        "-",
        "--dry-run",
        "--json",
        stdin=risky.replace("    validation: pytest tests/test_auth.py\n  - id: 2", "  - id: 2", 1),
    )
    body = json.loads(res.out)
    assert res.code == 1 and body["ok"] is False
    findings = body["data"]["findings"]
    assert {"check": "Atomic", "task": "1", "level": "warning"}.items() <= findings[0].items()
    assert any(
        f["check"] == "Verifiable" and f["level"] == "error" and f["task"] == "1" for f in findings
    )
    assert body["data"]["errors"] == 1


def test_warnings_do_not_block(cli, project, plan_path):
    res = cli(
        "plan",
        "--from",
        "-",
        "--yes",
        stdin=GOOD.replace("Add the login endpoint", "Add login and write docs"),
    )
    assert res.code == 0 and "AAVSR: 0 errors, 1 warning" in res.out and plan_path.exists()


def test_unknown_agent_is_an_error(cli, project, plan_path):
    res = cli("plan", "--from", "-", "--yes", stdin=GOOD.replace("agent: coder", "agent: codr"))
    assert_refused(res, plan_path, "Authority")
    assert "coder" in res.out


def test_replan_keeps_run_fields_of_unchanged_tasks(cli, project, plan_path):
    assert cli("plan", "--from", "-", "--yes", stdin=GOOD).code == 0
    with store(project).edit() as plan:
        plan.tasks[0].status, plan.tasks[0].result, plan.tasks[0].attempts = (
            "done",
            "login added",
            1,
        )
        plan.tasks[0].usage.input, plan.tasks[0].cost = 1200, 0.05
        plan.tasks[1].status, plan.tasks[1].result = "failed", "tests did not run"
    changed = GOOD.replace("Test the login endpoint", "Test login and logout")
    res = cli("plan", "--from", "-", "--yes", stdin=changed)
    assert res.code == 0, res.err
    assert (
        "Kept from the current plan (same id and title): Task 1 (done), Task 3 (pending)" in res.out
    )
    assert "Results dropped (id or title changed, or the task is gone): Task 2 (failed)" in res.out
    plan = store(project).load()
    first, second = plan.tasks[0], plan.tasks[1]
    assert (first.status, first.result, first.attempts, first.usage.input, first.cost) == (
        "done",
        "login added",
        1,
        1200,
        0.05,
    )
    assert (second.status, second.result, second.title) == (
        "pending",
        None,
        "Test login and logout",
    )


def test_replan_over_broken_plan_is_refused_and_keeps_it(cli, project, plan_path):
    plan_path.parent.mkdir()
    plan_path.write_text(
        "# Maestro Orchestration\n\n## Tasks\n\n### Task 1: x\n- **Status:** weird\n"
    )
    before = plan_path.read_bytes()
    res = cli("plan", "--from", "-", "--yes", stdin=GOOD)
    assert res.code == 1 and "maestro archive" in res.err
    assert plan_path.read_bytes() == before


def test_help_has_examples(cli, project, capsys):
    assert cli("plan", "--help").code == 0
    out = capsys.readouterr().out
    assert "maestro plan --from plan.yaml --yes" in out and "--schema" in out


# The direct form: ask a CLI for the decomposition --------------------------------------


def _answer(body):
    return "Here is the plan.\n\n```json\n" + body + "\n```\n"


def test_goal_with_hub_asks_the_cli_and_checks_its_answer(cli, project, plan_path, fake_clis):
    import yaml

    data = yaml.safe_load(GOOD)
    data["goal"] = "a paraphrase"
    data["hub"] = "gemini"
    fake_clis.script("claude", [{"text": _answer(json.dumps(data))}])
    res = cli("plan", "Add user authentication", "--hub", "claude", "--yes", "--json")
    assert res.code == 0, res.err
    body = json.loads(res.out)["data"]
    assert body["written"] is True and body["hub"] == "claude" and body["asked"]["tool"] == "claude"
    plan = store(project).load()
    assert plan.goal == "Add user authentication" and plan.source.hub == "claude"
    assert plan.tasks[0].title == "Add the login endpoint"
    (call,) = fake_clis.runs("claude")
    argv = " ".join(call["argv"])
    assert "Add user authentication" in argv and '"additionalProperties": false' in argv
    assert "coder" in argv  # the agents it may name


def test_goal_answer_that_fails_the_schema_is_kept_for_fixing(cli, project, plan_path, fake_clis):
    fake_clis.script(
        "claude",
        [
            {
                "text": _answer(
                    '{"goal": "g", "tasks": [{"id": 1, "title": "t", "specialist": "coding"}]}'
                )
            }
        ],
    )
    res = cli("plan", "Add user authentication", "--hub", "claude", "--yes")
    assert_refused(
        res,
        plan_path,
        "claude's plan",
        "task 1: specialist",
        "maestro plan --from .ai/maestro/plans/",
    )
    kept = list((project / ".ai" / "maestro" / "plans").glob("*-claude.txt"))
    assert len(kept) == 1 and '"coding"' in kept[0].read_text()


def test_goal_with_cli_failure_is_one_line(cli, project, plan_path, fake_clis):
    fake_clis.script("claude", [{"http": 401}])
    res = cli("plan", "Add user authentication", "--hub", "claude", "--yes")
    assert_refused(res, plan_path, "claude could not plan the goal (auth)", "log in to claude")


def test_goal_with_missing_cli(cli, project, plan_path, fake_clis):
    fake_clis.uninstall("codex")
    assert_refused(cli("plan", "Add auth", "--hub", "codex", "--yes"), plan_path, "not installed")


def test_goal_needs_a_hub_and_excludes_from(cli, project, plan_path):
    assert_refused(cli("plan", "Add auth", "--yes"), plan_path, "--hub")
    assert_refused(cli("plan", "Add auth", "--from", "x.yaml"), plan_path, "not both")


def test_absolute_paths_inside_the_project_become_relative(cli, project, plan_path):
    res = cli(
        "plan",
        "--from",
        "-",
        "--yes",
        stdin=GOOD.replace("files: [src/auth.py]", f"files: [{project}/src/auth.py]"),
    )
    assert res.code == 0, res.err
    assert store(project).load().tasks[0].files == ["src/auth.py"]


def test_replan_is_refused_while_a_run_holds_the_lock_between_dispatches(cli, project, plan_path):
    """No task is marked running (the engine is between two dispatches), but the run lock
    is held: a new plan would be executed by the live engine, so it is refused."""
    from maestro.engine.rundir import RunLock

    assert cli("plan", "--from", "-", "--yes", stdin=GOOD).code == 0
    before = plan_path.read_bytes()
    lock = RunLock(ProjectPaths(project))
    lock.acquire("R-live")
    try:
        res = cli(
            "plan",
            "--from",
            "-",
            "--yes",
            stdin=GOOD.replace("Add the login endpoint", "Add login"),
        )
        checked = cli("plan", "--from", "-", "--dry-run", stdin=GOOD)
    finally:
        lock.release()
    assert res.code == 1 and res.err.count("\n") == 1, res.err
    assert (
        "run R-live" in res.err
        and "`maestro wait`" in res.err
        and "`maestro run --abort`" in res.err
    )
    assert plan_path.read_bytes() == before
    assert checked.code == 0  # a dry run changes nothing: checking a plan mid-run is fine
    assert (
        cli(
            "plan",
            "--from",
            "-",
            "--yes",
            stdin=GOOD.replace("Add the login endpoint", "Add login"),
        ).code
        == 0
    )


def test_first_plan_is_refused_while_a_run_holds_the_lock(cli, project, plan_path):
    from maestro.engine.rundir import RunLock

    lock = RunLock(ProjectPaths(project))
    lock.acquire("R-live")
    try:
        res = cli("plan", "--from", "-", "--yes", stdin=GOOD)
    finally:
        lock.release()
    assert res.code == 1 and "maestro run --abort" in res.err
    assert not plan_path.exists()


# Re-planning over a plan a person annotated --------------------------------------------

ANNOTATIONS = [
    ("# Maestro Orchestration\n", "# Maestro Orchestration\n\nA paragraph under the title.\n"),
    ("Add user authentication\n", "Add user authentication\n\nA paragraph under the goal.\n"),
    (
        "  - pytest tests/test_auth.py passes\n",
        "  - pytest tests/test_auth.py passes\n\nA note under task 1.\n\n#### Open questions\n\n- Which session store?\n",
    ),
    (
        "  - findings listed with severities\n",
        "  - findings listed with severities\n\nA note under task 3.\n",
    ),
    ("## Execution Log", "## My notes\n\nRemember to rotate the key.\n\n## Execution Log"),
]


def annotate(plan_path):
    text = plan_path.read_text()
    for old, new in ANNOTATIONS:
        assert old in text, old
        text = text.replace(old, new, 1)
    plan_path.write_text(text)
    return text


@pytest.fixture
def annotated(cli, project, plan_path, monkeypatch):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-11-21T12:00:00Z")
    assert cli("plan", "--from", "-", "--yes", stdin=GOOD).code == 0
    return annotate(plan_path)


def test_replan_with_identical_input_keeps_every_byte(cli, project, plan_path, annotated):
    res = cli("plan", "--from", "-", "--yes", stdin=GOOD)
    assert res.code == 0, res.err
    assert plan_path.read_text() == annotated
    assert "Notes the new plan has no place for" not in res.out
    assert not (project / ".ai" / "archive").exists()  # nothing dropped, nothing to save


def test_replan_keeps_notes_with_their_task_id_and_the_persons_sections(
    cli, project, plan_path, annotated
):
    changed = GOOD.replace("Add the login endpoint", "Add the login and logout endpoints")
    res = cli("plan", "--from", "-", "--yes", stdin=changed)
    assert res.code == 0, res.err
    text = plan_path.read_text()
    for _, added in ANNOTATIONS:
        assert (
            added.replace("Add the login endpoint", "Add the login and logout endpoints") in text
        ), added
    assert "### Task 1: Add the login and logout endpoints\n" in text
    plan = store(project).load()
    assert plan.goal == "Add user authentication\n\nA paragraph under the goal."
    assert plan.tasks[0].title == "Add the login and logout endpoints"


def test_replan_lists_and_saves_the_notes_of_a_dropped_task(
    cli, project, plan_path, annotated, monkeypatch
):
    monkeypatch.setenv("MAESTRO_FAKE_NOW", "2026-11-21T12:05:00Z")
    import yaml

    data = yaml.safe_load(GOOD)
    data["tasks"] = [t for t in data["tasks"] if t["id"] != 3]
    res = cli("plan", "--from", "-", "--yes", stdin=json.dumps(data))
    assert res.code == 0, res.err
    assert (
        "Notes the new plan has no place for (saved with the current plan under .ai/archive/):\n"
        in res.out
    )
    assert "  Task 3: Review the login endpoint:\n    A note under task 3.\n" in res.out
    assert "saved in .ai/archive/20261121T120500Z/MAESTRO.md" in res.out
    assert (project / ".ai/archive/20261121T120500Z/MAESTRO.md").read_text() == annotated
    text = plan_path.read_text()
    assert "Task 3" not in text and "A note under task 3." not in text
    assert (
        "A note under task 1.\n\n#### Open questions\n" in text
        and "Remember to rotate the key." in text
    )
    body = json.loads(cli("plan", "--from", "-", "--dry-run", "--json", stdin=GOOD).out)["data"]
    assert body["notes"] == [] and body["saved"] is None


def test_replan_with_a_new_goal_lists_and_saves_the_paragraph_under_the_old_one(
    cli, project, plan_path, annotated
):
    from maestro.state.model import Challenge

    with store(project).edit() as plan:
        plan.challenges.append(Challenge("1", "codex", "2026-11-21T12:00:00Z"))
    annotated = plan_path.read_text()
    res = cli(
        "plan",
        "--from",
        "-",
        "--yes",
        "--json",
        stdin=GOOD.replace("goal: Add user authentication", "goal: Add OAuth login"),
    )
    assert res.code == 0, res.err
    body = json.loads(res.out)["data"]
    assert [(n["where"], n["text"]) for n in body["notes"]] == [
        ("Goal", "A paragraph under the goal.")
    ]
    assert body["lost"] == ["1 challenge (the goal changed)"]
    assert (project / body["saved"]).read_text() == annotated
    text = plan_path.read_text()
    assert "## Challenges" not in text  # emptied, and it held nothing of the person's
    assert "## Goal\n\nAdd OAuth login\n\n## Tasks" in text
    assert (
        "A paragraph under the title." in text
        and "A note under task 1." in text
        and "## My notes" in text
    )


def test_replan_dry_run_lists_what_it_would_drop_and_saves_nothing(
    cli, project, plan_path, annotated
):
    res = cli("plan", "--from", "-", "--dry-run", stdin=GOOD.replace("  - id: 3", "  - id: 4"))
    assert res.code == 0, res.err
    assert "  Task 3: Review the login endpoint:\n    A note under task 3.\n" in res.out
    assert plan_path.read_text() == annotated and not (project / ".ai" / "archive").exists()


def test_a_plan_asked_of_a_cli_is_a_session_and_a_dry_run_leaves_none(
    cli, project, plan_path, fake_clis
):
    import yaml

    fake_clis.script("claude", [{"text": _answer(json.dumps(yaml.safe_load(GOOD)))}] * 2)
    assert cli("plan", "Add user authentication", "--hub", "claude", "--dry-run").code == 0
    assert not (project / ".ai" / "maestro" / "sessions").exists()
    assert cli("plan", "Add user authentication", "--hub", "claude", "--yes").code == 0
    listed = json.loads(cli("session", "list", "--json").out)["data"]["sessions"]
    (session,) = [s for s in listed if s["id"].startswith("plan-")]
    call = fake_clis.runs("claude")[-1]
    assert (session["mode"], session["status"], session["cli"]) == ("worker", "completed", "claude")
    assert call["env"]["MAESTRO_SESSION_ID"] == session["id"]
    assert session["directive"]["message"] == "Add user authentication"

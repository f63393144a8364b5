"""Untrusted text from a spoke (its answer, its session id) is stored cleaned, never fails a task."""

from tests.engine.runkit import answer, plan, step, task, write_plan


def test_colour_codes_in_a_summary_are_stored_cleaned_finding_9(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    colours = answer(summary="\x1b[32m3 passed\x1b[0m in 0.1s")
    runenv.script("claude", [step(text=colours)])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "done" and t.usage.total > 0
    assert t.result == "3 passed in 0.1s"


def test_a_session_id_with_a_newline_never_fails_a_task_finding_9(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    runenv.script("claude", [step(session_id="abc\ndef")])
    res = cli("run")
    assert res.code == 0, res.out + res.err
    t = plan(project).task("1")
    assert t.status == "done" and t.usage.total > 0


def test_colour_codes_in_validation_output_are_stored_cleaned_finding_9(cli, project, runenv):
    check = "printf '\\033[31m1 failed\\033[0m\\r\\n'; exit 1"
    write_plan(cli, project, [task(1, tool="claude", validation=check)])
    runenv.default("claude", step())
    res = cli("run")
    assert "control characters" not in res.out
    t = plan(project).task("1")
    assert t.status in ("failed", "blocked") and t.usage.total > 0
    assert "exited 1: 1 failed" in t.result

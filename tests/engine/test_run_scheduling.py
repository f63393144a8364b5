"""Concurrency bound, file ownership, stagger and budgets, against fake CLIs."""

import time

from tests.engine.runkit import events, plan, step, task, write_plan


def independent(n, **fields):
    return [
        task(i, files=[f"src/m{i}.py"], validation=f"test -f src/m{i}.py", **fields)
        for i in range(1, n + 1)
    ]


def test_never_more_than_max_concurrent_at_once(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "2")
    write_plan(cli, project, independent(6))
    runenv.default("codex", step("src/m{task}.py", sleep=0.4))
    assert cli("run").code == 0
    spans = runenv.intervals("codex")
    assert len(spans) == 6
    assert runenv.most_at_once(spans) == 2  # the bound is reached, never passed


def test_tasks_owning_the_same_file_never_run_together(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "3")
    research = {"specialist": "research", "agent": "technical-writer", "validation": None}
    shared = [
        task(1, files=["src/app.py"], **research),
        task(2, title="Write the second greeting", files=["src/"], **research),
        task(3, files=["docs/x.md"], **research),
    ]
    write_plan(cli, project, shared)
    runenv.default("gemini", step("", sleep=0.5))
    assert cli("run").code == 0
    calls = {c["env"]["MAESTRO_TASK_ID"]: c for c in runenv.runs("gemini")}
    spans = dict(zip(sorted(calls, key=lambda t: calls[t]["time"]), runenv.intervals("gemini")))
    one, two = spans["1"], spans["2"]
    assert one[1] <= two[0] or two[1] <= one[0]  # 1 and 2 both own src/app.py
    three = spans["3"]
    assert three[0] < max(one[1], two[1]) and min(one[0], two[0]) < three[1]  # 3 ran alongside


def test_eager_start_does_not_wait_for_the_wave(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "3")
    research = {"specialist": "research", "agent": "technical-writer", "validation": None}
    tasks = [
        task(1, files=["src/slow.py"], **research),
        task(2, files=["src/fast.py"], **research),
        task(3, files=["src/next.py"], depends=[2], **research),
    ]
    write_plan(cli, project, tasks)
    runenv.default("gemini", step("", sleep_for_task={"1": 1.5, "2": 0.1, "3": 0.1}))
    assert cli("run").code == 0
    start = {c["env"]["MAESTRO_TASK_ID"]: c["time"] for c in runenv.runs("gemini")}
    spans = dict(zip(sorted(start, key=start.get), runenv.intervals("gemini")))
    assert spans["1"][1] - spans["1"][0] > 1.4  # task 1 was the slow one
    assert spans["3"][0] < spans["1"][1]  # task 3 started while task 1 still ran


def test_the_stagger_spreads_a_burst_of_one_cli_and_holds_nothing_else(
    cli, project, runenv, monkeypatch
):
    # A stagger of a minute that no spoke waits out: a spoke of a CLI waits while another
    # of that CLI, started less than a minute ago, runs, and not a moment after it ends.
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "4")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "60")
    research = {"specialist": "research", "agent": "technical-writer", "validation": None}
    tasks = [task(i, files=[f"notes/{i}.md"], tool="codex", **research) for i in (1, 2, 3)]
    tasks.append(task(4, files=["notes/4.md"], tool="gemini", **research))
    write_plan(cli, project, tasks)
    runenv.default("codex", step("", sleep=0.3))
    runenv.default("gemini", step("", sleep=0.3))
    started = time.monotonic()
    assert cli("run").code == 0
    assert time.monotonic() - started < 30  # nobody waited the minute out
    codex = runenv.intervals("codex")
    assert len(codex) == 3 and runenv.most_at_once(codex) == 1  # the burst, one at a time
    assert runenv.most_at_once(runenv.intervals("codex", "gemini")) == 2  # gemini alongside


def test_a_chain_is_not_held_by_the_stagger(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "60")
    research = {"specialist": "research", "agent": "technical-writer", "validation": None}
    tasks = [
        task(i, files=[f"notes/{i}.md"], tool="codex", depends=[i - 1] if i > 1 else [], **research)
        for i in (1, 2, 3)
    ]
    write_plan(cli, project, tasks)
    runenv.default("codex", step(""))
    started = time.monotonic()
    assert cli("run").code == 0
    assert time.monotonic() - started < 30  # each spoke starts once its dependency's has ended
    order = [c["env"]["MAESTRO_TASK_ID"] for c in runenv.runs("codex")]
    assert order == ["1", "2", "3"]


def test_run_budget_refuses_the_next_dispatch(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(cli, project, independent(3))
    runenv.script("codex", [step(f"src/m{i}.py") for i in range(1, 4)])  # 1,200 tokens each
    res = cli("run", "--budget-tokens", "2000")
    assert res.code == 2
    assert "run token budget reached: 2,400 of 2,000 tokens used" in res.out
    p = plan(project)
    assert [t.status for t in p.tasks] == ["done", "done", "pending"]
    assert len(runenv.runs("codex")) == 2
    assert events(project)[-1]["status"] == "stopped"


def test_run_budget_also_stops_retries(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    # A failed attempt's tokens count: the retry would be the next dispatch, over budget.
    runenv.script("codex", [step(text="not a result", usage=(5000, 0)), step()])
    assert cli("run", "--budget-tokens", "4000").code == 2
    t = plan(project).task("1")
    assert t.status == "pending" and t.attempts == 1 and t.usage.input == 5000
    assert any(e["kind"] == "task_pending" for e in events(project))


def test_yellow_level_is_an_event_and_a_log_note(cli, project, runenv):
    write_plan(cli, project, [task(1)])
    runenv.script("codex", [step(usage=(46_000, 500))])
    assert cli("run", "--log", "summary").code == 0
    budget = next(e for e in events(project) if e["kind"] == "budget")
    assert budget["level"] == "yellow" and budget["tokens"] == 46_500
    assert "⚠️ yellow (46,500 > 45,000)" in (project / ".ai" / "MAESTRO-LOG.md").read_text()


def test_streaming_dispatch_is_stopped_over_its_abort_threshold(cli, project, runenv):
    write_plan(cli, project, [task(1, tool="claude")])
    (project / ".ai" / "maestro.toml").write_text("[budgets.claude]\nbudget = 1000\nabort = 2500\n")
    stream = {"events": 40, "interval": 0.1, "input": 1000, "output": 100}
    runenv.script("claude", [step(stream=stream)])
    started = time.monotonic()
    res = cli("run", "--log", "summary")
    elapsed = time.monotonic() - started
    assert res.code == 2
    assert elapsed < 3.0  # 40 events x 0.1 s would take 4 s; it was stopped after a few
    call = runenv.runs("claude")[0]
    assert "stream-json" in call["argv"]
    t = plan(project).task("1")
    assert t.status == "blocked" and t.result.startswith("needs decomposition")
    assert "abort threshold of 2,500 tokens" in t.result
    assert t.usage.total > 2500
    assert any(e["kind"] == "budget" and e["level"] == "red" for e in events(project))
    assert "🛑 red" in (project / ".ai" / "MAESTRO-LOG.md").read_text()


def test_a_recursive_glob_owns_what_it_covers_and_never_runs_beside_it_finding_12(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "3")
    write_plan(
        cli,
        project,
        [
            task(1, files=["src/**/*.py"], validation="test -f src/a.py"),
            task(2, files=["src/a.py"], validation="test -f src/a.py"),
        ],
    )
    runenv.default("codex", step("src/a.py", sleep=0.4))
    res = cli("run")
    assert res.code == 0, res.out + res.err
    assert [t.status for t in plan(project).tasks] == ["done", "done"]
    assert runenv.most_at_once(runenv.intervals("codex")) == 1

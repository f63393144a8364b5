"""Budget caps in dollars and tokens, against fake CLIs that report their usage: asked at
80%, paused at 100%, continued after the cap is raised; a day cap across runs; a model
with no price named; a bad price table refused before any dispatch."""

from __future__ import annotations

import time

from maestro.config import load_settings
from maestro.engine.needs import waiting
from maestro.state.store import PlanStore
from tests.engine.runkit import events, plan, step, task, write_plan


def independent(n, **fields):
    return [
        task(i, files=[f"src/m{i}.py"], validation=f"test -f src/m{i}.py", **fields)
        for i in range(1, n + 1)
    ]


def costing(runenv, cli, n, dollars):
    runenv.script(cli, [step(f"src/m{i}.py", cost=dollars) for i in range(1, n + 1)])


def test_a_dollar_cap_asks_at_80_pauses_at_100_and_goes_on_once_raised(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(cli, project, independent(4, tool="claude"))
    costing(runenv, "claude", 4, 0.40)
    res = cli("run", "--budget-usd", "1")
    assert res.code == 2
    # Claude Code's own figure, taken at its word: no ~ (estimated) mark.
    line = (
        "run dollar budget reached: $1.20 of $1.00 used; remaining tasks stay pending. "
        "To continue: run `maestro run --budget-usd N` with a higher N."
    )
    assert line in res.out
    seen = events(project)
    asked = [e for e in seen if e["kind"] == "decision"]
    assert len(asked) == 1 and asked[0]["status"] == "cap"
    assert asked[0]["reason"].startswith("run dollar budget at 80%: $0.80 of $1.00 used.")
    assert [o["label"] for o in asked[0]["options"]] == [
        "Raise the cap",
        "Go on (the run pauses at 100%)",
        "Stop now",
    ]
    # The run went on after the question: Task 3 started after it was asked.
    order = [e["kind"] + ":" + str(e.get("task")) for e in seen]
    assert order.index("decision:None") < order.index("task_started:3")
    assert [t.status for t in plan(project).tasks] == ["done", "done", "done", "pending"]
    assert len(runenv.runs("claude")) == 3
    assert seen[-1]["status"] == "stopped"
    paths = load_settings(project).paths
    (need,) = waiting(paths, PlanStore(paths).view())
    assert need.headline == "Dollar budget reached: the run" and need.asked == line
    shown = cli("status").out
    assert "claude 3,600 tokens, $1.20" in shown
    assert "Caps: run dollar cap: $1.20 of $1.00 (120%, reached)" in shown

    runenv.script("claude", [step("src/m4.py", cost=0.40)])
    again = cli("run", "--budget-usd", "5")
    assert again.code == 0, again.out + again.err
    assert [t.status for t in plan(project).tasks] == ["done"] * 4
    assert len(runenv.runs("claude")) == 4  # Task 4 alone: no done task ran twice


def test_a_day_cap_holds_across_two_runs(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    monkeypatch.setenv("MAESTRO_BUDGET_USD_DAY", "1.00")
    write_plan(cli, project, independent(3, tool="claude"))
    runenv.script("claude", [step("src/m1.py", cost=0.60)])
    assert cli("run", "1").code == 0
    runenv.script("claude", [step(f"src/m{i}.py", cost=0.60) for i in (2, 3)])
    res = cli("run")
    assert res.code == 2
    assert "day dollar budget reached: $1.20 of $1.00 used" in res.out
    assert "raise MAESTRO_BUDGET_USD_DAY in your environment, then run `maestro run`" in res.out
    assert [t.status for t in plan(project).tasks] == ["done", "done", "pending"]
    # The next run starts nothing: the day's spend is over the cap before any dispatch.
    assert cli("run").code == 2
    assert len(runenv.runs("claude")) == 2


def test_a_token_cap_for_a_subscription_pauses_the_same_way(cli, project, runenv, monkeypatch):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    monkeypatch.setenv("MAESTRO_BUDGET_TOKENS_TASK", "1000")
    write_plan(cli, project, [task(1)])
    # A failed attempt's tokens count for its task: the retry would pass the task's cap.
    runenv.script("codex", [step(text="not a result", usage=(1500, 0)), step()])
    res = cli("run")
    assert res.code == 2
    assert "Task 1 token budget reached: 1,500 of 1,000 tokens used" in res.out
    assert plan(project).task("1").status == "pending" and len(runenv.runs("codex")) == 1
    shown = cli("status").out  # no dollar cap: the dollars are what the API would charge
    assert "Caps: Task 1 token cap: 1,500 of 1,000 tokens (150%, reached)" in shown
    assert (
        "codex 1,500 tokens, $0.00 + unknown (codex's default model (it named none) unpriced) at API prices"
        in shown
    )
    assert cli("report", "--output", "r.md").code == 0
    report = (project / "r.md").read_text()
    assert "- Task 1 token cap: 1,500 of 1,000 tokens (150%, reached); to raise it: raise" in report
    assert "No price for codex's default model (it named none): its dollars are unknown." in report
    assert "Dollars are at API prices: your caps are in tokens (a subscription)." in report


def test_a_model_with_no_price_is_named_before_a_dollar_capped_run_starts(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_DEFAULT_MODEL", "gpt-9-turbo")
    write_plan(cli, project, [task(1, tool="codex")])
    res = cli("run", "--budget-usd", "5")
    assert res.code == 1 and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert "its model gpt-9-turbo (codex) has no price in maestro/data/prices.toml" in res.err
    assert runenv.runs("codex") == []
    # Without a dollar cap it runs, and the figure is unknown, with the model named.
    runenv.script("codex", [step()])
    assert cli("run").code == 0
    (spent,) = [e for e in events(project) if e["kind"] == "spend"]
    assert spent["unpriced"] == "gpt-9-turbo" and "cost" not in spent


def test_a_model_the_cli_picks_unpriced_pauses_a_dollar_capped_run(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "1")
    write_plan(cli, project, independent(2, tool="gemini"))
    # Gemini CLI ran another model than it was given (a fallback on quota), named in its stats.
    picked = "gemini-9-ultra"
    runenv.script("gemini", [step("src/m1.py", model=picked), step("src/m2.py", model=picked)])
    res = cli("run", "--budget-usd", "5")
    assert res.code == 2
    assert "run dollar budget cannot be kept: gemini-9-ultra has no price" in res.out
    assert [t.status for t in plan(project).tasks] == ["done", "pending"]


def test_a_hand_edited_price_table_with_a_bad_value_is_one_line_before_any_dispatch(
    cli, project, runenv
):
    write_plan(cli, project, [task(1, tool="codex")])
    (project / "prices.toml").write_text(
        'format_version = 1\n[[price]]\nmodel = "gpt-5*"\ninput = "1.25"\noutput = 10\n'
        'date = 2026-11-22\nsource = "https://openai.com/api/pricing/"\n'
    )
    (project / ".ai" / "maestro.toml").write_text('price_table = "prices.toml"\n')
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert "prices.toml, price 1 (model \"gpt-5*\"): input = '1.25' is not a price" in res.err
    assert runenv.runs("codex") == []


def test_a_negative_cap_is_one_line(cli, project, monkeypatch):
    write_plan(cli, project, [task(1)])
    monkeypatch.setenv("MAESTRO_BUDGET_USD_RUN", "-2")
    res = cli("run")
    assert res.code == 1 and res.err.count("\n") == 1 and "MAESTRO_BUDGET_USD_RUN" in res.err
    monkeypatch.delenv("MAESTRO_BUDGET_USD_RUN")
    res = cli("run", "--budget-usd", "-2")
    assert res.code == 1 and "Traceback" not in res.err


def test_a_hard_cap_stops_running_spokes_at_once_and_their_tasks_wait(
    cli, project, runenv, monkeypatch
):
    monkeypatch.setenv("MAESTRO_MAX_CONCURRENT", "2")
    monkeypatch.setenv("MAESTRO_STAGGER_DELAY", "0.5")  # one spoke starts, then the other
    monkeypatch.setenv("MAESTRO_BUDGET_HARD", "1")
    write_plan(cli, project, independent(3, tool="claude"))
    runenv.script(
        "claude",
        [step("src/m{task}.py", cost=1.0, sleep=1), step("src/m{task}.py", cost=0.1, sleep=20)],
    )
    started = time.monotonic()
    res = cli("run", "--budget-usd", "0.5")
    assert time.monotonic() - started < 15  # Task 2's 20 s were cut short
    assert res.code == 2 and "run dollar budget reached: $1.00 of $0.50 used" in res.out
    # Whichever of Tasks 1 and 2 took the first step is done; the other was stopped.
    statuses = [t.status for t in plan(project).tasks]
    assert sorted(statuses[:2]) == ["done", "pending"] and statuses[2] == "pending"


def test_a_dollar_cap_over_codexs_unnamed_default_model_is_refused_before_the_run(
    cli, project, runenv
):
    write_plan(cli, project, [task(1, tool="codex")])
    res = cli("run", "--budget-usd", "5")
    assert res.code == 1 and res.err.count("\n") == 1
    assert "codex would run its own default model, which its answer never names" in res.err
    assert "--budget-tokens" in res.err
    assert runenv.runs("codex") == []

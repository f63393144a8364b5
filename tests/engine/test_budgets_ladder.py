from types import SimpleNamespace

import pytest

from maestro.engine import ladder
from maestro.engine.budgets import Limits, default_limits, limits_for
from maestro.engine.caps import Cap, RunBudget
from maestro.errors import ConfigError


def test_default_levels_follow_the_notes():
    gemini = limits_for("gemini", {})
    assert gemini == Limits(30_000, 35_000, 50_000)
    assert [gemini.level(n) for n in (30_000, 30_001, 35_001, 50_001)] == [
        "ok",
        "over",
        "yellow",
        "red",
    ]
    assert limits_for("codex", {}) == Limits(40_000, 45_000, 60_000)
    assert limits_for("claude", {}) == default_limits("claude") == Limits(55_000, 65_000, 80_000)


def test_config_overrides_and_keeps_yellow_in_proportion():
    limits = limits_for("gemini", {"gemini": {"budget": 10_000, "abort": 20_000}})
    assert limits.budget == 10_000 and limits.abort == 20_000 and 10_000 < limits.yellow < 20_000
    assert limits_for("codex", {"codex": {"yellow": 50_000}}).yellow == 50_000


@pytest.mark.parametrize(
    "table",
    [{"budget": "lots"}, {"budget": 0}, {"ceiling": 5}, {"budget": 70_000, "abort": 60_000}],
)
def test_bad_budget_tables_are_config_errors(table):
    with pytest.raises(ConfigError) as info:
        limits_for("codex", {"codex": table})
    assert info.value.fix


def test_run_budget_refuses_once_reached():
    budget = RunBudget([Cap("run", "tokens", 1000, "")])
    assert budget.refusal() is None
    budget.add({"task": "1", "tool": "codex", "tokens": 999})
    assert budget.refusal() is None
    budget.add({"task": "1", "tool": "codex", "tokens": 1})
    assert "1,000 of 1,000" in budget.refusal()
    assert RunBudget([]).refusal() is None


def result(kind=None, success=False, transient=False, **kw):
    return SimpleNamespace(
        success=success,
        error_kind=kind,
        error=kw.get("error", "x"),
        transient=transient,
        aborted_over_budget=kw.get("aborted", False),
    )


@pytest.mark.parametrize("kind", ["auth", "bad_flag", "untrusted_folder"])
def test_fatal_kinds_fail_at_once_with_a_fix(kind):
    failure = ladder.spoke_failure(result(kind), "gemini")
    assert failure.kind == ladder.FATAL and "gemini" in failure.fix
    step = ladder.next_step(failure, attempts=1, max_retries=3, transient_retries=0, backoff_s=1)
    assert step.action == "fail"


def test_an_untrusted_folder_fix_names_the_clis_own_way_to_trust_it():
    gemini = ladder.spoke_failure(result("untrusted_folder"), "gemini").fix
    codex = ladder.spoke_failure(result("untrusted_folder"), "codex").fix
    assert "trust this folder in gemini (or set GEMINI_CLI_TRUST_WORKSPACE=true)" in gemini
    assert codex == "trust this folder in codex, then `maestro run` again."


def test_transient_retries_with_exponential_backoff_then_fails():
    failure = ladder.spoke_failure(result("rate_limit", transient=True), "codex")
    assert failure.kind == ladder.TRANSIENT
    delays = [
        ladder.next_step(
            failure, attempts=a, max_retries=3, transient_retries=a - 1, backoff_s=2
        ).delay_s
        for a in (1, 2, 3)
    ]
    assert delays == [2, 4, 8]
    assert (
        ladder.next_step(
            failure, attempts=4, max_retries=3, transient_retries=3, backoff_s=2
        ).action
        == "fail"
    )


def test_gate_failure_expands_context_then_needs_decomposition():
    failure = ladder.Failure(ladder.GATE, "criteria unmet", context="more")
    assert (
        ladder.next_step(
            failure, attempts=1, max_retries=1, transient_retries=0, backoff_s=0
        ).action
        == "retry_with_context"
    )
    step = ladder.next_step(failure, attempts=2, max_retries=1, transient_retries=0, backoff_s=0)
    assert step.action == "block" and step.reason.startswith("needs decomposition")


def test_scope_never_retries_and_over_budget_blocks():
    scope = ladder.Failure(ladder.SCOPE, "edited README.md")
    assert (
        ladder.next_step(scope, attempts=1, max_retries=5, transient_retries=0, backoff_s=0).action
        == "fail"
    )
    over = ladder.spoke_failure(result("over_budget", aborted=True), "claude")
    assert (
        ladder.next_step(over, attempts=1, max_retries=5, transient_retries=0, backoff_s=0).action
        == "block"
    )


def test_turn_limit_and_unknown_errors_retry_with_context():
    for kind in ("turn_limit", "other"):
        failure = ladder.spoke_failure(result(kind), "claude")
        assert failure.kind == ladder.GATE and failure.context


def test_decision_options_are_the_notes_four():
    options = ladder.decision_options("3", ["codex", "sim", "claude", "gemini"])
    assert [o["option"] for o in options] == ["1", "2", "3", "4"]
    assert "maestro run 3 --clarify" in options[0]["command"] and "--abort" in options[3]["command"]
    assert "--tool <claude|gemini|codex>" in options[1]["command"]  # the roster's CLIs


def test_a_reassignment_names_only_the_clis_installed_here():
    assert ladder.decision_options("3", ["codex", "sim"])[1]["command"] == (
        "maestro run 3 --tool codex [--agent <name>]"
    )
    (_, alone, _, _) = ladder.decision_options("3", ["sim"])
    assert alone["command"] == "maestro run 3 [--agent <name>]" and "CLI" not in alone["label"]
    assert "gemini" not in ladder.decision_text(ladder.decision_options("3", ["claude", "codex"]))

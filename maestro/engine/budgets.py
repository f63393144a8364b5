"""Token budgets per dispatch and per run.

Per CLI, three thresholds on the tokens one dispatch used (input + output; cached input
is reported apart and not counted, it is what the CLI did not have to send again):

- ``budget``: above it the dispatch is *over budget* (logged);
- ``yellow``: above it the anomaly level is yellow (investigate; logged as a warning);
- ``abort``: above it the level is red. Claude streams its usage (stream-json), so the
  spoke stops a claude dispatch when it crosses this line; codex and gemini report usage
  only in their last event, so theirs is caught when the dispatch ends.

Defaults for gemini (30k/35k/50k) and codex (40k/45k/60k) are the design notes' figures.
claude: 55k/65k/80k. Every headless Claude Code session first writes its own system
prompt and tool schemas (about 15-20k tokens) to the prompt cache, billed as input, so the
same task costs Claude roughly that much more than Codex; the codex figures plus that
overhead keep the two comparable. ``sim`` uses the claude figures so a demo shows real
arithmetic. Override per CLI in the config: ``[budgets.gemini] budget = 20000, abort =
40000`` (``yellow`` too; when only ``budget`` and ``abort`` are given, yellow stays between
them at the notes' proportion).

The caps on what a run, a task or a day may spend (``maestro run --budget-tokens N``,
``--budget-usd N`` and the ``budget_*`` settings) are engine/caps.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from maestro import roster
from maestro.errors import ConfigError


@dataclass(frozen=True)
class Limits:
    budget: int
    yellow: int
    abort: int

    def level(self, tokens: int) -> str:
        """ok, over, yellow or red."""
        if tokens > self.abort:
            return "red"
        if tokens > self.yellow:
            return "yellow"
        if tokens > self.budget:
            return "over"
        return "ok"


def default_limits(cli: str) -> Limits:
    """The roster's thresholds for ``cli`` (an unknown name gets the roster's default)."""
    facts = roster.get(cli) or roster.Cli(cli, cli, cli)
    return Limits(*facts.budget)


def _int(table: Mapping[str, Any], key: str, cli: str) -> int | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(
            f"[budgets.{cli}] {key} = {value!r} is not a positive whole number of tokens.",
            f"write it as e.g. `{key} = 40000`, or remove it to use the default.",
        )
    return value


def limits_for(cli: str, budgets_table: Mapping[str, Any]) -> Limits:
    """The thresholds for ``cli``, defaults overridden by ``[budgets.<cli>]``."""
    base = default_limits(cli)
    table = budgets_table.get(cli, {})
    if not isinstance(table, Mapping):
        raise ConfigError(
            f"[budgets.{cli}] must be a table.",
            f"write it as [budgets.{cli}] with budget/yellow/abort.",
        )
    unknown = sorted(set(table) - {"budget", "yellow", "abort"})
    if unknown:
        raise ConfigError(
            f"unknown key {unknown[0]!r} in [budgets.{cli}].", "use budget, yellow and abort."
        )
    budget = _int(table, "budget", cli) or base.budget
    abort = _int(table, "abort", cli) or base.abort
    yellow = _int(table, "yellow", cli)
    if yellow is None:
        # Keep the default's position between budget and abort.
        share = (base.yellow - base.budget) / (base.abort - base.budget)
        yellow = round(budget + share * (abort - budget)) if abort > budget else abort
    if not budget <= yellow <= abort:
        raise ConfigError(
            f"[budgets.{cli}] needs budget <= yellow <= abort (got {budget}, {yellow}, {abort}).",
            "raise abort or lower budget.",
        )
    return Limits(budget, yellow, abort)

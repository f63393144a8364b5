"""Estimated dollars for a dispatch whose CLI reports no cost (Gemini, Codex).

Prices are dollars per million tokens: fresh input, output, and cached input. The table
(each CLI's ``prices`` in ``maestro.roster``) holds the vendors' list prices for the current model families, matched by pattern, most
specific pattern first. A project overrides or adds models in ``.ai/maestro.toml``::

    [prices."gpt-5.5"]          # a model name, or a pattern such as "gemini-3*-flash*"
    input = 1.25
    output = 10.0
    cached = 0.125              # optional: defaults to the input price

A model found nowhere is priced at its CLI's fallback (``fallback_price`` in the roster), so an estimate is
always there and always labelled an estimate. Claude reports its own cost; its rows price
only results that lack one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from math import inf
from typing import Any

from maestro import roster
from maestro.errors import ConfigError
from maestro.state.model import Usage


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached: float
    source: str = "default"  # default | config | fallback

    def cost(self, usage: Usage) -> float:
        return (
            usage.input * self.input + usage.output * self.output + usage.cached * self.cached
        ) / 1_000_000


def normalise(model: str) -> str:
    """'claude-opus-4-8[1m]' -> 'claude-opus-4-8'; 'models/gemini-2.5-pro' -> 'gemini-2.5-pro'."""
    name = model.strip().lower()
    name = re.sub(r"\[[^\]]*\]$", "", name)
    return name.removeprefix("models/")


def _specificity(pattern: str) -> tuple[int, int]:
    literal = len(pattern.replace("*", "").replace("?", ""))
    return (0 if any(c in pattern for c in "*?[") else 1, literal)


def config_prices(settings: Any) -> dict[str, Price]:
    """The ``[prices.<model>]`` tables of the settings (a bad one raises ConfigError)."""
    table = settings.table("prices") if settings is not None else {}
    source = getattr(settings, "config_file", None) or "maestro.toml"
    prices: dict[str, Price] = {}
    for model, entry in table.items():
        where = f'[prices."{model}"] in {source}'
        if not isinstance(entry, dict):
            raise ConfigError(
                f"{where} must be a table of prices.",
                "write input = N, output = N (dollars per million tokens).",
            )
        values: dict[str, float] = {}
        for key in ("input", "output", "cached"):
            raw = entry.get(key)
            if raw is None and key == "cached":
                raw = values.get("input")
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw < inf:
                raise ConfigError(
                    f"{where}: {key} = {raw!r} is not a price.",
                    f"set {key} to a number of dollars per million tokens (0 or more).",
                )
            values[key] = float(raw)
        unknown = sorted(set(entry) - {"input", "output", "cached"})
        if unknown:
            raise ConfigError(
                f"{where}: unknown key {unknown[0]!r}.", "use input, output and cached."
            )
        prices[normalise(model)] = Price(
            values["input"], values["output"], values["cached"], "config"
        )
    return prices


def price_for(model: str | None, settings: Any = None, *, tool: str | None = None) -> Price | None:
    """The price of ``model``: the project's table, then the built-in one, then the
    CLI's fallback; None only for an unknown model with no CLI named."""
    if model:
        name = normalise(model)
        configured = config_prices(settings)
        if name in configured:
            return configured[name]
        for pattern in sorted(configured, key=_specificity, reverse=True):
            if fnmatchcase(name, pattern):
                return configured[pattern]
        rows = [row for cli in roster.CLIS.values() for row in cli.prices]
        for pattern, inp, out, cached in sorted(
            rows, key=lambda row: _specificity(row[0]), reverse=True
        ):
            if fnmatchcase(name, pattern):
                return Price(inp, out, cached)
    cli = roster.get(tool)
    if cli is not None and cli.fallback_price is not None:
        return Price(*cli.fallback_price, source="fallback")
    return None


def estimate_cost(
    model: str | None, usage: Usage, settings: Any = None, *, tool: str | None = None
) -> float | None:
    """Estimated dollars for ``usage`` on ``model`` (None: nothing to price it by)."""
    price = price_for(model, settings, tool=tool)
    if price is None:
        return None
    return round(price.cost(usage), 6)

"""Estimated dollars for a dispatch whose CLI reports no cost (Gemini, Codex).

Prices are dollars per million tokens: fresh input, output, and cached input. The table
holds the vendors' list prices for the current model families, matched by pattern, most
specific pattern first. A project overrides or adds models in ``.ai/maestro.toml``::

    [prices."gpt-5.5"]          # a model name, or a pattern such as "gemini-3*-flash*"
    input = 1.25
    output = 10.0
    cached = 0.125              # optional: defaults to the input price

A model found nowhere is priced at its CLI's fallback (``FALLBACK``), so an estimate is
always there and always labelled an estimate. Claude reports its own cost; its rows price
only results that lack one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from maestro.errors import ConfigError
from maestro.state.model import Usage


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached: float
    source: str = "default"  # default | config | fallback

    def cost(self, usage: Usage) -> float:
        return (usage.input * self.input + usage.output * self.output + usage.cached * self.cached) / 1_000_000


# (pattern, input, output, cached input), list prices per million tokens.
DEFAULT_PRICES: tuple[tuple[str, float, float, float], ...] = (
    # Anthropic
    ("claude-opus-4-1*", 15.0, 75.0, 1.50),
    ("claude-opus-4-2025*", 15.0, 75.0, 1.50),
    ("claude-opus-*", 5.0, 25.0, 0.50),
    ("opus", 5.0, 25.0, 0.50),
    ("claude-sonnet-*", 3.0, 15.0, 0.30),
    ("sonnet", 3.0, 15.0, 0.30),
    ("claude-3-5-haiku*", 0.80, 4.0, 0.08),
    ("claude-haiku-*", 1.0, 5.0, 0.10),
    ("haiku", 1.0, 5.0, 0.10),
    # Google
    ("gemini-2.5-pro*", 1.25, 10.0, 0.125),
    ("gemini-*-pro*", 2.0, 12.0, 0.20),
    ("gemini-*-flash-lite*", 0.10, 0.40, 0.025),
    ("gemini-2.0-flash*", 0.10, 0.40, 0.025),
    ("gemini-2.5-flash*", 0.30, 2.50, 0.03),
    ("gemini-*-flash*", 0.50, 3.0, 0.05),
    # OpenAI
    ("gpt-5*-nano*", 0.05, 0.40, 0.005),
    ("gpt-5*-mini*", 0.25, 2.0, 0.025),
    ("gpt-5*", 1.25, 10.0, 0.125),
    ("gpt-4.1-mini*", 0.40, 1.60, 0.10),
    ("gpt-4.1*", 2.0, 8.0, 0.50),
    ("o4-mini*", 1.10, 4.40, 0.275),
    ("o3*", 2.0, 8.0, 0.50),
    ("codex-mini*", 1.50, 6.0, 0.375),
)

# The price of an unknown model: each CLI's mid-range default family.
FALLBACK: dict[str, tuple[float, float, float]] = {
    "claude": (3.0, 15.0, 0.30),  # Sonnet
    "gemini": (0.30, 2.50, 0.03),  # 2.5 Flash
    "codex": (1.25, 10.0, 0.125),  # GPT-5
}


def normalise(model: str) -> str:
    """'claude-opus-4-8[1m]' -> 'claude-opus-4-8'; 'models/gemini-2.5-pro' -> 'gemini-2.5-pro'."""
    name = model.strip().lower()
    name = re.sub(r"\[[^\]]*\]$", "", name)
    return name.removeprefix("models/")


def _specificity(pattern: str) -> tuple[int, int]:
    literal = len(pattern.replace("*", "").replace("?", ""))
    return (0 if any(c in pattern for c in "*?[") else 1, literal)


def _config_prices(settings: Any) -> dict[str, Price]:
    table = settings.table("prices") if settings is not None else {}
    source = getattr(settings, "config_file", None) or "maestro.toml"
    prices: dict[str, Price] = {}
    for model, entry in table.items():
        where = f'[prices."{model}"] in {source}'
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a table of prices.", "write input = N, output = N (dollars per million tokens).")
        values: dict[str, float] = {}
        for key in ("input", "output", "cached"):
            raw = entry.get(key)
            if raw is None and key == "cached":
                raw = values.get("input")
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
                raise ConfigError(
                    f"{where}: {key} = {raw!r} is not a price.",
                    f"set {key} to a number of dollars per million tokens (0 or more).",
                )
            values[key] = float(raw)
        unknown = sorted(set(entry) - {"input", "output", "cached"})
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r}.", "use input, output and cached.")
        prices[normalise(model)] = Price(values["input"], values["output"], values["cached"], "config")
    return prices


def price_for(model: str | None, settings: Any = None, *, tool: str | None = None) -> Price | None:
    """The price of ``model``: the project's table, then the built-in one, then the
    CLI's fallback; None only for an unknown model with no CLI named."""
    if model:
        name = normalise(model)
        configured = _config_prices(settings)
        if name in configured:
            return configured[name]
        for pattern in sorted(configured, key=_specificity, reverse=True):
            if fnmatchcase(name, pattern):
                return configured[pattern]
        for pattern, inp, out, cached in sorted(DEFAULT_PRICES, key=lambda row: _specificity(row[0]), reverse=True):
            if fnmatchcase(name, pattern):
                return Price(inp, out, cached)
    if tool in FALLBACK:
        return Price(*FALLBACK[tool], source="fallback")
    return None


def estimate_cost(model: str | None, usage: Usage, settings: Any = None, *, tool: str | None = None) -> float | None:
    """Estimated dollars for ``usage`` on ``model`` (None: nothing to price it by)."""
    price = price_for(model, settings, tool=tool)
    if price is None:
        return None
    return round(price.cost(usage), 6)

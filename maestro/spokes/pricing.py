"""Estimated dollars for a dispatch whose CLI reports no cost (Gemini, Codex).

Prices are dollars per million tokens: fresh input, output, and cached input. They come
from one price table, ``maestro/data/prices.toml`` (or the file the ``price_table``
setting names): each entry a model pattern, its three prices, the day they were read and
the page they were read from, matched most specific pattern first. A project overrides or
adds models in ``.ai/maestro.toml``, and those win::

    [prices."gpt-5.5"]          # a model name, or a pattern such as "gemini-3*-flash*"
    input = 1.25
    output = 10.0
    cached = 0.125              # optional: defaults to the input price

A model found nowhere has no price: its cost stays unknown and the model is named
(``unpriced``), never priced at zero nor at a guess. Claude reports its own cost; its
rows price only results that lack one.
"""

from __future__ import annotations

import datetime
import functools
import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib.resources import files
from math import inf
from pathlib import Path
from typing import Any

from maestro.errors import ConfigError
from maestro.state.model import Usage

FORMAT_VERSION = 1
BUNDLED = "maestro/data/prices.toml"  # how messages name the table that ships
STALE_DAYS = 90  # `maestro doctor` warns of a price read longer ago
_PRICES = ("input", "output", "cached")


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached: float
    source: str = "table"  # table | config
    date: datetime.date | None = None  # when the table's figures were read
    url: str = ""  # where they were read

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


def _amounts(entry: dict[str, Any], where: str, fix: str) -> dict[str, float]:
    """The three prices of one entry (cached defaults to input), each checked."""
    values: dict[str, float] = {}
    for key in _PRICES:
        raw = entry.get(key)
        if raw is None and key == "cached":
            raw = values.get("input")
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw < inf:
            raise ConfigError(
                f"{where}: {key} = {raw!r} is not a price.",
                f"set {key} to a number of dollars per million tokens (0 or more){fix}.",
            )
        values[key] = float(raw)
    return values


def table_name(settings: Any = None) -> str:
    """The price table in use, as messages name it."""
    chosen = getattr(settings, "price_table", None)
    return str(chosen) if chosen else BUNDLED


def _table_text(settings: Any) -> str:
    chosen = getattr(settings, "price_table", None)
    if not chosen:
        return files("maestro").joinpath("data", "prices.toml").read_text(encoding="utf-8")
    path = Path(chosen).expanduser()
    if not path.is_absolute() and settings is not None:
        path = settings.paths.root / path
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"price_table {chosen}: cannot be read ({exc.__class__.__name__}).",
            f"point price_table at a copy of {BUNDLED}, or unset it to use that one.",
        ) from None


def price_table(settings: Any = None) -> tuple[tuple[str, Price], ...]:
    """The price table's entries (pattern, price), each checked: a bad one raises
    ConfigError naming the file, the entry and the fix. Read at each call (an edit
    counts from the next dispatch), parsed once per content: each answer is priced with
    it, and parsing it took longer than reading the answer."""
    return _entries(table_name(settings), _table_text(settings))


@functools.lru_cache(maxsize=4)
def _entries(name: str, text: str) -> tuple[tuple[str, Price], ...]:
    restore = f", or restore the entry from {BUNDLED}" if name != BUNDLED else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{name} is not valid TOML: {exc}.", f"fix the line it names{restore}."
        ) from None
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise ConfigError(
            f"{name}: format_version = {version!r}, this Maestro reads {FORMAT_VERSION}.",
            f"set format_version = {FORMAT_VERSION} and the entries as {BUNDLED} has them.",
        )
    entries = data.get("price")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{name} has no [[price]] entries.", f"copy them from {BUNDLED}.")
    rows = []
    for number, entry in enumerate(entries, 1):
        model = entry.get("model") if isinstance(entry, dict) else None
        where = f"{name}, price {number}" + (f' (model "{model}")' if model else "")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(
                f"{where} names no model.", f'write model = "<name or pattern>"{restore}.'
            )
        unknown = sorted(set(entry) - {"model", *_PRICES, "date", "source"})
        if unknown:
            raise ConfigError(
                f"{where}: unknown key {unknown[0]!r}.",
                "use model, input, output, cached, date and source.",
            )
        values = _amounts(entry, where, restore)
        date, url = entry.get("date"), entry.get("source")
        if not isinstance(date, datetime.date) or isinstance(date, datetime.datetime):
            raise ConfigError(
                f"{where}: date = {date!r} is not a day.",
                "write the day the prices were read, as date = 2026-11-22 (no quotes).",
            )
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ConfigError(
                f"{where}: source = {url!r} is not a web address.",
                'write the page the prices were read from, as source = "https://...".',
            )
        rows.append(
            (
                normalise(model),
                Price(values["input"], values["output"], values["cached"], "table", date, url),
            )
        )
    return tuple(rows)


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
        values = _amounts(entry, where, "")
        unknown = sorted(set(entry) - set(_PRICES))
        if unknown:
            raise ConfigError(
                f"{where}: unknown key {unknown[0]!r}.", "use input, output and cached."
            )
        prices[normalise(model)] = Price(
            values["input"], values["output"], values["cached"], "config"
        )
    return prices


def check(settings: Any) -> None:
    """Both tables read and checked: what a run does before any dispatch."""
    price_table(settings)
    config_prices(settings)


def price_for(model: str | None, settings: Any = None) -> Price | None:
    """The price of ``model``: the project's table first, then the price table; None for
    a model neither names (or no model at all)."""
    if not model:
        return None
    name = normalise(model)
    rows = list(config_prices(settings).items())
    for pattern, price in sorted(rows, key=lambda row: _specificity(row[0]), reverse=True):
        if pattern == name or fnmatchcase(name, pattern):
            return price
    for pattern, price in sorted(
        price_table(settings), key=lambda row: _specificity(row[0]), reverse=True
    ):
        if fnmatchcase(name, pattern):
            return price
    return None


def estimate_cost(model: str | None, usage: Usage, settings: Any = None) -> float | None:
    """Estimated dollars for ``usage`` on ``model`` (None: nothing to price it by)."""
    price = price_for(model, settings)
    if price is None:
        return None
    return round(price.cost(usage), 6)


def unpriced_name(model: str | None, tool: str) -> str:
    """How a model without a price is named: its own name, or what the CLI ran when it
    said no model."""
    return model or f"{tool}'s default model (it named none)"

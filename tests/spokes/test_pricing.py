"""The price table: one data file of vendor families (each with its date and source),
project overrides, and a model found nowhere named, never priced."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from maestro.config import load_settings
from maestro.errors import ConfigError
from maestro.spokes.contract import SpokeResult
from maestro.spokes.pricing import estimate_cost, normalise, price_for, price_table
from maestro.spokes.registry import get_spoke
from maestro.state.model import Usage

MILLION = Usage(input=1_000_000, output=1_000_000, cached=1_000_000)


@pytest.mark.parametrize(
    ("model", "prices"),
    [
        ("claude-opus-4-8[1m]", (5.0, 25.0, 0.5)),
        ("claude-opus-4-1-20250805", (15.0, 75.0, 1.5)),
        ("claude-sonnet-5", (3.0, 15.0, 0.3)),
        ("sonnet", (3.0, 15.0, 0.3)),
        ("claude-haiku-4-5", (1.0, 5.0, 0.1)),
        ("gemini-2.5-pro", (1.25, 10.0, 0.125)),
        ("gemini-3.1-pro-preview", (2.0, 12.0, 0.2)),
        ("gemini-2.5-flash", (0.3, 2.5, 0.03)),
        ("gemini-3.5-flash-lite", (0.1, 0.4, 0.025)),
        ("gemini-3.8-flash", (0.5, 3.0, 0.05)),
        ("models/gemini-2.5-flash-lite", (0.1, 0.4, 0.025)),
        ("gpt-5.5", (1.25, 10.0, 0.125)),
        ("gpt-5-mini", (0.25, 2.0, 0.025)),
        ("gpt-5.1-codex-mini", (0.25, 2.0, 0.025)),
        ("gpt-5-nano", (0.05, 0.4, 0.005)),
    ],
)
def test_default_families(model, prices):
    price = price_for(model)
    assert (price.input, price.output, price.cached, price.source) == (*prices, "table")
    assert price.date is not None and price.url.startswith("https://")
    assert estimate_cost(model, MILLION) == pytest.approx(sum(prices))


def test_every_entry_of_the_table_says_when_and_where_it_was_read():
    rows = price_table()
    assert len(rows) == 23
    assert all(
        p.date == datetime.date(2026, 11, 22) and p.url.startswith("https://") for _, p in rows
    )


def test_a_model_found_nowhere_has_no_price_and_is_named():
    assert price_for("mystery-9") is None and price_for(None) is None
    assert estimate_cost("mystery-9", MILLION) is None
    gemini = get_spoke("gemini")
    result = SpokeResult(tool="gemini", usage=Usage(input=1000))
    gemini.price(result, {"mystery-9": Usage(input=1000)})
    assert (result.cost, result.cost_estimated, result.unpriced) == (None, False, "mystery-9")
    result = SpokeResult(tool="codex", usage=Usage(input=1000))
    get_spoke("codex").price(result, {None: Usage(input=1000)})
    assert result.cost is None and result.unpriced == "codex's default model (it named none)"


def test_normalise():
    assert normalise(" Claude-Opus-4-8[1m] ") == "claude-opus-4-8"


def write_config(project, text):
    (project / ".ai").mkdir(exist_ok=True)
    (project / ".ai" / "maestro.toml").write_text(text)
    return load_settings(project)


def test_project_table_overrides_and_adds(project):
    settings = write_config(
        project,
        '[prices."gpt-5.5"]\ninput = 2\noutput = 4\ncached = 1\n\n[prices."acme-*"]\ninput = 1\noutput = 1\n',
    )
    assert price_for("gpt-5.5", settings) == price_for("GPT-5.5", settings)
    assert (price_for("gpt-5.5", settings).input, price_for("gpt-5.5", settings).source) == (
        2.0,
        "config",
    )
    acme = price_for("acme-large", settings)
    assert (acme.input, acme.output, acme.cached) == (1.0, 1.0, 1.0)  # cached defaults to input
    assert price_for("gpt-5-mini", settings).source == "table"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[prices."m"]\ninput = "cheap"\noutput = 1\n', "input = 'cheap' is not a price"),
        ('[prices."m"]\ninput = 1\n', "output = None is not a price"),
        ('[prices."m"]\ninput = -1\noutput = 1\n', "input = -1 is not a price"),
        ('[prices."m"]\ninput = 1\noutput = 1\nextra = 2\n', "unknown key 'extra'"),
        ("[prices]\nm = 3\n", "must be a table of prices"),
    ],
)
def test_bad_price_entries_name_the_fix(project, text, words):
    settings = write_config(project, text)
    with pytest.raises(ConfigError, match=words) as caught:
        price_for("m", settings)
    assert '[prices."m"]' in str(caught.value) and "maestro.toml" in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            "input = 0.05\n",
            'input = "cheap"\n',
            "price 16 (model \"gpt-5*-nano*\"): input = 'cheap' is not a price",
        ),
        (
            "output = 75.0\n",
            "output = -75.0\n",
            'price 1 (model "claude-opus-4-1*"): output = -75.0 is not a price',
        ),
        ("date = 2026-11-22\n", 'date = "last week"\n', "date = 'last week' is not a day"),
        (
            'source = "https://openai.com/api/pricing/"\n',
            'source = "my notes"\n',
            "source = 'my notes' is not a web address",
        ),
        ("format_version = 1", "format_version = 9", "format_version = 9, this Maestro reads 1"),
        ("[[price]]\nmodel", "[[price]]\nmodle", "names no model"),
    ],
)
def test_a_hand_edited_price_table_with_a_bad_value_names_the_fix(project, old, new, words):
    bundled = (Path(__file__).parents[2] / "maestro" / "data" / "prices.toml").read_text()
    assert old in bundled
    (project / "my-prices.toml").write_text(bundled.replace(old, new, 1))
    settings = write_config(project, 'price_table = "my-prices.toml"\n')
    with pytest.raises(ConfigError, match=re.escape(words)) as caught:
        price_table(settings)
    assert str(caught.value).startswith("my-prices.toml") and "\n" not in str(caught.value)

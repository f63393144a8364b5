"""The price table: vendor families, project overrides, per-CLI fallbacks."""

from __future__ import annotations

import pytest

from maestro.config import load_settings
from maestro.errors import ConfigError
from maestro.spokes.pricing import estimate_cost, normalise, price_for
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
    assert (price.input, price.output, price.cached, price.source) == (*prices, "default")
    assert estimate_cost(model, MILLION) == pytest.approx(sum(prices))


def test_unknown_model_uses_its_cli_fallback():
    assert price_for("mystery-9") is None
    assert estimate_cost("mystery-9", MILLION) is None
    assert price_for("mystery-9", tool="gemini").source == "fallback"
    assert estimate_cost(None, Usage(input=1_000_000), tool="codex") == pytest.approx(1.25)
    assert estimate_cost("mystery-9", Usage(output=1_000_000), tool="claude") == pytest.approx(15.0)


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
    assert price_for("gpt-5-mini", settings).source == "default"


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

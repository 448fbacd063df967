"""How a call's model name finds its price (``api/usage_prices.PriceTable.find``): the exact
id, lower-cased, without a ``provider/`` prefix, with a version's dots as dashes; never a
looser match, so a model the table lacks stays unpriced (``docs/usage.md`` "Prices")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdex.api.usage_prices import PriceTable, dashed, load_prices

SONNET = {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}
OPUS = {"input": 5, "output": 25, "cache_read": 0.5, "cache_write": 6.25}


def _table(models: dict[str, dict[str, float]]) -> PriceTable:
    return PriceTable(date="2026-11-27", source="test", models=models)


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("Claude-Sonnet-4-6", "claude-sonnet-4-6"),
        ("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6"),
        # OpenRouter / Cline's provider, Copilot CLI: the same model with a dotted version
        ("anthropic/claude-sonnet-4.6", "claude-sonnet-4-6"),
        ("claude-sonnet-4.6", "claude-sonnet-4-6"),
        ("openrouter/anthropic/claude-opus-4.5", "claude-opus-4-5"),
        # and the other way round: a table name with dots
        ("gemini-2-5-pro", "gemini-2.5-pro"),
        ("google/gemini-2.5-pro", "gemini-2.5-pro"),
    ],
)
def test_a_name_for_the_same_model_finds_its_price(name: str, found: str) -> None:
    table = _table({"claude-sonnet-4-6": SONNET, "claude-opus-4-5": OPUS, "gemini-2.5-pro": OPUS})
    assert table.find(name) == found
    assert table.cost_of(name, 0, 1_000_000, 0, 0, 0, 0) == table.models[found]["input"]


@pytest.mark.parametrize(
    "name",
    [
        "claude-opus-4.6-1m",  # Copilot's 1M-context variant: another name, not in the table
        "anthropic/claude-opus-4.8-fast",  # a router's variant the table lacks
        "claude-4.5-sonnet",  # Cursor's word order: never reordered
        "claude-sonnet-4",  # a shorter name is not a prefix match
        "claude-sonnet-4-6-thinking",  # nor a longer one
        "claude-sonnet-4.6:beta",
        "sonnet",
        "",
        None,
    ],
)
def test_a_model_the_table_lacks_stays_unpriced(name: str | None) -> None:
    table = _table({"claude-sonnet-4-6": SONNET, "claude-opus-4-6": OPUS})
    assert table.find(name) is None
    assert table.cost_of(name, 0, 100, 0, 0, 0, 10) is None


def test_two_table_names_that_meet_with_other_rates_are_neither_taken() -> None:
    # should a table list 'x-1.5' and 'x-1-5' at different rates, a third spelling is no
    # evidence for either; each exact name still finds itself
    table = _table({"x-1.5-0": SONNET, "x-1-5.0": OPUS, "y-2.0-1": SONNET, "y-2-0.1": dict(SONNET)})
    assert table.find("vendor/X-1.5-0") == "x-1.5-0" and table.find("x-1-5.0") == "x-1-5.0"
    assert table.find("x-1.5.0") is None and table.find("x-1-5-0") is None
    # the same rates under two spellings: one model, either name gives the same price
    assert table.find("y-2-0-1") in ("y-2.0-1", "y-2-0.1")
    assert table.cost_of("y-2.0.1", 0, 10**6, 0, 0, 0, 0) == SONNET["input"]
    assert dashed("Gemini-2.5-Pro.json") == "gemini-2-5-pro.json"  # only dots between digits


def test_the_shipped_table_prices_router_and_copilot_names(tmp_path: Path) -> None:
    table = load_prices()
    for name, want in (
        ("anthropic/claude-sonnet-4.6", "claude-sonnet-4-6"),
        ("claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
    ):
        assert table.find(name) == want, name
    assert table.find("claude-opus-4.6-1m") is None
    # a --prices file is read by the same rule
    own = tmp_path / "prices.json"
    own.write_text(json.dumps({"date": "d", "source": "s", "models": {"my-model-2-1": SONNET}}))
    assert load_prices(own).find("acme/my-model-2.1") == "my-model-2-1"

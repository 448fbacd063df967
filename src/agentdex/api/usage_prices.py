"""What model calls cost, offline: the shipped price table (``prices.json``) or a user's.

A table is JSON::

    {"date": "2026-11-26", "source": "...", "unit": "USD per million tokens",
     "models": {"claude-opus-4-6": {"input": 5, "output": 25, "cache_read": 0.5,
                                    "cache_write": 6.25, "cache_write_1h": 10},
                "gemini-2.5-pro": {"input": 1.25, "output": 10, "cache_read": 0.125,
                                   "above_200k": {"input": 2.5, "output": 15}}}}

Rates are USD per million tokens: ``input`` (fresh input), ``output``
(reasoning included), ``cache_read``, ``cache_write`` (five-minute writes)
and ``cache_write_1h`` (one-hour writes). ``above_128k``/``above_200k``/
``above_272k`` hold the rates that change for a call whose prompt (input plus
cache) is past that size; the others stay. A model is found by its exact id,
then lower-cased, then without a ``provider/`` prefix, then (each of those) with
the dots of its version numbers written as dashes (``claude-sonnet-4.6``, as
OpenRouter, Cline's provider and Copilot name it, is Anthropic's
``claude-sonnet-4-6``; the table itself lists ``mistral-medium-3.5`` and
``mistral-medium-3-5`` at the same rates); nothing looser: no suffix dropped,
no words reordered, no nearest name.

A call whose model is not in the table, or that has tokens of a kind the
model has no rate for, has no cost (``None``): it is reported unpriced,
never priced at 0 and never guessed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdex.errors import UsageError

SHIPPED = Path(__file__).with_name("prices.json")
RATE_NAMES = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
#: tiers by prompt size class (``index/usage.py``: how many thresholds the prompt is over)
TIERS = ("above_128k", "above_200k", "above_272k")
#: not looked up yet (a model without a price is cached as None)
_UNSEEN: Any = object()
#: a dot between two digits: a version number's (``4.6``, ``2.5``), written ``4-6`` by others
_VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")


def dashed(name: str) -> str:
    """``name`` lower-cased with its version numbers' dots as dashes (``Claude-Sonnet-4.6`` ->
    ``claude-sonnet-4-6``): the one spelling difference :meth:`PriceTable.find` forgives."""
    return _VERSION_DOT.sub("-", name.lower())


@dataclass(slots=True)
class PriceTable:
    date: str
    source: str
    models: dict[str, dict[str, Any]]
    path: str | None = None
    _lower: dict[str, str] = field(default_factory=dict)
    #: by :func:`dashed` name (None where two of the table's names with other rates meet)
    _dashed: dict[str, str | None] = field(default_factory=dict)
    _rates: dict[tuple[str | None, int], dict[str, float] | None] = field(default_factory=dict)
    #: per model and size: its five rates in RATE_NAMES order when it has all of them
    _every: dict[tuple[str | None, int], tuple[float, ...] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lower = {name.lower(): name for name in self.models}

    def find(self, model: str | None) -> str | None:
        """The table's name for ``model`` (exact, lower-cased, without ``provider/``, then
        those with version dots as dashes), or None."""
        if not model:
            return None
        if model in self.models:
            return model
        candidates = (model.lower(), model.rsplit("/", 1)[-1].lower())
        for candidate in candidates:
            if candidate in self._lower:
                return self._lower[candidate]
        if not self._dashed:
            self._dashed = self._by_dashed_name()
        for candidate in candidates:
            found = self._dashed.get(dashed(candidate))
            if found is not None:
                return found
        return None

    def _by_dashed_name(self) -> dict[str, str | None]:
        names: dict[str, str | None] = {}
        for name, entry in self.models.items():
            key = dashed(name)
            other = names.get(key, name)
            # two spellings of one model carry the same rates; else neither is taken
            names[key] = name if other is not None and self.models[other] == entry else None
        return names

    def rates(self, model: str | None, size: int = 0) -> dict[str, float] | None:
        """The rates of ``model`` for a prompt of size class ``size``, or None (unknown)."""
        key = (model, size)
        if key in self._rates:
            return self._rates[key]
        name = self.find(model)
        rates: dict[str, float] | None = None
        if name is not None:
            entry = self.models[name]
            rates = {k: float(v) for k, v in entry.items() if k in RATE_NAMES}
            for tier in TIERS[: max(0, min(size, len(TIERS)))]:
                if isinstance(entry.get(tier), dict):
                    rates.update({k: float(v) for k, v in entry[tier].items() if k in RATE_NAMES})
        self._rates[key] = rates
        return rates

    def cost(self, model: str | None, size: int, counts: dict[str, int]) -> float | None:
        """USD for these summed counts of one model and prompt size, or None (unpriced).

        ``counts``: ``input``, ``cache_read``, ``cache_write`` (one-hour writes
        included), ``cache_write_1h``, ``output``.
        """
        return self.cost_of(
            model,
            size,
            counts["input"],
            counts["cache_read"],
            counts["cache_write"],
            counts["cache_write_1h"],
            counts["output"],
        )

    def cost_of(
        self,
        model: str | None,
        size: int,
        inp: int,
        cache_read: int,
        cache_write: int,
        cache_write_1h: int,
        output: int,
    ) -> float | None:
        """:meth:`cost` of counts given one by one (``usage --by session`` prices thousands
        of rows)."""
        key = (model, size)
        every = self._every.get(key, _UNSEEN)
        if every is _UNSEEN:
            rates = self.rates(model, size)
            every = self._every[key] = (
                None
                if rates is None or any(name not in rates for name in RATE_NAMES)
                else tuple(rates[name] for name in RATE_NAMES)
            )
        if every is not None:  # the same sum as below: a term of 0 tokens adds exactly 0.0
            rate_in, rate_out, rate_read, rate_write, rate_1h = every
            return (
                0.0
                + inp * rate_in
                + output * rate_out
                + cache_read * rate_read
                + (cache_write - cache_write_1h) * rate_write
                + cache_write_1h * rate_1h
            ) / 1_000_000
        rates = self.rates(model, size)
        if rates is None:
            return None
        total = 0.0
        for name, tokens in (
            ("input", inp),
            ("output", output),
            ("cache_read", cache_read),
            ("cache_write", cache_write - cache_write_1h),
            ("cache_write_1h", cache_write_1h),
        ):
            if tokens:
                rate = rates.get(name)
                if rate is None:
                    return None
                total += tokens * rate
        return total / 1_000_000

    def describe(self) -> dict[str, Any]:
        return {
            "date": self.date,
            "source": self.source,
            "file": self.path,
            "shipped": self.path is None,
            "models": len(self.models),
        }


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """The shipped table, or the one at ``path`` (``--prices``); UsageError if it is bad."""
    target = Path(path) if path is not None else SHIPPED
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read prices file {target}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UsageError(f"prices file {target} is not JSON: {exc}") from exc
    problem = _problem(data)
    if problem:
        raise UsageError(f"prices file {target}: {problem}")
    return PriceTable(
        date=str(data.get("date") or ""),
        source=str(data.get("source") or ""),
        models=data["models"],
        path=None if path is None else str(target),
    )


def _problem(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        return 'expected an object with "models": {model: {rate: USD per million tokens}}'
    for name, entry in data["models"].items():
        if not isinstance(entry, dict):
            return f"model {name!r}: expected an object of rates"
        for key, value in entry.items():
            values = value.items() if key in TIERS and isinstance(value, dict) else [(key, value)]
            for rate, number in values:
                if rate not in RATE_NAMES:
                    known = ", ".join((*RATE_NAMES, *TIERS))
                    return f"model {name!r}: unknown rate {rate!r} (known: {known})"
                if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0:
                    return f"model {name!r}: rate {rate!r} must be a number >= 0"
    return None

"""Write agentdex's shipped price table from LiteLLM's model price list.

    python scripts/update_prices.py NEWEST_JSON [OLDER_JSON ...] --source "..." --date YYYY-MM-DD

Each JSON is ``litellm/model_prices_and_context_window_backup.json`` from a
``litellm`` wheel (MIT licence; prices are facts, the file is not copied).
LiteLLM drops retired models, whose calls are still in people's history, so
older lists fill in the models the newest no longer has. Only chat models of
the providers coding agents call are kept, in USD per million tokens, in the
shape ``--prices FILE`` takes (docs/usage.md).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "src" / "agentdex" / "api" / "prices.json"
#: LiteLLM provider -> the prefix its keys carry (stripped: agents log the bare id)
PROVIDERS = {
    "anthropic": "",
    "openai": "",
    "gemini": "gemini/",
    "xai": "xai/",
    "deepseek": "deepseek/",
    "mistral": "mistral/",
}
#: our rate names -> LiteLLM's per-token field (the ``_above_<N>k_tokens`` variants too)
RATES = {
    "input": "input_cost_per_token",
    "output": "output_cost_per_token",
    "cache_read": "cache_read_input_token_cost",
    "cache_write": "cache_creation_input_token_cost",
    "cache_write_1h": "cache_creation_input_token_cost_above_1hr",
}
THRESHOLDS = (128, 200, 272)


def _per_million(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return round(float(value) * 1_000_000, 6)
    return None


def _rates(entry: dict[str, Any], suffix: str = "") -> dict[str, float]:
    found = {}
    for name, field in RATES.items():
        rate = _per_million(entry.get(field + suffix))
        if rate is not None:
            found[name] = rate
    return found


def convert(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    models: dict[str, dict[str, Any]] = {}
    for key, entry in sorted(data.items()):
        if not isinstance(entry, dict) or entry.get("mode") not in ("chat", "responses"):
            continue
        prefix = PROVIDERS.get(str(entry.get("litellm_provider")))
        if prefix is None or not key.startswith(prefix):
            continue
        rates: dict[str, Any] = _rates(entry)
        if "input" not in rates or "output" not in rates:
            continue
        for k in THRESHOLDS:
            above = _rates(entry, f"_above_{k}k_tokens")
            if above:
                rates[f"above_{k}k"] = above
        models[key[len(prefix) :]] = rates
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("litellm_json", type=Path, nargs="+")
    parser.add_argument("--source", required=True)
    parser.add_argument("--date", required=True)
    args = parser.parse_args()
    models: dict[str, dict[str, Any]] = {}
    for path in args.litellm_json:
        for name, rates in convert(json.loads(path.read_text(encoding="utf-8"))).items():
            models.setdefault(name, rates)
    models = dict(sorted(models.items()))
    table = {
        "date": args.date,
        "source": args.source,
        "unit": "USD per million tokens",
        "models": models,
    }
    OUT.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(models)} models -> {OUT}")


if __name__ == "__main__":
    main()

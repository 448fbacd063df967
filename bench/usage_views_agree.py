"""Every ``agentdex usage --by`` view of one index adds up to the same grand total.

    AGENTDEX_DATA_DIR=D python bench/usage_views_agree.py /work/bench-data/c1000

Reads the index as it is (no refresh), in process; for each view: its row count, whether
its rows add up to its totals (every count, the calls, the unpriced part and the priced
cost) and whether its totals are the first view's. Prints one JSON document; exits 1 when
a view disagrees.
"""

from __future__ import annotations

import argparse
import json
import sys

from agentdex.api.usage import BY, usage

FIELDS = ("calls", "input_tokens", "cache_read_tokens", "cache_write_tokens",
          "cache_write_1h_tokens", "output_tokens", "reasoning_tokens", "total_tokens",
          "unpriced_calls", "unpriced_tokens")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home")
    args = parser.parse_args()
    views: dict[str, dict[str, object]] = {}
    first = None
    for by in BY:
        result = usage(by, home=args.home, refresh_first=False)
        totals, rows = result["totals"], result["rows"]
        adds_up = all(sum(row[f] for row in rows) == totals[f] for f in FIELDS)
        cost = sum(row["priced_cost_usd"] for row in rows)
        adds_up = adds_up and abs(cost - totals["priced_cost_usd"]) < 1e-6 * max(1.0, cost)
        grand = (*(totals[f] for f in FIELDS), round(totals["priced_cost_usd"], 6))
        first = first or grand
        views[by] = {"rows": len(rows), "rows_add_up": adds_up, "same_grand_total": grand == first,
                     "calls": totals["calls"], "total_tokens": totals["total_tokens"],
                     "priced_cost_usd": round(totals["priced_cost_usd"], 2)}  # fmt: skip
    print(json.dumps(views, indent=1))
    if not all(v["rows_add_up"] and v["same_grand_total"] for v in views.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()

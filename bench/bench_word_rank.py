"""What ranking whole words first costs: in-process search p50, with and without the tier.

    python bench/bench_word_rank.py /work/bench-data/c250 --work /tmp/adx-word [--runs 15]

Builds (once) the index of a generated corpus (``bench/generate_corpus.py``), then
times ``api.search(QUERY, limit=20)`` in this process for each query, alternating
the whole-word tier on (the default) and off (``Planner.whole_words`` answering
None, the ranking before issue 26), and prints the medians and their ratio as JSON.
Every run reads the same warm index; the first run of each is dropped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

QUERIES = ["function", "the", "error handling", "retry", "race", "config agent:claude-code"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/adx-word"))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    import os

    os.environ["AGENTDEX_DATA_DIR"] = str(args.work / "data")
    os.environ["AGENTDEX_CONFIG"] = str(args.work / "config.toml")
    from agentdex.api import search as api
    from agentdex.search.plan import Planner

    home = str(args.corpus)
    started = time.perf_counter()
    api.refresh(home=home)
    built = time.perf_counter() - started
    real = Planner.whole_words
    out: dict[str, object] = {"corpus": str(args.corpus), "index_seconds": round(built, 1)}
    for query in QUERIES:
        times: dict[str, list[float]] = {"tier": [], "no_tier": []}
        for i in range(args.runs + 1):
            for name in ("tier", "no_tier"):
                Planner.whole_words = real if name == "tier" else (lambda self, node: None)  # type: ignore[method-assign]
                t0 = time.perf_counter()
                result = api.search(query, home=home, refresh_first=False, limit=20)
                elapsed = time.perf_counter() - t0
                if i:
                    times[name].append(elapsed)
        Planner.whole_words = real  # type: ignore[method-assign]
        tier, flat = statistics.median(times["tier"]), statistics.median(times["no_tier"])
        out[query] = {
            "tier_ms": round(tier * 1000, 1),
            "no_tier_ms": round(flat * 1000, 1),
            "ratio": round(tier / flat, 2),
            "total": result.stats["total"],
            "mode": result.stats["mode"],
        }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""s10-lex's in-process breakdown of the occurring queries' lexical half (as hybrid asks it:
``limit=50``), per query the median of ``--reps`` searches on one open process, in ms.

    AGENTDEX_DATA_DIR=W/data AGENTDEX_CONFIG=W/config.toml PYTHONPATH=SRC \\
        python bench/results/s10-lex-inproc.py HOME [--reps 5] > out.json

Timed by wrapping: ``lookup`` (term-list lookups), ``plan`` (the planner, lookups and
tantivy counts included), ``run`` (the run: candidates verified, ``verify`` of them the
checks), ``total`` (wall of ``api.search``) and ``cpu`` (the process's CPU during it, every
thread). Prints one JSON object: query -> medians (and candidates, blocks, mode).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

T: dict[str, float] = defaultdict(float)


def wrap(owner: Any, name: str, key: str) -> None:
    original = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            T[key] += time.perf_counter() - started

    setattr(owner, name, timed)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench_semantic import OCCURRING

    from agentdex.api import search as api
    from agentdex.index import postings
    from agentdex.search import engine, plan, run

    wrap(postings.Vocabulary, "expand", "lookup")
    wrap(plan.Planner, "plan", "plan")
    wrap(run.SearchRun, "run", "run")
    wrap(engine.Engine, "matches", "verify")
    home = sys.argv[1]
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 5
    out: dict[str, dict[str, Any]] = {}
    for query in OCCURRING:
        rows = []
        for _ in range(reps):
            T.clear()
            wall, cpu = time.perf_counter(), time.process_time()
            result = api.search(
                query, home=home, refresh_first=False, limit=50, mode="lexical", now=1795700000.0
            )
            row = {key: value * 1000 for key, value in T.items()}
            row["total"] = (time.perf_counter() - wall) * 1000
            row["cpu"] = (time.process_time() - cpu) * 1000
            rows.append(row)
        keys = {key for row in rows for key in row}
        out[query] = {k: round(statistics.median(r.get(k, 0.0) for r in rows), 2) for k in keys}
        stats = result.stats
        out[query].update(
            cand=stats["candidates"], blocks=stats["blocks_scanned"], mode=stats["mode"]
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()

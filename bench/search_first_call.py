"""A fresh process's first search against its second: what a fresh ``agentdex search``
pays beyond the search itself once agentdex is imported (lazy imports, opening the
generation, the first touch of the term list, postings and fast columns).

    AGENTDEX_DATA_DIR=W AGENTDEX_CONFIG=W/no-config.toml PYTHONPATH=SRC \\
        python bench/search_first_call.py HOME [--runs 7]

For each class of bench_search.py (rare, function, regex, filtered), ``--runs`` fresh
processes each import ``agentdex.api.search``, search once, then search again (the
index as it is, no refresh check); prints the medians (ms) as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CODE = r"""
import sys, time
t0 = time.perf_counter()
from agentdex.api import search as api
t1 = time.perf_counter()
home, query, regex = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
api.search(query, home=home, refresh_first=False, regex=regex, limit=20)
t2 = time.perf_counter()
api.search(query, home=home, refresh_first=False, regex=regex, limit=20)
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""

QUERIES = {
    "rare": ("zq1000067", "0"),
    "function": ("function", "0"),
    "regex": ("buffer (commit|zzq)", "1"),
    "filtered": ("agent:codex since:2026-10-01 timeout", "0"),
}
PARTS = ("import_api_ms", "first_search_ms", "second_search_ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("home")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    out = {}
    for name, (query, regex) in QUERIES.items():
        rows = []
        for _ in range(args.runs):
            argv = [sys.executable, "-c", CODE, args.home, query, regex]
            done = subprocess.run(argv, capture_output=True, text=True, check=True)
            rows.append([float(x) for x in done.stdout.split()])
        out[name] = {
            part: round(statistics.median(r[i] for r in rows), 1) for i, part in enumerate(PARTS)
        }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

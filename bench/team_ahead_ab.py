"""In-process team search as the resident runs it (a kept connection and a helper).

    python bench/team_ahead_ab.py URLS.json SRC [SRC...]

Each ``SRC`` (a checkout's ``src``) is searched in a process of its own, the checkouts
in turn, ``--rounds`` times: p50 of ``--runs`` searches per class (the regex, the
filtered query and the phrase of ``bench_search.py``), one JSON line per process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

QUERIES = (
    ("regex", "buffer (commit|zzq)", True),
    ("filtered", "agent:codex since:2026-10-01 timeout", False),
    ("phrase", '"buffer commit sedistimel"', False),
)

CHILD = """
import json, statistics, sys, time
import psycopg
from agentdex.api import team as api
reader, runs, queries = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
conn, helper = psycopg.connect(reader), psycopg.connect(reader)
out = {}
for name, query, regex in queries:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        api.search(query, url=reader, regex=regex, limit=20,
                   connection=lambda: conn, helper=lambda: helper)
        samples.append((time.perf_counter() - started) * 1000)
    out[name] = round(statistics.median(samples), 1)
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("urls", type=Path)
    parser.add_argument("src", nargs="+")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    reader = json.loads(args.urls.read_text())["reader"]
    for _ in range(args.rounds):
        for src in args.src:
            env = {**os.environ, "PYTHONPATH": str(Path(src).absolute())}
            done = subprocess.run(
                [sys.executable, "-c", CHILD, reader, str(args.runs), json.dumps(QUERIES)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            found = json.loads(done.stdout)
            print(json.dumps({"src": src, "p50_ms": found, "load": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()

"""A/B of a mid-build tail's verification (s17-query; raw: s17-query-tail-ab.json).

    AGENTDEX_DATA_DIR=W/data AGENTDEX_CONFIG=W/no-config.toml PYTHONPATH=SRC \\
        python bench/results/s17-query-tail-ab.py HOME N ROUNDS QUERY...

On a complete index (W: a finished first build of HOME), the last N records are made
tail (``engine.tail_rid``) and verified by the base's path (their ids, then light rows
by id lists, then a check per record) and by ``tail_rows`` + ``matching`` (one range
read, a block scanned whole), interleaved, a fresh engine each time; prints medians.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from agentdex.api.index import reader
from agentdex.search.query import parse_query

home, n, rounds, queries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
out: dict[str, dict[str, object]] = {}
for q in queries:
    times: dict[str, list[float]] = {"base": [], "new": []}
    for _ in range(rounds):
        for way in ("base", "new"):
            with reader(None, home) as engine:
                assert engine is not None
                top = engine.db.execute("SELECT max(id) FROM records").fetchone()[0]
                engine.tail_rid = top - n + 1
                node = parse_query(q, now=time.time(), regex=False)
                assert node is not None
                engine.prepare(node, regex=False, word=False, case="smart")
                started = time.perf_counter()
                if way == "base":
                    ids = [
                        rid
                        for (rid,) in engine.db.execute(
                            "SELECT id FROM records WHERE id >= ?", (engine.tail_rid,)
                        )
                    ]
                    found = [row for row in engine.light(ids) if engine.matches(node, row)]
                else:
                    found, _ = engine.matching(node, engine.tail_rows())
                times[way].append(time.perf_counter() - started)
            out.setdefault(q, {})[way + "_found"] = len(found)
    for way, got in times.items():
        out[q][way] = round(statistics.median(got), 3)
        out[q][way + "_all"] = [round(t, 3) for t in got]
with open("/proc/loadavg") as load:
    print(
        json.dumps(
            {"tail_records": n, "rounds": rounds, "load": load.read().split()[:3], "queries": out},
            indent=1,
        )
    )

"""Each band probe of the team regex, as planned and with the band probes' index tuple cost.

    python bench/team_band_plans.py URLS.json

``URLS.json``: ``{"reader": ...}`` of a pushed database (``bench_team.py --reuse``).
Prints, per band of levels, the plan's shape (the ``(level, ts)`` bitmap ANDed, or a
recheck of every trigram candidate) and the fastest of 3 runs, with PostgreSQL's
``cpu_index_tuple_cost`` and with ``team.search.BAND_INDEX_TUPLE_COST``; and the
planner's estimate of the trigram condition (it moves with each ``ANALYZE``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from agentdex.team.search import BAND_INDEX_TUPLE_COST  # noqa: E402

CONDITION = "(text ILIKE %s) AND ((text ILIKE %s) OR (text ILIKE %s))"
PATTERNS = ("%buffer%", "%comm%t%", "%zzq%")  # search -E 'buffer (commit|zzq)'
BANDS = ((0, 4), (4, 12), (12, 24), (24, 48))


def main() -> None:
    import psycopg

    reader = json.loads(Path(sys.argv[1]).read_text())["reader"]
    conn = psycopg.connect(reader, autocommit=True)
    view = "agentdex.records_read"
    plan = conn.execute(
        f"EXPLAIN (FORMAT JSON) SELECT id FROM {view} WHERE {CONDITION}", PATTERNS
    ).fetchone()[0]
    print("trigram condition: estimated rows", plan[0]["Plan"]["Plan Rows"])
    statement = (
        f"SELECT id, level, ts FROM {view} WHERE {CONDITION} AND level >= %s AND level < %s"
        " LIMIT 50001"
    )
    for cost in (None, BAND_INDEX_TUPLE_COST):
        conn.execute("RESET ALL")
        conn.execute(
            "SET enable_seqscan = off; SET enable_indexscan = off; SET enable_bitmapscan = on;"
            " SET work_mem = '32MB'"
            + ("" if cost is None else f"; SET cpu_index_tuple_cost = {cost:g}")
        )
        for lo, hi in BANDS:
            args = (*PATTERNS, lo, hi)
            shape = "\n".join(r[0] for r in conn.execute("EXPLAIN " + statement, args))
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                found = len(conn.execute(statement, args).fetchall())
                runs.append((time.perf_counter() - started) * 1000)
            how = "level bitmap" if "BitmapAnd" in shape else "heap recheck"
            label = "as configured" if cost is None else f"cost {cost:g}"
            took = min(runs)
            print(f"{label:14s} levels {lo}-{hi - 1}: {how:12s} {found:6d} rows {took:7.1f} ms")


if __name__ == "__main__":
    main()

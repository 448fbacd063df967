"""What SQLite's page cache size does to the bulk load's two sorts: memory and CPU.

    python bench/bench_sqlite_cache.py INDEX_DB --work DIR [--rounds 3] [--cache 16000 ...]

On a copy of a built generation's ``index.db`` (in ``--work``), for each round and each
``--cache`` (KiB; default 16000 8000 4000 2000), in a fresh connection with that
``cache_size``: (1) ``sort``: the record indexes dropped and built again as a bulk load's
end does (``IndexWriter.end_bulk_load``); (2) ``sums``: the ``context_stats`` sums of the
second half of the records added again (``context_stats.merge_added``, what each commit of
a bulk load runs over the records since the previous one; rolled back). Reports wall and
CPU seconds and SQLite's memory high-water mark (``sqlite3_memory_highwater``: page cache
plus the sorter) of each. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from agentdex.index import context_stats
from agentdex.index.writer import RECORD_INDEXES

_LIB = ctypes.CDLL("libsqlite3.so.0")
_LIB.sqlite3_memory_highwater.restype = ctypes.c_int64
_LIB.sqlite3_memory_highwater.argtypes = [ctypes.c_int]


def _open(path: Path, cache: int) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA cache_size=-{cache}")
    db.execute("PRAGMA mmap_size=0")
    db.execute("DROP INDEX IF EXISTS record_rows_file")
    db.execute("DROP INDEX IF EXISTS record_rows_context")
    return db


def _timed(db: sqlite3.Connection, run: Any) -> dict[str, float]:
    _LIB.sqlite3_memory_highwater(1)
    wall, cpu = time.perf_counter(), time.process_time()
    run(db)
    return {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "sqlite_high_mb": round(_LIB.sqlite3_memory_highwater(0) / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index_db", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=int, action="append")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    copy = args.work / "index.db"
    shutil.copy(args.index_db, copy)
    caches = args.cache or [16000, 8000, 4000, 2000]
    rows = sqlite3.connect(copy).execute("SELECT max(id) FROM record_rows").fetchone()[0]
    out: dict[str, Any] = {"index_db": str(args.index_db), "records": rows, "runs": []}
    for _ in range(args.rounds):
        for cache in caches:
            db = _open(copy, cache)
            db.execute("BEGIN IMMEDIATE")
            db.execute("SELECT count(*) FROM record_rows").fetchone()  # the cache filled
            sort = _timed(db, lambda db: [db.execute(s) for s in RECORD_INDEXES])
            db.execute("ROLLBACK")
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM context_stats")
            db.execute("SELECT count(*) FROM record_rows WHERE id >= ?", (rows // 2,)).fetchone()
            sums = _timed(db, lambda db: context_stats.merge_added(db, rows // 2))
            db.execute("ROLLBACK")
            db.close()
            out["runs"].append({"cache_kib": cache, "sort": sort, "sums": sums})
    copy.unlink()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

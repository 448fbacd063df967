"""Listing conversations (``agentdex conversations``) on a big index: totals table against records.

    python bench/generate_corpus.py /tmp/adx-1g --size-mb 1000
    python bench/bench_sessions.py /tmp/adx-1g --work /tmp/adx-sessions [--runs 11]

Builds the index of HOME under ``--work`` when there is none (the cold
build's seconds are reported, and are comparable to ``bench_search.py``'s
only on a quiet machine), then reports medians over ``--runs``:

* ``fresh_*``: a whole ``agentdex conversations --json`` process, with and
  without its refresh check (``--no-refresh``);
* ``in_process``: the listing query alone, read from the per-context totals
  (``context_stats``) and aggregated over every record (the query before
  the table existed, still used on an older generation), and their ratio;
* ``migration_s``: summing an existing generation's contexts once (what the
  first writer to open an older index does), on a copy of its database.

Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"

IN_PROCESS = r"""
import json, statistics, sys, time
sys.path.insert(0, {src!r})
from agentdex.api.conversations import _session_rows, _session_rows_from_records
from agentdex.api.index import reader
out = {{}}
with reader(None, {home!r}) as engine:
    for name, fn in (("totals", _session_rows), ("records", _session_rows_from_records)):
        samples = []
        for _ in range({runs}):
            started = time.perf_counter()
            rows = fn(engine, "1", [])
            samples.append(time.perf_counter() - started)
        out[name] = {{"median_ms": round(statistics.median(samples) * 1000, 1),
                      "conversations": len(rows)}}
    out["index_contexts"] = engine.db.execute("SELECT count(*) FROM contexts").fetchone()[0]
    out["index_records"] = engine.db.execute("SELECT count(*) FROM record_rows").fetchone()[0]
print(json.dumps(out))
"""

MIGRATION = r"""
import json, sqlite3, sys, time
sys.path.insert(0, {src!r})
from agentdex.index.context_stats import create_and_fill
db = sqlite3.connect({db!r}, isolation_level=None)
db.execute("DROP TABLE IF EXISTS context_stats")
started = time.perf_counter()
create_and_fill(db)
print(json.dumps({{"seconds": round(time.perf_counter() - started, 2)}}))
"""


def run_json(code: str, env: dict[str, str]) -> Any:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout)


def median_wall(argv: list[str], env: dict[str, str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=True)
        samples.append(time.perf_counter() - started)
    return round(statistics.median(samples) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/adx-sessions"))
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["AGENTDEX_DATA_DIR"] = str(args.work / "agentdex-data")
    env["AGENTDEX_CONFIG"] = str(args.work / "no-config.toml")
    (args.work / "no-config.toml").write_text("")
    env["PYTHONPATH"] = str(SRC)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool runs byte-compiled modules
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC)], check=True, env=env)
    agentdex = [sys.executable, "-m", "agentdex", "--home", str(args.home)]
    report: dict[str, Any] = {"home": str(args.home), "runs": args.runs}
    if not (args.work / "agentdex-data" / "homes").is_dir():
        started = time.perf_counter()
        subprocess.run([*agentdex, "index", "--json"], capture_output=True, env=env, check=True)
        report["cold_index_s"] = round(time.perf_counter() - started, 1)
    listing = [*agentdex, "conversations", "--json"]
    report["fresh_ms"] = median_wall(listing, env, args.runs)
    report["fresh_no_refresh_ms"] = median_wall([*listing, "--no-refresh"], env, args.runs)
    report["in_process"] = run_json(
        IN_PROCESS.format(src=str(SRC), home=str(args.home), runs=args.runs), env
    )
    timing = report["in_process"]
    timing["records_vs_totals"] = round(
        timing["records"]["median_ms"] / max(timing["totals"]["median_ms"], 0.1), 1
    )
    index_db = next((args.work / "agentdex-data" / "homes").glob("*/index/gen-*/index.db"))
    with tempfile.TemporaryDirectory(dir=args.work) as scratch:
        copy = Path(scratch) / "index.db"
        shutil.copyfile(index_db, copy)
        if Path(f"{index_db}-wal").exists():
            shutil.copyfile(f"{index_db}-wal", f"{copy}-wal")
        report["migration_s"] = run_json(MIGRATION.format(src=str(SRC), db=str(copy)), env)[
            "seconds"
        ]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

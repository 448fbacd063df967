"""`agentdex usage` on a big history, and what storing usage costs the cold build.

    python bench/generate_corpus.py /tmp/c1000 --size-mb 1000
    python bench/bench_usage.py /tmp/c1000 --work /tmp/bu --before /tmp/main-src [--runs 11]

``--before`` is the ``src`` folder of the code to compare the cold build
with (e.g. a worktree of the commit before usage was stored). Cold builds of
HOME alternate, before and now (``--builds`` of each, every one into a fresh
data dir under ``--work``), so both see the same machine; then, on the last
"now" index, ``--runs`` fresh ``agentdex usage`` processes per view (with
the refresh check, and ``--no-refresh``). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"


def _env(src: Path, data: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(src), "AGENTDEX_DATA_DIR": str(data)}
    env.pop("AGENTDEX_CONFIG", None)
    return env


def _timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def cold_build(home: Path, src: Path, data: Path) -> float:
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    command = [sys.executable, "-m", "agentdex", "--home", str(home), "index", "--json"]
    return _timed(command, _env(src, data))


def usage_tables(data: Path) -> dict[str, Any]:
    found = sorted(data.rglob("index.db"))
    if not found:
        return {}
    db = sqlite3.connect(f"file:{found[-1]}?mode=ro", uri=True)
    try:
        calls = db.execute("SELECT count(*), sum(counted) FROM usage_calls").fetchone()
        rollup = db.execute("SELECT count(*) FROM usage_rollup").fetchone()[0]
        pages = (
            db.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'usage%'").fetchone()[0]
            if _has_dbstat(db)
            else None
        )
    finally:
        db.close()
    return {"call_rows": calls[0], "counted_calls": calls[1], "rollup_rows": rollup,
            "usage_tables_bytes": pages}  # fmt: skip


def _has_dbstat(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT 1 FROM dbstat LIMIT 1")
        return True
    except sqlite3.Error:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--before", type=Path, help="src folder to compare the cold build with")
    parser.add_argument("--builds", type=int, default=2, help="0: time usage on --work/now-0")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--data", type=Path, help="with --builds 0: the data dir to time usage on")
    args = parser.parse_args()
    builds: dict[str, list[float]] = {"before": [], "now": []}
    for i in range(args.builds):
        for label, src in (("before", args.before), ("now", SRC)):
            seconds = cold_build(args.home, src, args.work / f"{label}-{i}")
            builds[label].append(round(seconds, 2))
            print(f"cold build {label} #{i}: {seconds:.1f} s", file=sys.stderr)
    data = args.data or args.work / f"now-{max(0, args.builds - 1)}"
    env = _env(SRC, data)
    # what any fresh Python process costs on this machine (site-packages' .pth files included)
    startup = [_timed([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
    base = [sys.executable, "-m", "agentdex", "--home", str(args.home), "usage", "--json"]
    views: dict[str, Any] = {}
    for by in ("day", "model", "project", "session"):
        for refresh in (True, False):
            command = [*base, "--by", by] + ([] if refresh else ["--no-refresh"])
            samples = [_timed(command, env) for _ in range(args.runs)]
            key = f"{by}{'' if refresh else ' --no-refresh'}"
            views[key] = round(statistics.median(samples) * 1000, 1)
    ratio = None
    if args.builds:
        before, now = statistics.median(builds["before"]), statistics.median(builds["now"])
        ratio = round(now / before, 3)
    result = {
        "home": str(args.home),
        "cold_build_s": builds,
        "cold_build_ratio": ratio,
        "python_startup_ms_median": round(statistics.median(startup) * 1000, 1),
        "usage_fresh_ms_median": views,
        **usage_tables(data),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

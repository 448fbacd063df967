#!/usr/bin/env python3
"""What the search time budget costs and how fast it stops a runaway regex.

Builds a temporary HOME of generated Claude Code transcripts (plus one line
that makes ``(a+)+$`` backtrack for hours), indexes it, then measures:

* a warm search in this process (``api.search``) vs. the same search in a
  worker process (``search_in_worker``, what HTTP and MCP use): medians of N;
* how long ``(a+)+$`` takes to come back with a budget of 1 s, in this
  process (SIGALRM) and in a worker, and after a cancel at 0.5 s.

    python bench/bench_search_budget.py [--runs 20] [--sessions 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
os.environ["PYTHONPATH"] = str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")


def _write_home(home: Path, sessions: int) -> None:
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(7)) for _ in range(5000)]
    folder = home / ".claude" / "projects" / "-bench"
    folder.mkdir(parents=True)
    for n in range(sessions):
        lines = []
        for i in range(50):
            text = " ".join(rng.choice(words) for _ in range(60))
            if n == 0 and i == 0:
                text = "a" * 40 + "!"
            lines.append(
                {
                    "type": "user",
                    "uuid": f"{n}-{i}",
                    "parentUuid": None,
                    "sessionId": f"bench{n:05d}",
                    "cwd": "/bench",
                    "timestamp": "2026-01-01T00:00:00Z",
                    "message": {"role": "user", "content": text},
                }
            )
        (folder / f"bench{n:05d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def _median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        os.environ.update(
            HOME=str(home),
            AGENTDEX_DATA_DIR=str(Path(tmp) / "data"),
            AGENTDEX_CONFIG=str(Path(tmp) / "none.toml"),
        )
        _write_home(home, args.sessions)
        from agentdex.api import search as api
        from agentdex.api.search_worker import search_in_worker
        from agentdex.search.budget import Budget

        api.refresh(home=str(home))
        word = "abcdefg"  # a substring some records hold
        search_in_worker(word, home=str(home), refresh_first=False)  # start the fork server
        in_process = _median_ms(
            lambda: api.search(word, home=str(home), refresh_first=False), args.runs
        )
        in_worker = _median_ms(
            lambda: search_in_worker(word, home=str(home), refresh_first=False), args.runs
        )
        print(f"records: {args.sessions * 50}, runs: {args.runs}")
        print(f"warm search, this process:   {in_process:7.1f} ms (median)")
        print(f"warm search, worker process: {in_worker:7.1f} ms (median)")
        print(f"worker overhead:             {in_worker - in_process:7.1f} ms")
        runaway = "(a+)+$"
        started = time.perf_counter()
        local = api.search(
            runaway, regex=True, home=str(home), refresh_first=False, budget=Budget(1.0)
        )
        print(
            f"(a+)+$, budget 1 s, this process: {time.perf_counter() - started:5.2f} s "
            f"({local.status}, {local.stats['stopped']})"
        )
        started = time.perf_counter()
        worker = search_in_worker(
            runaway, regex=True, home=str(home), refresh_first=False, time_budget=1.0
        )
        print(
            f"(a+)+$, budget 1 s, worker:       {time.perf_counter() - started:5.2f} s "
            f"({worker.status}, {worker.stats['stopped']})"
        )
        cancel = threading.Event()
        threading.Timer(0.5, cancel.set).start()
        started = time.perf_counter()
        cancelled = search_in_worker(
            runaway, regex=True, home=str(home), refresh_first=False, time_budget=60, cancel=cancel
        )
        print(
            f"(a+)+$, cancelled at 0.5 s:       {time.perf_counter() - started:5.2f} s "
            f"({cancelled.status}, {cancelled.stats['stopped']})"
        )


if __name__ == "__main__":
    main()

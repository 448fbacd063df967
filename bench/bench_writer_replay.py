"""The writer alone: a cold build's parse-worker results recorded once, then replayed into it.

    python bench/bench_writer_replay.py record HOME --work DIR --results FILE [--src SRC]
    python bench/bench_writer_replay.py play HOME --work DIR --results FILE [--src SRC]

A cold build's writer shares two cores with its parse workers, so its main
thread's CPU moves with theirs. ``record`` runs one cold build of HOME (data in
``DIR/data``) and keeps every result a parse worker sent, as the writer read it
off the pipe, in FILE; ``play`` runs a cold build of HOME again with no parse
workers: each result is read from FILE in the same order (``refresh.plan``, the
stores, tantivy and the merge child all run as in a build). Same results in, so
``bench/store_digest.py`` on two plays' data dirs must agree, and the main
thread's CPU (``main_cpu_s``, ``time.thread_time``) of two source trees compares
the writer's work only. A recording is only valid for the worker code that made
it (``ingest/pipeline.py``'s wire format). ``spent_s``: CPU of a few writer steps.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LENGTH = struct.Struct("<Q")


def _timed(owner: Any, name: str, spent: dict[str, float]) -> None:
    real = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.thread_time() - started

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "play"))
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    args = parser.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    data = args.work / "data"
    shutil.rmtree(data, ignore_errors=True)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "no-config.toml").write_text("")
    os.environ.update(
        AGENTDEX_DATA_DIR=str(data),
        AGENTDEX_CONFIG=str(args.work / "no-config.toml"),
        AGENTDEX_RESIDENT_EMBEDDER="0",
        AGENTDEX_BACKGROUND_EMBED="0",
    )
    import agentdex.ingest.parallel as parallel
    import agentdex.ingest.workers as workers
    from agentdex.api import search as api
    from agentdex.index.writer import IndexWriter

    if args.mode == "record":
        out = args.results.open("wb")

        def next_result(self: Any) -> Any:
            raw = self.conns[self.received % len(self.conns)].recv_bytes()
            self.received += 1
            out.write(LENGTH.pack(len(raw)) + raw)
            return pickle.loads(raw)

        workers.ParseWorkers.next_result = next_result  # type: ignore[method-assign]
    else:

        class Replayed:
            """ParseWorkers' interface over the recorded results (nothing is forked)."""

            def __init__(self, count: int, work: Callable[..., Any]) -> None:
                self.file = args.results.open("rb")

            def can_submit(self) -> bool:
                return True

            def submit(self, *job: Any) -> None:
                pass

            def next_result(self) -> Any:
                (size,) = LENGTH.unpack(self.file.read(LENGTH.size))
                return pickle.loads(self.file.read(size))

            def abandon(self) -> None:
                pass

            def close(self) -> None:
                self.file.close()

            def __enter__(self) -> Replayed:
                return self

            def __exit__(self, *exc: object) -> None:
                self.close()

        workers.ParseWorkers = Replayed  # type: ignore[misc, assignment]
        parallel.worker_count = lambda total_bytes: 2
    spent: dict[str, float] = {}
    for name in ("_update_context_stats", "commit", "end_bulk_load"):
        _timed(IndexWriter, name, spent)
    cpu, main, wall = time.process_time(), time.thread_time(), time.perf_counter()
    stats = api.refresh(home=str(args.home))
    report = {
        "mode": args.mode,
        "src": str(args.src),
        "records": stats.to_json()["records_added"],
        "wall_s": round(time.perf_counter() - wall, 3),
        "main_cpu_s": round(time.thread_time() - main, 3),
        "process_cpu_s": round(time.process_time() - cpu, 3),
        "spent_s": {name: round(value, 3) for name, value in spent.items()},
        "load": os.getloadavg()[0],
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()

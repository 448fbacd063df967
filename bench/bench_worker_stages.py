"""A parse worker's CPU per record, by stage, for one or more source trees, interleaved.

Each run starts one fresh process per tree (trees in turn, the order flipped each run);
the process parses a subset of a home's files (every ``--stride``-th parseable one) and
times, over the same files, best of ``--repeat`` (``process_time``):

* ``parse``: the parser alone (records listed);
* ``+mask``: the parser, then the refresh's stages (secrets masked);
* ``+prepare``: ... then ``prepare_record`` (stages and prepare);
* ``worker``: :func:`agentdex.ingest.feed.parse_in_worker` whole, as a parse worker runs
  it (parser, masking, prepare, the archive's parts);
* ``worker+pickle``: that plus pickling each file's result as the worker's pipe does.

``worker+pickle`` is what a build's parse worker spends a record; the stages before
it are cumulative, so each stage's cost is a difference. A tree whose stages are
fused (no separate mask or prepare) reports the stages it has.

    python bench/bench_worker_stages.py HOME --src A/src [--src B/src] [--runs 5]
        [--stride 8] [--repeat 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_CHILD = r"""
import gc, json, sys, time
src, home, stride, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, src)
from multiprocessing.reduction import ForkingPickler
from agentdex.discovery import discover
from agentdex.ingest.feed import parse_in_worker
from agentdex.ingest.pipeline import prepare_record, stages
from agentdex.parsers import ParseCursor, run
from agentdex.readers import Diagnostics

sources = [s for s in discover(home).sources if s.row.parser][::stride]
steps = stages(redact_secrets=True)


def parse():
    n = 0
    for s in sources:
        for _ in run(s, ParseCursor(), Diagnostics()):
            n += 1
    return n


def mask():
    n = 0
    for s in sources:
        for record in run(s, ParseCursor(), Diagnostics()):
            for step in steps:
                record = step(record)
            n += 1
    return n


def prepare():
    n = 0
    for s in sources:
        for record in run(s, ParseCursor(), Diagnostics()):
            prepare_record(record, steps)
            n += 1
    return n


def worker():
    n = 0
    for s in sources:
        n += len(parse_in_worker(s, ParseCursor(), steps)[0])
    return n


def pickled():
    n = 0
    dumps = ForkingPickler.dumps
    for s in sources:
        result = parse_in_worker(s, ParseCursor(), steps)
        dumps(result)
        n += len(result[0])
    return n


out = {}
records = 0
for name, fn in (("parse", parse), ("+mask", mask), ("+prepare", prepare),
                 ("worker", worker), ("worker+pickle", pickled)):
    best = None
    for _ in range(repeat):
        gc.collect()
        a = time.process_time()
        records = fn()
        took = time.process_time() - a
        best = took if best is None else min(best, took)
    out[name] = best
print(json.dumps({"records": records, "files": len(sources), "seconds": out}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home")
    ap.add_argument("--src", action="append", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--stride", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json")
    args = ap.parse_args()
    results: dict[str, list[dict[str, object]]] = {src: [] for src in args.src}
    started = time.time()
    for i in range(args.runs):
        order = args.src if i % 2 == 0 else args.src[::-1]
        for src in order:
            env = {**os.environ, "PYTHONPATH": src}
            proc = subprocess.run(
                [args.python, "-c", _CHILD, src, args.home, str(args.stride), str(args.repeat)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            got["load"] = os.getloadavg()[0]
            results[src].append(got)
            per = {k: round(v / got["records"] * 1e6, 2) for k, v in got["seconds"].items()}
            print(f"run {i} {src}: {got['records']} records  us/record {per}", flush=True)
    summary = {}
    for src, runs in results.items():
        records = runs[0]["records"]
        names = list(runs[0]["seconds"])  # type: ignore[call-overload]
        summary[src] = {
            name: round(
                statistics.median(r["seconds"][name] for r in runs)  # type: ignore[index]
                / records  # type: ignore[operator]
                * 1e6,
                2,
            )
            for name in names
        }
        print(f"median us/record {src}: {summary[src]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "command": sys.argv,
                    "started_utc": time.strftime("%H:%M:%S", time.gmtime(started)),
                    "ended_utc": time.strftime("%H:%M:%S", time.gmtime()),
                    "median_us_per_record": summary,
                    "runs": results,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()

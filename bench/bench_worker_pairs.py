"""A parse worker's CPU per record, two trees A/B in pairs of passes seconds apart.

    python bench/bench_worker_pairs.py HOME PAIRS SRC_A SRC_B [--python PY] > out.json

``bench_worker_stages.py`` starts a fresh process per tree and run; on a machine whose
speed moves between passes seconds apart (this project's: the same tree's passes moved
47 -> 65 us a record within one process) a ~10-20% change is lost in it. Here one
long-lived process per tree parses c250's every eighth file (warmed once), and passes
alternate A,B then B,A, pair after pair, so both trees see the machine in the same
seconds; the result is the median of the per-pair ratios B/A. A pass is
``parse_in_worker`` plus pickling each file's result (bench_worker_stages'
``worker+pickle``), then, as a second series, the parsers alone (``parse``);
``process_time`` each. ``--series worker,prepare,parse`` also times ``prepare``: what a
worker does after the parsers (``prepare_stream``: masking, each record's fields, the
kept source lines) plus pickling, over records parsed once before the passes (copies,
since masking rewrites a record's text).
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
import copy, gc, sys, time
src, home = sys.argv[1], sys.argv[2]
sys.path.insert(0, src)
from multiprocessing.reduction import ForkingPickler
from agentdex.discovery import discover
from agentdex.ingest.feed import parse_in_worker
from agentdex.ingest.pipeline import ArchiveParts, prepare_stream, stages
try:
    from agentdex.index.columns import Columns
except ImportError:
    Columns = None
from agentdex.parsers import ParseCursor, run
from agentdex.readers import Diagnostics

sources = [s for s in discover(home).sources if s.row.parser][::8]
steps = stages(redact_secrets=True)
dumps = ForkingPickler.dumps
parsed = [(s, list(run(s, ParseCursor(), Diagnostics()))) for s in sources]


def worker():
    n = 0
    for s in sources:
        result = parse_in_worker(s, ParseCursor(), steps)
        dumps(result)
        n += len(result[0])
    return n


def parse():
    n = 0
    for s in sources:
        for _ in run(s, ParseCursor(), Diagnostics()):
            n += 1
    return n


def prepare():
    n = 0
    took = 0.0
    for s, records in parsed:
        records = [copy.copy(r) for r in records]
        a = time.process_time()
        archive = ArchiveParts(str(s.path), jsonl="jsonl" in s.row.format, redact=True)
        out = Columns() if Columns is not None else []  # a tree from before the columns: a list
        prepare_stream(iter(records), steps, archive, out)
        archive.close()
        dumps(out)
        took += time.process_time() - a
        n += len(out)
    return n, took


passes = {"worker": worker, "parse": parse, "prepare": prepare}
for fn in passes.values():
    fn()
for cmd in sys.stdin:
    gc.collect()
    a = time.process_time()
    got = passes[cmd.strip()]()
    n, took = got if isinstance(got, tuple) else (got, time.process_time() - a)
    print(n, took, flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home")
    ap.add_argument("pairs", type=int)
    ap.add_argument("src_a")
    ap.add_argument("src_b")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--series", default="worker,parse", help="of worker, prepare, parse")
    args = ap.parse_args()
    series = args.series.split(",")
    a, b = args.src_a, args.src_b
    procs = {
        src: subprocess.Popen(
            [args.python, "-c", _CHILD, src, args.home],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": src},
        )
        for src in (a, b)
    }
    out: dict[str, object] = {
        "command": sys.argv,
        "started_utc": time.strftime("%H:%M:%S", time.gmtime()),
        "load_before": os.getloadavg()[0],
    }
    passes: list[dict[str, object]] = []
    for what in series:
        for i in range(args.pairs):
            got: dict[str, tuple[int, float]] = {}
            for src in (a, b) if i % 2 == 0 else (b, a):
                proc = procs[src]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(what + "\n")
                proc.stdin.flush()
                n, took = proc.stdout.readline().split()
                got[src] = (int(n), float(took))
            a_us = got[a][1] / got[a][0] * 1e6
            b_us = got[b][1] / got[b][0] * 1e6
            passes.append({"what": what, "a_us": a_us, "b_us": b_us, "records": got[a][0]})
            print(what, i, round(a_us, 2), round(b_us, 2), file=sys.stderr, flush=True)
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    out["load_after"] = os.getloadavg()[0]
    out["ended_utc"] = time.strftime("%H:%M:%S", time.gmtime())
    for what in series:
        mine = [p for p in passes if p["what"] == what]
        ratios = [float(p["b_us"]) / float(p["a_us"]) for p in mine]  # type: ignore[arg-type]
        out[what] = {
            "a_median_us": round(statistics.median(float(p["a_us"]) for p in mine), 2),  # type: ignore[arg-type]
            "b_median_us": round(statistics.median(float(p["b_us"]) for p in mine), 2),  # type: ignore[arg-type]
            "ratio_median": round(statistics.median(ratios), 3),
            "ratios": [round(r, 3) for r in ratios],
        }
    out["passes"] = passes
    out["a"], out["b"] = a, b
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

"""Where a fill's memory goes: ``agentdex index --semantic``'s steps, RSS sampled per step.

    python bench/bench_fill_memory.py HOME --work W [--src A/src --src B/src] [--batches 4]
        [--store DIR [--unembed K]] [--every 0.02] [--threads 2] [--rounds 1]
        [--no-refresh] [--query-store DIR]

``W`` is a work dir holding ``config.toml`` and ``data/`` with an index of
HOME (``AGENTDEX_DATA_DIR=W/data``); the bench owns ``W``'s ``semantic/``
folder: before each run it is removed, or replaced by a copy of ``--store``
(a whole store, e.g. one with a vector for every record: then the run
measures a fill that has nothing left to embed, i.e. the steps that end a
complete fill at that size: titles, garbage collection, compaction, the
coverage; ``--unembed K`` takes the vectors of the K highest record ids out
of that copy first, so the fill embeds them and those steps run with the
model loaded, as they do at the end of a whole fill).

Each run is one fresh, byte-compiled process running ``agentdex --home HOME
index --semantic --json`` in-process (``cli.main``: refresh, index status,
context history, the fill with ``--threads`` model calls, the coverage it
reports), its fill cut to ``--batches`` batches of 64 records
(``embed_missing(max_records=...)``); ``--no-refresh`` runs only the fill and
the coverage. A thread reads ``/proc/self/status`` every
``--every`` s (VmRSS, RssAnon, RssFile) and notes which step runs (the
innermost of the wrapped functions below that exist in that source tree);
the report gives each step's highest sample and the RSS when it ended, the
process' VmHWM, and the seconds from the fill's start to its first embedded
batch. Runs alternate between the trees ``--rounds`` times.

``--query-store DIR`` (a vector store folder) then times, in ``--rounds``
fresh processes of the last tree, what the first search by meaning of a
process pays for the prefilter (its sign bits derived from ``q4``:
``Rows.signs()``) and a query's embedding with the model loaded (median of
36, one query a call, as a search embeds it). One JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_semantic import run_py

SRC = Path(__file__).resolve().parent.parent / "src"

#: (module, attribute path, step name): wrapped when present in the tree measured
STEPS = [
    ("agentdex.api.search", "refresh", "refresh"),
    ("agentdex.api.search", "index_status", "index status"),
    ("agentdex.api.context_history", "record_indexed_workspaces", "context history"),
    ("agentdex.semantic.fill", "Live.read", "read live records"),
    ("agentdex.semantic.fill", "Todo.read", "read live records"),
    ("agentdex.semantic.fill", "link", "link"),
    ("agentdex.semantic.link", "link", "link"),
    ("agentdex.semantic.fill", "Live.missing", "todo list"),
    ("agentdex.semantic.fill", "Todo.pages", "todo list"),
    ("agentdex.semantic.model", "embedder", "model load"),
    ("agentdex.semantic.fill", "_texts", "read texts"),
    ("agentdex.semantic.fill", "_embed_batch", "embed batch"),
    ("agentdex.semantic.fill", "live_titles", "titles"),
    ("agentdex.semantic.fill", "_embed_titles", "titles"),
    ("agentdex.semantic.store", "collect_garbage", "garbage"),
    ("agentdex.semantic.store", "compact", "compact"),
    ("agentdex.semantic.fill", "coverage", "coverage"),
]

CHILD = r"""
import importlib, inspect, json, sys, threading, time
sys.path.insert(0, {src!r})
_stack = []
_peak = {{}}
_after = {{}}
_t0 = time.perf_counter()

def _status():
    out = {{}}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = round(int(value.split()[0]) / 1024, 1)
    return out

def _note(step):
    s = _status()
    if s["VmRSS"] > _peak.get(step, {{}}).get("VmRSS", -1):
        _peak[step] = {{"VmRSS": s["VmRSS"], "RssAnon": s["RssAnon"], "RssFile": s["RssFile"],
                       "t": round(time.perf_counter() - _t0, 2)}}

def _sample():
    while True:
        _note(_stack[-1] if _stack else "other")
        time.sleep({every})

def _wrap(module, path, step):
    try:
        owner = importlib.import_module(module)
    except ImportError:
        return
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part, None)
        if owner is None:
            return
    raw = inspect.getattr_static(owner, name, None)
    if raw is None:
        return
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw

    def wrapper(*args, **kwargs):
        _stack.append(step)
        try:
            return func(*args, **kwargs)
        finally:
            _note(step)
            _stack.pop()
            _after[step] = _status()["VmRSS"]

    if isinstance(raw, classmethod):
        wrapper = classmethod(wrapper)
    elif isinstance(raw, staticmethod):
        wrapper = staticmethod(wrapper)
    setattr(owner, name, wrapper)

for _module, _path, _step in {steps!r}:
    _wrap(_module, _path, _step)
threading.Thread(target=_sample, daemon=True).start()

home = {home!r}
import agentdex.api.semantic as _semantic
first = []
started = []
result = []
_embed_missing = _semantic.embed_missing

by_batch = []

def _progress(done, todo):
    if done and not first:
        first.append(time.perf_counter() - started[0])
    if done:
        by_batch.append(_status()["VmRSS"])

def _embed(*args, **kwargs):  # the CLI's call, cut to the first batches
    kwargs.update(max_records={records}, progress=_progress)
    started.append(time.perf_counter())
    stats = _embed_missing(*args, **kwargs)
    started.append(time.perf_counter())
    result.append(stats)
    return stats

_semantic.embed_missing = _embed
if {refresh!r}:  # what `agentdex index --semantic --json` does, in this process
    import os
    from agentdex.cli import main
    sys.stdout.flush()
    _saved, _null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(_null, 1)
    try:
        main(["--home", home, "index", "--semantic", "--json"])
    except SystemExit as exc:
        if exc.code:
            raise
    finally:
        sys.stdout.flush()
        os.dup2(_saved, 1)
else:  # the fill and the coverage alone
    _semantic.embed_missing(home=home)
    _semantic.semantic_status(home=home)
stats = result[0]
fill_s = started[1] - started[0]
_note("other")
print(json.dumps({{
    "VmHWM": _status()["VmHWM"],
    "first_batch_s": round(first[0], 2) if first else None,
    "fill_s": round(fill_s, 2),
    "peak_by_step": _peak,
    "rss_by_batch": by_batch,
    "rss_after_step": _after,
    "stats": {{k: v for k, v in stats.to_json().items()
              if k in ("eligible", "embedded_before", "records_done", "texts_embedded",
                       "linked", "complete", "members_dropped", "vectors_dropped")}},
}}))
"""


#: ``--query-store``: one fresh process a round; the first search by meaning's sign bits
#: (derived from ``q4`` in that process), then query embeddings with the model loaded
QUERY_CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, {src!r})
from pathlib import Path
from agentdex.semantic import store
from agentdex.semantic.model import DEFAULT, embedder
folder = Path({folder!r})
db = store.connect(folder, create=False)
rows = store.read_rows(folder, db, DEFAULT.dim)
t = time.perf_counter()
bits = rows.signs()
signs_s = time.perf_counter() - t
e = embedder(DEFAULT, threads=1)
queries = {queries!r}
e.embed(queries[:3])  # warm: the first call sets up the session's buffers
times = []
for text in queries * 3:
    t = time.perf_counter()
    e.embed([text])
    times.append(time.perf_counter() - t)
print(json.dumps({{"rows": len(rows), "sign_bytes": int(bits.nbytes),
                  "signs_s": round(signs_s, 4),
                  "query_embed_ms_p50": round(statistics.median(times) * 1000, 2),
                  "query_embed_ms_max": round(max(times) * 1000, 2)}}))
"""

#: how people recall a problem (the kind of query a search by meaning gets)
QUERIES = [
    "where did we deal with the upstream service throttling us",
    "pictures rotated wrongly after upload",
    "shrink the docker image",
    "table locked during a schema change",
    "flaky test that only fails on CI at night",
    "why did the deploy roll back yesterday",
    "memory leak in the background worker",
    "login broke after the token refresh change",
    "speed up the slow dashboard query",
    "what did we decide about retries for the payment webhook",
    "csv export has the wrong line endings",
    "timezone bug in the weekly report",
]


def query_costs(args: argparse.Namespace, src: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(PYTHONPATH=str(src))
    code = QUERY_CHILD.format(src=str(src), folder=str(args.query_store), queries=QUERIES)
    return run_py(code, env)


def _semantic(work: Path) -> Path:
    found = list((work / "data" / "homes").glob("*/index"))
    if len(found) != 1:
        raise SystemExit(f"expected one index under {work}/data/homes, found {len(found)}")
    return found[0] / "semantic"


def _unembed(folder: Path, count: int) -> None:
    """Take the vectors of the ``count`` highest record ids away again (keys and every
    member of them): the fill then embeds them, so the steps ending a complete fill run
    with the model loaded, as at the end of a whole fill."""
    import sqlite3

    db = sqlite3.connect(folder / "vectors.db")
    with db:
        ckeys = [
            c for (c,) in db.execute("SELECT ckey FROM members ORDER BY rid DESC LIMIT ?", (count,))
        ]
        db.executemany("DELETE FROM members WHERE ckey = ?", ((c,) for c in ckeys))
        db.executemany("DELETE FROM keys WHERE ckey = ?", ((c,) for c in ckeys))
    db.close()


def run(args: argparse.Namespace, src: Path) -> dict[str, Any]:
    folder = _semantic(args.work)
    shutil.rmtree(folder, ignore_errors=True)
    if args.store is not None:
        shutil.copytree(args.store, folder)
        if args.unembed:
            _unembed(folder, args.unembed)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool runs byte-compiled modules
    env.update(
        AGENTDEX_DATA_DIR=str(args.work / "data"),
        AGENTDEX_CONFIG=str(args.work / "config.toml"),
        AGENTDEX_RESIDENT_EMBEDDER="0",
        AGENTDEX_BACKGROUND_EMBED="0",
        AGENTDEX_EMBED_THREADS=str(args.threads),
        PYTHONPATH=str(src),
    )
    code = CHILD.format(
        src=str(src),
        every=args.every,
        steps=STEPS,
        home=str(args.home),
        refresh=not args.no_refresh,
        records=args.batches * 64,
        threads=args.threads,
    )
    started = time.perf_counter()
    result = run_py(code, env)
    result["process_s"] = round(time.perf_counter() - started, 2)
    result["src"] = str(src)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--src", type=Path, action="append")
    parser.add_argument("--store", type=Path)
    parser.add_argument("--unembed", type=int, default=0, help="with --store: vectors taken away")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--every", type=float, default=0.02)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-refresh", action="store_true")
    parser.add_argument("--query-store", type=Path, help="also time sign bits + query embedding")
    args = parser.parse_args()
    sources = [s.resolve() for s in (args.src or [SRC])]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for src in sources:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env)
    runs = [run(args, src) for _ in range(args.rounds) for src in sources]
    out: dict[str, Any] = {"runs": runs}
    if args.query_store is not None:
        queries = [query_costs(args, sources[-1]) for _ in range(args.rounds)]
        out["queries"] = queries
        out["signs_s_median"] = statistics.median(q["signs_s"] for q in queries)
        out["query_embed_ms_p50_median"] = statistics.median(
            q["query_embed_ms_p50"] for q in queries
        )
    out["load_after"] = Path("/proc/loadavg").read_text().split()[:3]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

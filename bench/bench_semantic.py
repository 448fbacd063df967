"""Search by meaning at scale: embedding throughput, memory, vector size, query latency.

    python bench/bench_semantic.py CORPUS --work DIR [--runs 11] [--sample 2000] [--fill]
        [--sample-only]

Steps, each in its own process (peak RSS is that process's own):

1. ``agentdex index`` of CORPUS into DIR (skipped when DIR already has it);
2. throughput: embed the ``--sample`` newest prompts/replies with 1 thread,
   then the next ``--sample`` with 2 threads (texts/s and chunks/s, peak RSS);
3. ``--fill [N]``: embed everything left (or N more records) with every core
   (wall time, peak RSS) - long at 1 GB, so run it under ``shared-run``;
   ``--scan N`` also times the vector scan alone over N synthetic vectors
   (random unit vectors: the scan's cost depends on the count only; recall is
   measured on the real vectors);
4. vectors: bytes of ``semantic/`` against the corpus' bytes; the sign-bit
   prefilter's recall@10 against exact scoring of every vector;
5. ``--relink``: the link a rebuild does (semantic/link.py), timed on the
   store as it is (its generation marked stale first: what a rebuild leaves);
6. queries: fresh ``agentdex search QUERY --json`` processes, in turn: hybrid
   with the resident embedder (the default: the first search starts it, it is
   stopped at the end), hybrid with ``AGENTDEX_RESIDENT_EMBEDDER=0`` (the
   process loads the model) and ``--lexical``, ``--runs`` each (p50/p95), plus
   the query embedding alone in a warm process. ``--skip-loading`` leaves out
   the searches that load the model (each one slows the next fresh processes
   for a while on this 2-core machine: 0.2 s searches take 0.6-0.9 s after it).
   ``QUERIES`` each hold a word the generated corpus never has but one: their
   lexical half stops at that word. ``--occurring`` uses ``OCCURRING`` instead,
   queries whose every word is in the corpus (the lexical half does its work).
   ``--against SRC --against-work DIR``: the same fresh searches by another
   checkout's ``src`` on its own copy of the work dir (its own resident),
   interleaved run by run with this one's (which goes first alternates), so a
   before/after is measured under the same load. ``--python PATH`` runs every
   process with that interpreter (e.g. a clean venv from ``bench/make_venv.py``;
   the resident embedder a search starts runs with it too),
   ``--against-python PATH`` the other checkout's.

Prints one JSON report (``--out`` writes it too).
"""

# ruff: noqa: E501 - the steps are small programs in strings, run in fresh processes
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
PYTHON = sys.executable  # the interpreter of every agentdex process (--python)

QUERIES = [
    "the upstream service is throttling our requests",
    "database migration locked the table during deploy",
    "memory keeps growing until the process restarts",
    "tests fail only around daylight saving time",
    "docker image is too large",
    "flaky network timeouts when calling the api",
    "how do we rotate the signing keys",
    "build runs out of memory",
    "cache stampede when keys expire",
    "user uploads rejected by storage",
    "pagination skips some items",
]

#: queries in other words whose every word occurs in the generated corpus
#: (bench/generate_corpus.py COMMON): the lexical half intersects real postings
OCCURRING = [
    "retry backoff when the server request fails with a timeout",
    "database migration lock on the table",
    "docker image size for the release pipeline",
    "tests failing in the ci pipeline",
    "cache token timeout after one hour",
    "how to change the secret key",
    "search index query performance",
    "memory of the worker thread queue",
]


def env_for(corpus: Path, work: Path, src: Path = SRC) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(corpus),
        AGENTDEX_DATA_DIR=str(work / "data"),
        AGENTDEX_CONFIG=str(work / "config.toml"),
        AGENTDEX_BACKGROUND_EMBED="0",
        PYTHONPATH=str(src),
        PYTHONDONTWRITEBYTECODE="",
    )
    return env


def run_py(code: str, env: dict[str, str], python: str | None = None) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last."""
    done = subprocess.run(
        [python or PYTHON, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"step failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


FILL = """
import json, resource, time
from agentdex.api.semantic import embed_missing
t = time.perf_counter()
s = embed_missing(max_records={limit}, threads={threads})
sec = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"records": s.records_done, "texts": s.texts_embedded,
    "chunks": s.chunks_embedded, "seconds": round(sec, 2),
    "texts_per_s": round(s.texts_embedded / sec, 1), "chunks_per_s": round(s.chunks_embedded / sec, 1),
    "peak_rss_mb": round(rss, 1), "threads": {threads}, "eligible": s.eligible}}))
"""

RECALL = """
import json, time, numpy as np
from agentdex.index.store import index_root, Location
from agentdex.semantic import query as q
from agentdex.semantic.model import embedder
root = index_root(None)
vi = q.VectorIndex.open(root, Location(root).current().name)
rows = vi.rows
e = embedder()
queries = {queries}
hits = 0
for text in queries:
    v = e.embed([text])[0]
    exact = q._exact(rows, v, np.arange(len(rows), dtype=np.int64))
    top = set(np.argsort(-exact)[:10].tolist())
    saved = q.EXACT_MAX
    q.EXACT_MAX = 0
    idx = q._candidates(rows, v)
    q.EXACT_MAX = saved
    pre = q._exact(rows, v, idx)
    got = set(idx[np.argsort(-pre)[:10]].tolist())
    hits += len(top & got)
times = []
for text in queries * 3:
    t = time.perf_counter(); e.embed([text]); times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({{"vectors": len(rows), "prefilter_recall_at_10": round(hits / (10 * len(queries)), 3),
    "prefilter_candidates": q.PREFILTER, "query_embed_ms_p50": round(times[len(times)//2] * 1000, 2)}}))
"""


SCAN = """
import json, time, numpy as np
from agentdex.semantic import query as q, store
rng = np.random.default_rng(7)
n = {n}
parts = []
for at in range(0, n, 65536):
    v = rng.standard_normal((min(65536, n - at), 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    parts.append(store.quantize4(v))
rows = store.Rows(n=n, q4=np.concatenate([p[0] for p in parts]), scale=np.concatenate([p[1] for p in parts]),
    ckey=np.arange(n, dtype=np.int64))
rows.signs()  # derived once, as the resident keeps them between searches
times = []
for i in range(11):
    v = rng.standard_normal(384).astype(np.float32); v /= np.linalg.norm(v)
    t = time.perf_counter()
    idx = q._candidates(rows, v); sims = q._exact(rows, v, idx); np.argsort(-sims)[:200]
    times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({{"vectors": n, "scan_ms_p50": round(times[5] * 1000, 1), "scan_ms_max": round(times[-1] * 1000, 1)}}))
"""


RELINK = """
import json, time
from agentdex.index.store import index_root
from agentdex.semantic import store
from agentdex.semantic.link import relink
from agentdex.semantic.model import DEFAULT
root = index_root(None)
db = store.connect(store.semantic_dir(root), create=True)
store.set_meta(db, "generation", "before-the-rebuild")
db.close()
t = time.perf_counter()
n = relink(root, DEFAULT.id)
print(json.dumps({"linked": n, "seconds": round(time.perf_counter() - t, 3)}))
"""

STOP = """
import json
from agentdex.semantic import resident
try:  # the resident searcher, where the checkout has one
    from agentdex.api import search_resident
except ImportError:
    search_resident = None
searcher = search_resident.stop() if search_resident is not None else None
print(json.dumps({"stopped": resident.stop(), "searcher_stopped": searcher}))
"""


STOP_SEARCHER = """
import json
try:  # the resident searcher, where the checkout has one
    from agentdex.api import search_resident
except ImportError:
    search_resident = None
print(json.dumps({"stopped": search_resident.stop() if search_resident is not None else None}))
"""


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def fresh_search(
    args: list[str], env: dict[str, str], python: str | None = None
) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(
        [python or PYTHON, "-m", "agentdex", "search", "--json", "-n", "20", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"search failed: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument(
        "--fill", nargs="?", const=-1, type=int, help="embed the rest of the corpus (or N more)"
    )
    parser.add_argument("--scan", type=int, default=0, help="time a scan of N synthetic vectors")
    parser.add_argument("--skip-sample", action="store_true")
    parser.add_argument(
        "--sample-only", action="store_true", help="stop after the throughput samples (step 2)"
    )
    parser.add_argument("--relink", action="store_true", help="time the link after a rebuild")
    parser.add_argument(
        "--skip-loading",
        action="store_true",
        help="leave out the searches that load the model in the process (a model load"
        " slows the next fresh processes for a while on a small machine)",
    )
    parser.add_argument(
        "--occurring", action="store_true", help="queries whose every word the corpus has"
    )
    parser.add_argument("--against", type=Path, help="another checkout's src, interleaved")
    parser.add_argument("--against-work", type=Path, help="its copy of the work dir")
    parser.add_argument("--python", help="the interpreter of every agentdex process")
    parser.add_argument("--against-python", help="the --against checkout's (default --python)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    global PYTHON
    if args.python:
        PYTHON = args.python
    if (args.against is None) != (args.against_work is None):
        parser.error("--against and --against-work go together")
    work = args.work.absolute()
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.toml").touch()
    env = env_for(args.corpus.absolute(), work)
    report: dict[str, Any] = {"corpus": str(args.corpus), "corpus_bytes": dir_bytes(args.corpus)}
    report["python"] = PYTHON
    started = time.perf_counter()
    subprocess.run(
        [PYTHON, "-m", "agentdex", "index", "--json"],
        env=env,
        check=True,
        capture_output=True,
    )
    report["index_seconds"] = round(time.perf_counter() - started, 1)
    queries = OCCURRING if args.occurring else QUERIES
    report["queries"] = "occurring" if args.occurring else "rare"
    if args.against is not None:
        other = env_for(args.corpus.absolute(), args.against_work.absolute(), args.against)
        (args.against_work / "config.toml").touch()
        pythons = {"this": PYTHON, "against": args.against_python or PYTHON}
        report["against"] = against(env, other, queries, args.runs, str(args.against), pythons)
        text = json.dumps(report, indent=1)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")
        return 0
    if not args.skip_sample:
        report["sample_1_thread"] = run_py(FILL.format(limit=args.sample, threads=1), env)
        report["sample_2_threads"] = run_py(FILL.format(limit=args.sample, threads=2), env)
    if args.sample_only:
        print(json.dumps(report, indent=1))
        if args.out:
            args.out.write_text(json.dumps(report, indent=1) + "\n")
        return 0
    if args.fill:
        limit = None if args.fill < 0 else args.fill
        report["fill"] = run_py(FILL.format(limit=limit, threads=2), env)
    if args.scan:
        report["scan_synthetic"] = run_py(SCAN.format(n=args.scan), env)
    folder = next((work / "data").rglob("semantic"))
    report["vector_bytes"] = dir_bytes(folder)
    report["vector_ratio"] = round(report["vector_bytes"] / report["corpus_bytes"], 4)
    report["vectors"] = run_py(RECALL.format(queries=QUERIES), env)
    if args.relink:
        report["relink"] = run_py(RELINK, env)
    resident_env = {**env, "AGENTDEX_RESIDENT_EMBEDDER": "1"}
    process_env = {**env, "AGENTDEX_RESIDENT_EMBEDDER": "0"}
    try:
        # the first search starts the resident embedder (its start is reported apart)
        first, data = fresh_search([queries[0]], resident_env)
        report["first_search_starting_the_resident_ms"] = round(first * 1000, 1)
        hybrid: list[float] = []
        loading: list[float] = []
        lexical: list[float] = []
        embed: list[float] = []
        embed_loading: list[float] = []
        via: set[str] = set()
        for run in range(args.runs):
            query = queries[run % len(queries)]
            seconds, data = fresh_search([query], resident_env)
            hybrid.append(seconds)
            embed.append(data["stats"].get("semantic", {}).get("query_seconds", 0.0))
            via.add(data["stats"].get("semantic", {}).get("embedder", "?"))
            if not args.skip_loading:
                seconds, data = fresh_search([query], process_env)
                loading.append(seconds)
                embed_loading.append(data["stats"].get("semantic", {}).get("query_seconds", 0.0))
            seconds, _ = fresh_search(["--lexical", query], env)
            lexical.append(seconds)
    finally:
        report["resident_stop"] = run_py(STOP, resident_env)
    word = []
    for _ in range(args.runs):
        seconds, _ = fresh_search(["--lexical", "timeout"], env)
        word.append(seconds)
    report["fresh_search_ms"] = {
        "hybrid_resident_p50": pct(hybrid, 0.5),
        "hybrid_resident_p95": pct(hybrid, 0.95),
        "hybrid_resident_embedders": sorted(via),
        "query_embedding_resident_p50": pct(embed, 0.5),
        "hybrid_loading_the_model_p50": pct(loading, 0.5) if loading else None,
        "hybrid_loading_the_model_p95": pct(loading, 0.95) if loading else None,
        "query_embedding_with_model_load_p50": pct(embed_loading, 0.5) if loading else None,
        "lexical_same_queries_p50": pct(lexical, 0.5),
        "lexical_same_queries_p95": pct(lexical, 0.95),
        "lexical_word_p50": pct(word, 0.5),
        "runs": args.runs,
    }
    report["mean_hybrid_resident_over_lexical"] = round(
        statistics.mean(hybrid) / statistics.mean(lexical), 2
    )
    if loading:
        report["mean_hybrid_loading_over_lexical"] = round(
            statistics.mean(loading) / statistics.mean(lexical), 2
        )
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


def against(
    mine: dict[str, str],
    other: dict[str, str],
    queries: list[str],
    runs: int,
    src: str,
    pythons: dict[str, str],
) -> dict[str, Any]:
    """Fresh hybrid (resident) and lexical searches by two checkouts (each with its
    interpreter), interleaved."""
    envs = {"this": mine, "against": other}
    first: dict[str, float] = {}
    for name, env in envs.items():
        subprocess.run(
            [pythons[name], "-m", "compileall", "-q", env["PYTHONPATH"]],
            check=True,
            env=env,
            capture_output=True,
        )
        subprocess.run(
            [pythons[name], "-m", "agentdex", "index", "--json"],
            env=env,
            check=True,
            capture_output=True,
        )
        resident_env = {**env, "AGENTDEX_RESIDENT_EMBEDDER": "1"}
        run_py(STOP, resident_env, pythons[name])  # none left by an earlier run
        # the embedder started (by a first search; the resident searcher it starts, where
        # the checkout has one, stopped), then the first search with no resident searcher
        # (it starts one after answering): reported apart; one more lets the searcher load
        fresh_search([queries[0]], resident_env, pythons[name])
        run_py(STOP_SEARCHER, resident_env, pythons[name])
        time.sleep(0.5)
        seconds, _ = fresh_search([queries[1]], resident_env, pythons[name])
        first[name] = round(seconds * 1000, 1)
        time.sleep(1.0)
        fresh_search([queries[0]], resident_env, pythons[name])
    times: dict[str, dict[str, list[float]]] = {k: {"hybrid": [], "lexical": []} for k in envs}
    try:
        for run in range(runs):
            query = queries[run % len(queries)]
            order = list(envs) if run % 2 == 0 else list(reversed(envs))
            for name in order:
                env = envs[name]
                resident_env = {**env, "AGENTDEX_RESIDENT_EMBEDDER": "1"}
                seconds, _ = fresh_search([query], resident_env, pythons[name])
                times[name]["hybrid"].append(seconds)
            for name in order:
                seconds, _ = fresh_search(["--lexical", query], envs[name], pythons[name])
                times[name]["lexical"].append(seconds)
    finally:
        for name, env in envs.items():
            run_py(STOP, {**env, "AGENTDEX_RESIDENT_EMBEDDER": "1"}, pythons[name])
    out: dict[str, Any] = {"src": src, "runs": runs, "python": pythons}
    out["first_search_ms"] = first  # no resident yet (each checkout's first, apart)
    for name, got in times.items():
        out[name] = {
            "hybrid_p50": pct(got["hybrid"], 0.5),
            "hybrid_p95": pct(got["hybrid"], 0.95),
            "lexical_p50": pct(got["lexical"], 0.5),
            "lexical_p95": pct(got["lexical"], 0.95),
        }
    out["hybrid_p50_this_over_against"] = round(
        out["this"]["hybrid_p50"] / out["against"]["hybrid_p50"], 3
    )
    return out


if __name__ == "__main__":
    raise SystemExit(main())

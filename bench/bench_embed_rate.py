"""Embedding throughput of checkouts on the same real texts, and where a batch's time goes.

    python bench/bench_embed_rate.py INDEX_ROOT --src A/src --src B/src \\
        [--texts 1500] [--threads 1 --threads 2] [--rounds 2] [--out FILE]

INDEX_ROOT is an index folder (``<data dir>/homes/<home>/index``; read only).
``--texts`` eligible records are sampled from its current generation (seeded,
spread over the whole history) and read as a fill reads them (lower-cased, the
first ``MAX_CHARS``). Then, in a fresh process per checkout, thread count and
round (checkouts interleaved, so both see the same load), the fill's own
embedding step (``semantic.fill._embed_texts``: tokenize, chunk, sort by length,
model calls side by side on ``--threads`` lanes, mean of the chunks) embeds them
all: wall seconds, the process' CPU seconds, texts per second and per CPU
second, peak RSS. Each checkout's vectors are kept and compared with the first
checkout's (cosine per text).

The first process also describes the texts (item 1 of the throughput work):
chunks per text (capped and uncapped), tokens per chunk, the share of full
128-token chunks, and the tokenizer's CPU time against the model's.

Prints one JSON report (``--out`` writes it too).
"""

# ruff: noqa: E501 - the steps are small programs in strings, run in fresh processes
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_semantic import run_py

SAMPLE = """
import json, random, sys
from pathlib import Path
from agentdex.index.store import Location, open_reader_db
from agentdex.index.segments import BlockFile
from agentdex.semantic.link import Live, blocks_of
from agentdex.semantic.fill import _texts, MAX_CHARS
gen = Location(Path({root!r})).current()
db = open_reader_db(gen)
db.execute("PRAGMA mmap_size=0")
blocks = BlockFile(gen)
db.execute("BEGIN")
live = Live.read(db)
rids = sorted(random.Random(20).sample(live.rids.tolist(), min({n}, len(live))))
out = []
for at in range(0, len(rids), 512):
    part = rids[at : at + 512]
    got = _texts(db, blocks, part, blocks_of(db, part))
    out += [got.get(r, b"")[: MAX_CHARS * 4].decode("utf-8", "replace")[:MAX_CHARS] for r in part]
json.dump(out, open({dest!r}, "w"))
print(json.dumps({{"eligible": len(live), "sampled": len(out)}}))
"""

DESCRIBE = """
import json, time
import numpy as np
from agentdex.semantic.model import Embedder
from agentdex.semantic.fill import MAX_CHUNKS
texts = json.load(open({texts!r}))
e = Embedder()
t = time.process_time()
capped = e.encode(texts, max_chunks=MAX_CHUNKS)
tokenize = time.process_time() - t
whole = e.encode(texts, max_chunks=1000)
lens = [len(c) for chunks in capped for c in chunks]
per = [len(c) for c in capped]
print(json.dumps({{
    "texts": len(texts),
    "chunks_per_text": round(sum(per) / len(per), 3),
    "texts_by_chunks_capped": {{str(k): per.count(k) for k in sorted(set(per))}},
    "texts_by_chunks_uncapped": {{str(k): sum(1 for c in whole if len(c) == k) for k in sorted({{len(c) for c in whole}})}},
    "tokens_per_chunk_mean": round(float(np.mean(lens)), 1),
    "tokens_per_chunk_median": float(np.median(lens)),
    "full_chunks_share": round(float(np.mean([n == e.spec.max_tokens for n in lens])), 3),
    "tokens_in_chunks_2_3_share": round(sum(len(c) for ch in capped for c in ch[1:]) / sum(lens), 3),
    "first_chunk_tokens_pct_10_50_90": [float(x) for x in np.percentile([c[0].__len__() for c in capped], [10, 50, 90])],
    "tokenize_cpu_s": round(tokenize, 3),
    "tokenize_ms_per_text": round(tokenize / len(texts) * 1000, 3),
}}))
"""

EMBED = """
import json, resource, time
import numpy as np
from agentdex.semantic import fill as f
from agentdex.semantic.model import DEFAULT, embedder
texts = json.load(open({texts!r}))
class Sink:
    rows = 0
    def append(self, sums, keys): self.sums = sums.copy()
    def sync(self): pass
e = embedder(DEFAULT, threads={threads})
stats = f.FillStats()
sink = Sink()
fresh = dict(enumerate(texts))
c0, w0 = time.process_time(), time.perf_counter()
f._embed_texts(sink, lambda: e, DEFAULT, fresh, stats)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
np.save({vectors!r}, sink.sums)
print(json.dumps({{"model": DEFAULT.id, "threads": {threads}, "texts": stats.texts_embedded,
    "chunks": stats.chunks_embedded, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
    "texts_per_s": round(stats.texts_embedded / wall, 1),
    "texts_per_cpu_s": round(stats.texts_embedded / cpu, 1),
    "chunks_per_cpu_s": round(stats.chunks_embedded / cpu, 1),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}}))
"""


def run(code: str, src: str) -> dict[str, Any]:
    """``code`` in a fresh, byte-compiling interpreter on checkout ``src``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = src
    return run_py(code, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="an index folder (read only)")
    parser.add_argument("--src", action="append", required=True, help="a checkout's src")
    parser.add_argument("--texts", type=int, default=1500)
    parser.add_argument("--threads", type=int, action="append")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    threads = args.threads or [1, 2]
    srcs = [str(Path(s).resolve()) for s in args.src]
    report: dict[str, Any] = {"root": args.root, "srcs": srcs, "runs": []}
    with tempfile.TemporaryDirectory(prefix="embed-rate-") as tmp:
        texts = str(Path(tmp) / "texts.json")
        report["sample"] = run(SAMPLE.format(root=args.root, n=args.texts, dest=texts), srcs[0])
        report["texts"] = run(DESCRIBE.format(texts=texts), srcs[-1])
        print(json.dumps(report["texts"]), flush=True)
        for rnd in range(args.rounds):
            order = srcs if rnd % 2 == 0 else srcs[::-1]
            for n in threads:
                for at, src in enumerate(order):
                    which = srcs.index(src)
                    vectors = str(Path(tmp) / f"v{which}-{n}.npy")
                    row = run(EMBED.format(texts=texts, threads=n, vectors=vectors), src)
                    row |= {"src": src, "round": rnd, "order": at}
                    report["runs"].append(row)
                    print(json.dumps(row), flush=True)
        import numpy as np

        base = np.load(str(Path(tmp) / f"v0-{threads[0]}.npy"))
        report["cosine_to_first"] = {}
        for which, src in enumerate(srcs):
            got = np.load(str(Path(tmp) / f"v{which}-{threads[0]}.npy"))
            cos = (got * base).sum(axis=1)
            report["cosine_to_first"][src] = {
                "min": round(float(cos.min()), 4),
                "p1": round(float(np.percentile(cos, 1)), 4),
                "mean": round(float(cos.mean()), 4),
            }
        if len(threads) > 1:  # lanes change nothing stored
            for which, src in enumerate(srcs):
                a = np.load(str(Path(tmp) / f"v{which}-{threads[0]}.npy"))
                b = np.load(str(Path(tmp) / f"v{which}-{threads[-1]}.npy"))
                report.setdefault("lanes_identical", {})[src] = bool(np.array_equal(a, b))
    summary: dict[str, Any] = {}
    for src in srcs:
        for n in threads:
            rows = [r for r in report["runs"] if r["src"] == src and r["threads"] == n]
            summary[f"{src} x{n}"] = {
                key: statistics.median(r[key] for r in rows)
                for key in ("texts_per_s", "texts_per_cpu_s", "wall_s", "peak_rss_mb")
            }
    report["median"] = summary
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()

"""What counting a word's term set costs, and how it grows with tantivy's segments.

    python bench/bench_term_sets.py GEN [--tokens comm,buffer$,retry] [--runs 7]
    python bench/bench_term_sets.py GEN --reindex OUT [--threads 1] [--heap-mb 48]
        [--commit-every 35000]

``GEN`` is a generation dir (``<index dir>/gen-N``: its ``postings`` and term list).
For each token (``^tok``: it must start a term, ``tok$``: end one, as the planner
looks them up in :class:`agentdex.index.postings.Vocabulary`) it prints the terms the
token expands to, their summed record counts, and the CPU time (``time.thread_time``,
the fastest of ``--runs``: tantivy counts on the calling thread, so a loaded machine
inflates it less than wall time) of one count of the whole term set, of its rare terms
(in at most 10 records) alone and of its common ones alone.

``--reindex OUT`` instead writes the generation's records' postings again into
``OUT/postings`` (and copies the term list) with the given writer settings (indexing
threads, heap, a commit every N records, 0: one at the end), and prints the segments
it ended with: the same records in another segment layout, to count against.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

RARE = 10
TOKENS = "comm,buffer$,retry,worker,queue,server"


def segments(postings: Path) -> list[int]:
    meta = json.loads((postings / "meta.json").read_text())
    return sorted((int(s["max_doc"]) for s in meta["segments"]), reverse=True)


def reindex(gen: Path, out: Path, threads: int, heap_mb: int, every: int) -> dict[str, Any]:
    from agentdex.index import stored
    from agentdex.index.postings import LONG_TOKEN, PostingsWriter, role_kind, rust_safe
    from agentdex.index.scores import level_of
    from agentdex.index.segments import BlockFile, has_long_token

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    db = sqlite3.connect(f"file:{gen / 'index.db'}?mode=ro", uri=True)
    writer = PostingsWriter(out / "postings", heap_bytes=heap_mb << 20, threads=threads)
    started = time.perf_counter()
    added = 0
    for row, lowered in stored.lowered_rows(db, BlockFile(gen), 1):
        rid, file_id, context_id, role, kind, timestamp, tlen = row
        flags = LONG_TOKEN if has_long_token(lowered, len(lowered)) else 0
        writer.add(
            rid,
            file_id,
            context_id,
            role_kind(role, kind),
            flags,
            rust_safe(lowered),
            timestamp,
            level_of(kind, role, tlen),
        )
        added += 1
        if every and added % every == 0:
            writer.commit()
    writer.commit()
    writer.close(wait_merges=True)
    shutil.copy(gen / "vocab.txt", out / "vocab.txt")
    sizes = segments(out / "postings")
    return {
        "threads": threads,
        "heap_mb": heap_mb,
        "commit_every": every,
        "records": added,
        "seconds": round(time.perf_counter() - started, 1),
        "segments": len(sizes),
        "segment_docs": sizes,
    }


def count_costs(gen: Path, tokens: list[str], runs: int) -> dict[str, Any]:
    import tantivy

    from agentdex.index.postings import Vocabulary, open_index

    index = open_index(gen / "postings", create=False)
    searcher = index.searcher()
    vocabulary = Vocabulary(gen)

    def cpu_ms(terms: list[str]) -> tuple[float, int]:
        if not terms:
            return 0.0, 0
        query = tantivy.Query.term_set_query(index.schema, "text", terms)
        best, count = float("inf"), 0
        for _ in range(runs):
            started = time.thread_time()
            count = int(searcher.search(query, limit=1, count=True).count)
            best = min(best, time.thread_time() - started)
        return round(best * 1000, 2), count

    report: dict[str, Any] = {
        "segments": int(searcher.num_segments),
        "segment_docs": segments(gen / "postings"),
        "records": int(searcher.num_docs),
        "tokens": {},
    }
    for spec in tokens:
        token = spec.strip("^$")
        found = vocabulary.expand(
            token, starts=spec.startswith("^"), ends=spec.endswith("$"), limit=100_000
        )
        terms = found.terms or []
        counts = {term: int(searcher.doc_freq("text", term)) for term in terms}
        rare = [t for t in terms if counts[t] <= RARE]
        common = [t for t in terms if counts[t] > RARE]
        every_ms, matching = cpu_ms(terms)
        rare_ms, _ = cpu_ms(rare)
        common_ms, _ = cpu_ms(common)
        report["tokens"][spec] = {
            "terms": len(terms),
            "records_summed": sum(counts.values()),
            "matching": matching,
            "count_cpu_ms": every_ms,
            "rare_terms": len(rare),
            "rare_cpu_ms": rare_ms,
            "common_terms": len(common),
            "common_cpu_ms": common_ms,
        }
    vocabulary.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("gen", type=Path)
    parser.add_argument("--tokens", default=TOKENS)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--reindex", type=Path)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--heap-mb", type=int, default=48)
    parser.add_argument("--commit-every", type=int, default=0)
    args = parser.parse_args()
    if args.reindex is not None:
        result = reindex(args.gen, args.reindex, args.threads, args.heap_mb, args.commit_every)
    else:
        result = count_costs(args.gen, args.tokens.split(","), args.runs)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

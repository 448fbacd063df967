"""The vector store's size on disk at full count, without embedding anything.

    python bench/bench_semantic_size.py [--texts 470904] [--records N] [--corpus-mb 1048.7]

Embedding the 1 GB corpus takes hours (docs/performance.md), but the store's size
depends on the number of texts and records only, not on the vectors' values: this
writes ``--texts`` random unit vectors and ``--records`` member rows (default: one
record a text, no two records sharing a text, the largest case) into a store in a
temporary folder through ``agentdex.semantic.store`` exactly as a fill does (the
flat files through ``Appender``, then ``keys``, ``members`` (``store.member_rows``:
no hash repeated from the key) and ``meta.rows`` in one transaction per batch of
64), checkpoints the WAL as closing does, and reports the
bytes of every file and their ratio to ``--corpus-mb`` (the 1 GB generated corpus:
1,048.7 MB of JSONL with 470,904 prompts and replies to embed).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def build(folder: Path, texts: int, records: int, batch: int = 64) -> dict[str, int]:
    import numpy as np

    from agentdex.semantic import store

    rng = np.random.default_rng(20)
    db = store.connect(folder, create=True)
    assert db is not None
    appender = store.Appender(folder, db, 384)
    ckeys = rng.integers(-(2**63), 2**63 - 1, size=texts, dtype=np.int64)
    for at in range(0, records, batch):
        rids = list(range(at + 1, min(records, at + batch) + 1))
        # record n holds text n % texts: texts past the first ``texts`` are shared
        new = [r - 1 for r in rids if r - 1 < texts]
        vectors = rng.standard_normal((len(new), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        first = appender.append(vectors, [int(ckeys[n]) for n in new]) if new else 0
        appender.sync()
        thash = rng.integers(-(2**63), 2**63 - 1, size=len(rids), dtype=np.int64).tolist()
        tlen = rng.integers(20, 6000, size=len(rids)).tolist()
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO keys (ckey, row, thash, tlen) VALUES (?, ?, ?, ?)",
            ((int(ckeys[n]), first + i, thash[i], tlen[i]) for i, n in enumerate(new)),
        )
        # a record whose text was embedded from another record (texts past ``texts``)
        # has its own hash; the record a text was embedded from names its key's
        of_key = [
            (thash[i], tlen[i]) if rid - 1 < texts else (None, None) for i, rid in enumerate(rids)
        ]
        db.executemany(
            store.INSERT_MEMBER,
            store.member_rows(
                rids,
                [int(ckeys[(rid - 1) % texts]) for rid in rids],
                zip(thash, tlen, strict=True),
                of_key,
            ),
        )
        store.set_meta(db, "rows", appender.rows)
        db.execute("COMMIT")
    appender.close()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    sizes: dict[str, int] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            sizes[str(path.relative_to(folder))] = path.stat().st_size
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=470_904)
    parser.add_argument("--records", type=int, default=None, help="default: --texts")
    parser.add_argument("--corpus-mb", type=float, default=1048.7)
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args()
    records = args.records or args.texts
    with tempfile.TemporaryDirectory(prefix="agentdex-vecsize-") as tmp:
        started = time.perf_counter()
        sizes = build(Path(tmp) / "semantic", args.texts, records)
        seconds = time.perf_counter() - started
    total = sum(sizes.values())
    report = {
        "texts": args.texts,
        "records": records,
        "files": sizes,
        "bytes": total,
        "bytes_per_text": round(total / args.texts, 1),
        "ratio_to_corpus": round(total / (args.corpus_mb * 1e6), 4),
        "seconds": round(seconds, 1),
    }
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

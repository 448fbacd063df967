"""Read every text block of two generations and ask each for its lower-cased text.

    python bench/bench_block_scan.py SRC OLD_GEN NEW_GEN [REPEATS]
    python bench/bench_block_scan.py --codes SRC_A,SRC_B GEN [REPEATS]

What a full scan (a query no postings narrow) pays for reading blocks stored
one way or the other: ``SRC``'s ``load_block`` over every block of each
generation, ``Block.lower`` and ``lower_starts`` of each, OLD then NEW,
``REPEATS`` times (default 2). Prints seconds, bytes and microseconds a
block per pass. Read-only (the index opened ``mode=ro``).

``--codes``: one generation read by two checkouts' code instead, each pass in
a fresh process, A then B, ``REPEATS`` times (what a change to reading
blocks costs or saves on the same bytes).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def scan(gen: str) -> tuple[float, int, int]:
    from agentdex.index.segments import BlockFile, load_block

    db = sqlite3.connect(f"file:{gen}/index.db?mode=ro", uri=True)
    ids = [r[0] for r in db.execute("SELECT id FROM blocks ORDER BY id")]
    blocks = BlockFile(Path(gen))
    started = time.perf_counter()
    size = 0
    for block_id in ids:
        block = load_block(db, blocks, block_id)
        assert block is not None
        size += len(block.lower)
        block.lower_starts  # noqa: B018  (found from the separators when not stored)
    return time.perf_counter() - started, size, len(ids)


def report(name: str, seconds: float, size: int, count: int) -> None:
    per = round(seconds / count * 1e6, 1)
    print(f"{name} {seconds:.2f} s, {size} lower-cased bytes, {count} blocks, {per} us")


def main() -> None:
    if sys.argv[1] == "--codes":
        codes, gen = sys.argv[2].split(","), sys.argv[3]
        repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 2
        for _ in range(repeats):
            for name, src in zip("AB", codes, strict=True):
                argv = [sys.executable, __file__, "--one", src, gen]
                out = subprocess.run(argv, capture_output=True, text=True, check=True)
                print(f"{name} ({src}) {out.stdout.strip()}", flush=True)
        return
    if sys.argv[1] == "--one":
        sys.path.insert(0, sys.argv[2])
        report("scan", *scan(sys.argv[3]))
        return
    sys.path.insert(0, sys.argv[1])
    old, new = sys.argv[2], sys.argv[3]
    for _ in range(int(sys.argv[4]) if len(sys.argv) > 4 else 2):
        for name, gen in (("old", old), ("new", new)):
            report(name, *scan(gen))


if __name__ == "__main__":
    main()

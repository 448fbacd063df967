"""Replay a built index's texts into a fresh ``PostingsWriter``: tantivy's CPU alone.

    PYTHONPATH=SRC python bench/bench_postings_replay.py GEN --work DIR [--limit N]
        [--stop-words the,to,of]

Reads every record's lower-cased text from the generation ``GEN``'s block store, in id
order, and adds it (with small placeholder field values) to a ``PostingsWriter`` of the
tree on ``PYTHONPATH`` in ``DIR/postings``, committing at 0.5, 6, 18, 42 and 90% of the
records and at the end as a cold build's cadence does, then waits for tantivy's merges.
Prints one JSON line: wall seconds, the CPU of tantivy's indexing and merge threads (from
``/proc/self/task``), the tokens the tree's index analyzer keeps, the postings' bytes and
segments. The block reads and the documents' Python cost land on the main thread and are
not counted in tantivy's groups. ``--stop-words`` replaces ``postings.STOP_WORDS`` of a tree
that has a stop list (branch ``s14-tantivy-stoplist``; main has none: no effect there).
Open ``GEN`` read-only (its ``index.db`` through SQLite's ``mode=ro``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path


class ThreadCpu(threading.Thread):
    """Samples every thread's CPU each 0.2 s (a thread that ended keeps its last sample)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[str, tuple[str, float]] = {}
        self.done = threading.Event()

    def sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        for tid in os.listdir("/proc/self/task"):
            try:
                comm = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
                stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            self.seen[tid] = (comm, (int(fields[11]) + int(fields[12])) / tick)

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.sample()

    def groups(self) -> dict[str, float]:
        self.sample()
        out: dict[str, float] = {}
        for comm, cpu in self.seen.values():
            group = "indexing" if "tantivy-in" in comm else "merge" if "merg" in comm else "other"
            out[group] = out.get(group, 0.0) + cpu
        return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("gen", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--stop-words", help="comma-separated: replaces the tree's STOP_WORDS")
    args = parser.parse_args()
    from agentdex.index import postings

    if args.stop_words is not None:
        postings.STOP_WORDS = frozenset(w for w in args.stop_words.split(",") if w)
    from agentdex.index.segments import BlockFile, load_block

    db = sqlite3.connect(f"file:{args.gen / 'index.db'}?mode=ro", uri=True)
    total = db.execute("SELECT count(*) FROM records").fetchone()[0]
    if args.limit:
        total = min(total, args.limit)
    marks = [int(total * share) for share in (0.005, 0.06, 0.18, 0.42, 0.90)]
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    writer = postings.PostingsWriter(args.work / "postings")
    file = BlockFile(args.gen)
    counter = getattr(postings, "index_analyzer", postings.analyzer)()
    tokens = kept = 0
    sampler = ThreadCpu()
    sampler.start()
    start = time.perf_counter()
    rid = 0
    for (block_id,) in db.execute("SELECT id FROM blocks ORDER BY id").fetchall():
        block = load_block(db, file, int(block_id))
        assert block is not None
        for i in range(block.count):
            lower = block.lower_text(i)
            if rid % 50 == 0:  # the share of tokens the analyzer keeps, on a sample
                tokens += len(postings.analyzer().analyze(lower))
                kept += len(counter.analyze(lower))
            writer.add(rid, 1, 1, 1, 0, postings.rust_safe(lower), 0.0, 1)
            rid += 1
            if rid in marks:
                writer.commit()
            if rid >= total:
                break
        if rid >= total:
            break
    writer.commit()
    writer.close(wait_merges=True)
    cpu = sampler.groups()
    sampler.done.set()
    wall = time.perf_counter() - start
    seg = json.loads((args.work / "postings" / "meta.json").read_text())["segments"]
    size = sum(p.stat().st_size for p in (args.work / "postings").iterdir())
    print(
        json.dumps(
            {
                "src": postings.__file__,
                "stop_words": sorted(getattr(postings, "STOP_WORDS", ())),
                "records": rid,
                "wall_s": round(wall, 2),
                "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
                "tokens_kept_share": round(kept / max(tokens, 1), 4),
                "postings_bytes": size,
                "segments": [s["max_doc"] for s in seg],
                "load": os.getloadavg(),
            }
        )
    )


if __name__ == "__main__":
    main()

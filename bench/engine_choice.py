"""Measure text-engine candidates on the same parsed records (the evidence for the design).

    python bench/engine_choice.py HOME [--mb 40]

Parses records from HOME (real parsers), keeps up to ``--mb`` of text, then
times: SQLite FTS5 trigram, FTS5 unicode61, agentdex's blocks + trigram
signatures (the chosen engine), and a plain lower-cased scan; reports
build MB/s and size relative to the text. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from agentdex.discovery import discover
from agentdex.parsers import ParseCursor, run
from agentdex.readers import Diagnostics


def load(home: str, limit: int) -> list:
    records, size = [], 0
    for source in discover(home).sources:
        if source.row.parser is None:
            continue
        for record in run(source, ParseCursor(), Diagnostics()):
            records.append(record)
            size += len(record.text.encode())
            if size >= limit:
                return records
    return records


def fts(records: list, tokenizer: str, work: Path) -> dict:
    path = work / f"fts-{tokenizer.split()[0]}.db"
    db = sqlite3.connect(path)
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{tokenizer}')")
    started = time.perf_counter()
    db.executemany("INSERT INTO t (text) VALUES (?)", ((r.text,) for r in records))
    db.commit()
    seconds = time.perf_counter() - started
    db.close()
    return {"seconds": round(seconds, 2), "bytes": path.stat().st_size}


def agentdex_blocks(records: list, work: Path) -> dict:
    from agentdex.index.segments import BlockWriter
    from agentdex.index.signatures import SignatureWriter
    from agentdex.index.store import open_writer_db

    gen = work / "gen"
    gen.mkdir()
    db = open_writer_db(gen)
    db.execute("BEGIN")
    writer = BlockWriter(db, SignatureWriter(gen))
    started = time.perf_counter()
    for record in records:
        writer.add(record, 1)
    writer.flush()
    db.execute("COMMIT")
    seconds = time.perf_counter() - started
    db.close()
    size = sum(p.stat().st_size for p in gen.iterdir())
    return {"seconds": round(seconds, 2), "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("home")
    parser.add_argument("--mb", type=float, default=40)
    args = parser.parse_args()
    records = load(args.home, int(args.mb * 1e6))
    text_bytes = sum(len(r.text.encode()) for r in records)
    lowered = b"\x00".join(r.text.lower().encode() for r in records)
    started = time.perf_counter()
    for needle in (b"zq12345", b"function", b"retry backoff"):
        lowered.find(needle)
    scan = (time.perf_counter() - started) / 3
    report = {
        "records": len(records),
        "text_mb": round(text_bytes / 1e6, 1),
        "plain_scan_gb_per_s": round(len(lowered) / scan / 1e9, 2),
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, result in (
            ("fts5_trigram", fts(records, "trigram", work)),
            ("fts5_unicode61", fts(records, "unicode61", work)),
            ("agentdex_blocks", agentdex_blocks(records, work)),
        ):
            result["mb_per_s"] = round(text_bytes / 1e6 / result["seconds"], 1)
            result["size_vs_text"] = round(result["bytes"] / text_bytes, 2)
            report[name] = result
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

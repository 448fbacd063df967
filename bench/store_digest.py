"""One digest of what a built index and archive hold, to compare two builds' stores.

    python bench/store_digest.py DATA_DIR [--texts]

DATA_DIR is an ``AGENTDEX_DATA_DIR`` after a build (one home under ``homes/``).
Prints JSON: the number of index records and archive entries and a SHA-256 of
each, in id (index) and key (archive) order: the index's per-record columns
(ids, agent, session, role/kind, time, context, locator, offset, text length
and text hash: the hash of the stored, masked text) without the block a
record sits in (blocks follow commit times); the archive's keys, role/kind,
times, locators, sizes and, with ``--texts``, each entry's text and kept
source line as read back. Two builds of the same corpus by code that should
not change what is stored must print the same digests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

INDEX_ROWS = (
    "SELECT id, file_id, agent, store, session_id, role, kind, timestamp, model, cwd, project,"
    " branch, worktree, host, locator, offset, tlen, thash FROM records ORDER BY id"
)
ARCHIVE_ROWS = (
    "SELECT key, role, kind, timestamp, locator, offset, text_chunk, text_start, text_size,"
    " raw_chunk, raw_start, raw_size FROM entries ORDER BY key"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--texts", action="store_true")
    args = parser.parse_args()
    (home,) = (args.data / "homes").iterdir()
    index_dir = home / "index"
    gen = index_dir / (index_dir / "CURRENT").read_text().strip()
    out = {}
    db = sqlite3.connect(f"file:{gen / 'index.db'}?mode=ro", uri=True)
    digest = hashlib.sha256()
    count = 0
    for row in db.execute(INDEX_ROWS):
        digest.update(repr(row).encode())
        count += 1
    out["index_records"] = count
    out["index_digest"] = digest.hexdigest()
    archive = sqlite3.connect(f"file:{index_dir / 'archive' / 'archive.db'}?mode=ro", uri=True)
    store = None
    if args.texts:
        from agentdex.archive.store import open_reader

        store = open_reader(index_dir / "archive")
    digest = hashlib.sha256()
    count = raw_lines = 0
    for key, role, kind, ts, locator, offset, chunk, start, size, rc, rs, rz in archive.execute(
        ARCHIVE_ROWS
    ):
        digest.update(repr((key, role, kind, ts, locator, offset, size, rz)).encode())
        if store is not None:
            digest.update(store.text(chunk, start, size).encode("utf-8", "surrogatepass"))
            digest.update(store.raw(rc, rs, rz) or b"-")
        raw_lines += rz is not None
        count += 1
    out["archive_entries"] = count
    out["archive_raw_lines"] = raw_lines
    out["archive_digest"] = digest.hexdigest()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

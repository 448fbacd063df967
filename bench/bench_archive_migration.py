"""Time an archive's pending migrations on a copy, and check every entry row reads back the same.

Usage: python bench/bench_archive_migration.py INDEX_DIR SRC

INDEX_DIR is a *copy* of ``<data dir>/homes/<home key>/index`` holding ``archive/``
(it is migrated in place); SRC the agentdex ``src`` to run. Hashes every entry
row (``ENTRY_COLUMNS``; before the migration the archive time is read from the
old ``archived_at`` column) before and after ``ArchiveStore(root, write=True)``
(which runs the migrations and the VACUUM after a copy of the entries) and
prints the entries, whether the rows are the same, the seconds and archive.db's
MB before and after.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any


def digest(db: sqlite3.Connection, sql: str) -> tuple[int, str]:
    h = hashlib.sha256()
    count = 0
    for row in db.execute(sql):
        h.update(repr(row).encode())
        count += 1
    return count, h.hexdigest()


def main() -> None:
    root, src = Path(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, src)
    from agentdex.archive import schema
    from agentdex.archive.store import ENTRY_COLUMNS, ENTRY_FROM, ArchiveStore

    path = root / "archive" / "archive.db"
    sql = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} ORDER BY e.id"
    db = sqlite3.connect(path)
    held = {str(r[1]) for r in db.execute("PRAGMA table_info(entries)")}
    old_sql = sql.replace(schema.ARCHIVED_AT_SQL, "e.archived_at") if "archived_at" in held else sql
    before = digest(db, old_sql)
    db.close()
    size = path.stat().st_size
    started = time.perf_counter()
    store = ArchiveStore(root, write=True)
    seconds = time.perf_counter() - started
    after = digest(store.db, sql)
    store.close()
    report: dict[str, Any] = {
        "entries": before[0],
        "same_rows": before == after,
        "seconds": round(seconds, 1),
        "archive_db_mb": [round(size / 1e6, 1), round(path.stat().st_size / 1e6, 1)],
    }
    print(report)


if __name__ == "__main__":
    main()

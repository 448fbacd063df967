"""Named migrations of the vector store (``semantic/``): each runs once, by the first
writer that opens an older store (:func:`agentdex.semantic.store.connect`).

A migration runs in one SQLite transaction with its mark (``meta``
``migration.<name>``), so a kill leaves the store before it or after it; one
that also touches files does only what is safe to repeat (a deleted file
nobody reads). A store created new has every mark set.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress
from pathlib import Path

from agentdex.semantic.store import get_meta, set_meta


def _signs_from_q4(folder: Path, db: sqlite3.Connection) -> None:
    """The sign bits are derived from ``q4`` when a store is scanned: drop the stored
    ``bits`` files (48 bytes a text). Nothing reads them, so a kill anywhere leaves a
    store that works; the next writer deletes what is left."""
    for path in folder.glob("vec-*/bits"):
        with suppress(FileNotFoundError):
            path.unlink()


def _member_hashes_once(folder: Path, db: sqlite3.Connection) -> None:
    """``members.thash``/``tlen`` become NULL where they repeat their key's (one record
    a text: nearly every row). The table is copied in one transaction (``thash`` was
    NOT NULL, which SQLite cannot alter) with the migration's mark, so a kill leaves
    the old table or the new one; the space is given back by a VACUUM after it
    (``meta.vacuum`` until done: a kill before it ends repeats it)."""
    db.execute(
        "CREATE TABLE members_new (rid INTEGER PRIMARY KEY, ckey INTEGER NOT NULL,"
        " thash INTEGER, tlen INTEGER)"
    )
    same = "(k.thash IS m.thash AND k.tlen IS m.tlen)"
    db.execute(
        f"INSERT INTO members_new (rid, ckey, thash, tlen) SELECT m.rid, m.ckey,"
        f" CASE WHEN {same} THEN NULL ELSE m.thash END,"
        f" CASE WHEN {same} THEN NULL ELSE m.tlen END"
        f" FROM members m LEFT JOIN keys k ON k.ckey = m.ckey ORDER BY m.rid"
    )
    db.execute("DROP TABLE members")
    db.execute("ALTER TABLE members_new RENAME TO members")
    db.execute("CREATE INDEX members_ckey ON members(ckey)")
    set_meta(db, "vacuum", 1)


#: named store migrations, in order: each runs once (``meta`` ``migration.<name>``), in
#: one transaction with its mark, by the first writer that opens an older store; a new
#: store is created in the newest format with every mark set
MIGRATIONS = (
    ("m001_signs_from_q4", _signs_from_q4),
    ("m002_member_hashes_once", _member_hashes_once),
)


def migrate(folder: Path, db: sqlite3.Connection, *, fresh: bool = False) -> list[str]:
    """Run the migrations ``db`` has not had (marks only, when ``fresh``); returns their names."""
    done = []
    for name, step in MIGRATIONS:
        if get_meta(db, f"migration.{name}") is not None:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            if get_meta(db, f"migration.{name}") is None:  # not run by another writer meanwhile
                if not fresh:
                    step(folder, db)
                set_meta(db, f"migration.{name}", "done")
                done.append(name)
            db.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
    if get_meta(db, "vacuum") is not None:
        _vacuum(db)
    return done


def _vacuum(db: sqlite3.Connection) -> None:
    """Give a migration's freed pages back to the disk (atomic: a kill keeps the old file)."""
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("DELETE FROM meta WHERE key = 'vacuum'")

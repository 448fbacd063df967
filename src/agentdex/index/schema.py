"""Index schema as named, append-only migrations recorded in ``migrations``.

Each migration is a plain function registered in order; applied names are
recorded so a migration runs once. Never edit or reorder one that shipped:
add a new one. :func:`agentdex.index.store.open_db` is the only caller.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
        -- One row per indexed source file, with what refresh needs to skip or resume it.
        CREATE TABLE IF NOT EXISTS files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            agent TEXT NOT NULL,
            store TEXT NOT NULL,
            parser TEXT,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            inode INTEGER NOT NULL DEFAULT 0,
            head_len INTEGER NOT NULL DEFAULT 0,
            head_hash TEXT NOT NULL DEFAULT '',
            wal_sig TEXT NOT NULL DEFAULT '',
            resume_offset INTEGER NOT NULL DEFAULT 0,
            resume_line INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL DEFAULT '{}',
            records INTEGER NOT NULL DEFAULT 0,
            indexed_at REAL NOT NULL DEFAULT 0
        );
        -- Text blocks: lower-cased UTF-8 of consecutive records (searched), and the
        -- original text zlib-compressed (shown, and searched case-sensitively).
        CREATE TABLE IF NOT EXISTS blocks (
            id INTEGER PRIMARY KEY,
            first_id INTEGER NOT NULL,
            count INTEGER NOT NULL,
            lower BLOB NOT NULL,
            lower_starts BLOB NOT NULL,
            original BLOB NOT NULL,
            original_starts BLOB NOT NULL
        );
        -- Record ids are contiguous within a block: id = first_id + position.
        CREATE TABLE IF NOT EXISTS records (
            id INTEGER PRIMARY KEY,
            block_id INTEGER NOT NULL,
            file_id INTEGER NOT NULL,
            agent TEXT NOT NULL,
            store TEXT NOT NULL,
            session_id TEXT NOT NULL,
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            timestamp REAL,
            model TEXT,
            cwd TEXT,
            project TEXT,
            branch TEXT,
            worktree TEXT,
            host TEXT,
            locator TEXT NOT NULL,
            offset INTEGER NOT NULL,
            tlen INTEGER NOT NULL,
            thash INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS records_file ON records(file_id, offset);
        CREATE INDEX IF NOT EXISTS records_session ON records(session_id);
        CREATE TABLE IF NOT EXISTS titles (
            agent TEXT NOT NULL,
            session_id TEXT NOT NULL,
            title TEXT NOT NULL,
            PRIMARY KEY (agent, session_id)
        );
        """
    )


@migration
def m002_postings_journal(db: sqlite3.Connection) -> None:
    """Deletes committed here but not yet applied to the tantivy postings (replayed on open)."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS postings_deletes (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL,
            from_rid INTEGER  -- NULL: every record of the file
        );
        """
    )


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order; returns the names applied now."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    done = {row[0] for row in db.execute("SELECT name FROM migrations")}
    applied: list[str] = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        fn(db)
        db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))
        applied.append(name)
    db.commit()
    return applied

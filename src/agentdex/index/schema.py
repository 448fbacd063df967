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


#: the record rows and their indexes (``role_kind``: the role and kind columns, m006)
_RECORD_ROWS = """
        CREATE TABLE IF NOT EXISTS record_rows (
            id INTEGER PRIMARY KEY,
            block_id INTEGER NOT NULL,
            file_id INTEGER NOT NULL,
            context_id INTEGER NOT NULL,
            {role_kind},
            timestamp REAL,
            locator TEXT NOT NULL,
            offset INTEGER NOT NULL,
            tlen INTEGER NOT NULL,
            thash INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS record_rows_file ON record_rows(file_id, offset);
        CREATE INDEX IF NOT EXISTS record_rows_context ON record_rows(context_id);
"""
_RECORDS_VIEW = """
        CREATE VIEW IF NOT EXISTS records AS
            SELECT r.id, r.block_id, r.file_id, c.agent, c.store, c.session_id, r.role, r.kind,
                   r.timestamp, c.model, c.cwd, c.project, c.branch, c.worktree, c.host,
                   r.locator, r.offset, r.tlen, r.thash, r.context_id
            FROM record_rows r JOIN contexts c ON c.id = r.context_id;
"""


@migration
def m003_record_contexts(db: sqlite3.Connection) -> None:
    """Records keep their per-conversation context (agent, session, paths, model) by reference.

    A record row was ~300 bytes, mostly the same session id, paths and model
    repeated on every row. ``contexts`` holds each distinct combination once;
    ``record_rows`` points at it; the ``records`` view joins them back, so
    every query reads the same columns as before. Only the writer uses
    ``record_rows``. Text blocks move to an append-only file (a 10 KiB blob in
    16 KiB SQLite pages wasted a third of the space). Format-3 indexes are
    built fresh, so ``records`` and ``blocks`` are empty here.
    """
    db.executescript(
        f"""
        DROP INDEX IF EXISTS records_file;
        DROP INDEX IF EXISTS records_session;
        DROP TABLE IF EXISTS records;
        CREATE TABLE IF NOT EXISTS contexts (
            id INTEGER PRIMARY KEY,
            agent TEXT NOT NULL,
            store TEXT NOT NULL,
            session_id TEXT NOT NULL,
            model TEXT,
            cwd TEXT,
            project TEXT,
            branch TEXT,
            worktree TEXT,
            host TEXT
        );
        CREATE INDEX IF NOT EXISTS contexts_session ON contexts(session_id);
        {_RECORD_ROWS.format(role_kind="role TEXT NOT NULL, kind TEXT NOT NULL")}
        DROP TABLE IF EXISTS blocks;
        -- Text blocks live in the generation's append-only file ``text.blocks``: each row
        -- says where (the compressed lower-cased text, then the packed original).
        CREATE TABLE IF NOT EXISTS blocks (
            id INTEGER PRIMARY KEY,
            first_id INTEGER NOT NULL,
            count INTEGER NOT NULL,
            offset INTEGER NOT NULL,
            lower_size INTEGER NOT NULL,
            original_size INTEGER NOT NULL,
            lower_starts BLOB NOT NULL,
            original_starts BLOB NOT NULL
        );
        {_RECORDS_VIEW}
        """
    )


@migration
def m004_context_stats(db: sqlite3.Connection) -> None:
    """Per-context totals for listing conversations (:mod:`agentdex.index.context_stats`).

    An existing generation is summed once here; the writer keeps it level from then on.
    """
    from agentdex.index.context_stats import create_and_fill

    create_and_fill(db)


@migration
def m005_usage(db: sqlite3.Connection) -> None:
    """Model calls' token usage and its rollup (:mod:`agentdex.index.usage`).

    Files indexed before this migration were read without their usage; the
    next refresh reads it from them (``meta.usage_backfill``).
    """
    from agentdex.index.usage import create

    create(db)
    if db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('usage_backfill', '1')")


@migration
def m006_compact_records(db: sqlite3.Connection) -> None:
    """Record rows keep their role and kind as one number (:mod:`agentdex.index.rolekind`).

    ``role`` and ``kind`` stay readable by name (virtual generated columns),
    so the ``records`` view and every query are unchanged; a row is ~13 bytes
    smaller. Format-5 indexes are built fresh (format 4 is rebuilt, never
    migrated), so ``record_rows`` is empty here.
    """
    from agentdex.index.rolekind import columns

    _new_record_rows(db, _RECORD_ROWS.format(role_kind=columns()))


def _new_record_rows(db: sqlite3.Connection, rows: str) -> None:
    """Replace the (empty) ``record_rows``, its indexes and the ``records`` view with the
    table and indexes of ``rows`` and the view."""
    db.executescript(
        f"""
        DROP VIEW IF EXISTS records;
        DROP INDEX IF EXISTS record_rows_file;
        DROP INDEX IF EXISTS record_rows_context;
        DROP TABLE IF EXISTS record_rows;
        {rows}
        {_RECORDS_VIEW}
        """
    )


@migration
def m007_usage_contexts(db: sqlite3.Connection) -> None:
    """Usage summed per context and prompt size, without time (:mod:`agentdex.index.usage`
    ``usage_contexts``): what ``usage --by session`` (and the other views without a date
    range) read. An existing generation's is summed once here from its rollup."""
    from agentdex.index.usage import create_contexts

    create_contexts(db)


@migration
def m008_packed_rows(db: sqlite3.Connection) -> None:
    """Record rows keep their locator and time in fewer bytes (:mod:`agentdex.index.rowpack`):
    ``locator`` and ``timestamp`` stay readable by name (virtual generated columns over
    ``loc`` and ``ts``), a row is ~7 bytes smaller, and a file's records are found by
    ``file_id`` alone (its deletes from an offset filter that file's rows: a file holds a
    few thousand at most, and the index on ``(file_id, offset)`` was 4.6 MB larger at 1 GB).
    Format-6 indexes are built fresh (format 5 is rebuilt, never migrated), so
    ``record_rows`` is empty here."""
    from agentdex.index.rolekind import columns
    from agentdex.index.rowpack import narrowed

    rows = narrowed(
        _RECORD_ROWS.format(role_kind=columns()),
        ("record_rows(file_id, offset)", "record_rows(file_id)"),
    )
    _new_record_rows(db, rows)


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

"""The archive's schema as named, append-only migrations recorded in ``migrations``.

Like the index's (:mod:`agentdex.index.schema`): each migration is a plain
function registered in order and recorded by name once applied; never edit
or reorder one that shipped, add a new one. Unlike the index, the archive is
never rebuilt (it may hold the only copy of a conversation), so every
pending migration runs in the caller's one transaction
(:meth:`agentdex.archive.store.ArchiveStore._migrate`): a kill leaves all of
them or none. A migration therefore runs statements one by one, never
``executescript`` (which commits).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


def _run(db: sqlite3.Connection, script: str) -> None:
    """Execute a script's statements one at a time, inside the open transaction."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            db.execute(pending)
            pending = ""
    assert not pending.strip(), f"unfinished statement: {pending!r}"


#: the entries table (``role_kind``: its role and kind columns, :func:`m004_compact_entries`)
_ENTRIES = """
        CREATE TABLE IF NOT EXISTS {name} (
            id INTEGER PRIMARY KEY,
            key INTEGER NOT NULL UNIQUE,
            context_id INTEGER NOT NULL,
            source_id INTEGER NOT NULL,
            {role_kind},
            timestamp REAL,
            locator TEXT NOT NULL,
            offset INTEGER NOT NULL,
            text_chunk INTEGER NOT NULL,
            text_start INTEGER NOT NULL,
            text_size INTEGER NOT NULL,
            raw_chunk INTEGER,
            raw_start INTEGER,
            raw_size INTEGER,
            archived_at INTEGER NOT NULL
        );
"""

_INITIAL = (
    """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
        -- who said it where: each distinct (agent, store, session, paths, model) once
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
        CREATE TABLE IF NOT EXISTS sources (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
        CREATE TABLE IF NOT EXISTS chunks (
            id INTEGER PRIMARY KEY,
            kind INTEGER NOT NULL,      -- 0: record texts, 1: raw source lines
            offset INTEGER NOT NULL,    -- in the blob file
            size INTEGER NOT NULL,      -- compressed
            raw_size INTEGER NOT NULL   -- uncompressed
        );
        -- one row per distinct record, in the order first archived (dense pages); key:
        -- agentdex.archive.keys.record_key
"""
    + _ENTRIES.format(name="entries", role_kind="role TEXT NOT NULL, kind TEXT NOT NULL")
    + """
        CREATE INDEX IF NOT EXISTS entries_context ON entries(context_id);
        CREATE TABLE IF NOT EXISTS titles (
            agent TEXT NOT NULL,
            session_id TEXT NOT NULL,
            title TEXT NOT NULL,
            PRIMARY KEY (agent, session_id)
        );
        -- forgotten conversations: never indexed or archived again (agent NULL: any agent)
        CREATE TABLE IF NOT EXISTS tombstones (
            id INTEGER PRIMARY KEY,
            agent TEXT,
            session_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at REAL NOT NULL
        );
"""
)


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    """Entries, contexts, sources, chunks, titles, tombstones, meta (an archive made before
    migrations were recorded already has them: every statement is IF NOT EXISTS)."""
    _run(db, _INITIAL)


@migration
def m002_usage(db: sqlite3.Connection) -> None:
    """Model calls' token usage (:mod:`agentdex.archive.usage`). The calls the index
    already holds are copied in by the next refresh (``meta.usage_copied``)."""
    from agentdex.archive.usage import create

    create(db)


@migration
def m003_shared_text(db: sqlite3.Connection) -> None:
    """One copy of a record's text: an entry may point at a text block of the index
    (``text_chunk`` negative: minus the id of a row of ``blocks``; ``text_start``: the
    record's position in it) instead of a chunk (:mod:`agentdex.archive.shared`). An
    archive that already holds entries keeps their text in its chunks until the next
    refresh rebuilds the index once and the entries move to its blocks
    (``meta.text_shared`` 0 until then)."""
    _run(
        db,
        """
        -- index text blocks the archive's entries point at: where they are in the file
        -- (a hard link in the archive folder to a generation's text.blocks)
        CREATE TABLE IF NOT EXISTS blocks (
            id INTEGER PRIMARY KEY,
            file TEXT NOT NULL,
            offset INTEGER NOT NULL,
            lower_size INTEGER NOT NULL,
            original_size INTEGER NOT NULL,
            count INTEGER NOT NULL,
            lower_starts BLOB NOT NULL,
            original_starts BLOB NOT NULL
        );
        CREATE INDEX IF NOT EXISTS blocks_file ON blocks(file);
        """,
    )
    has_entries = db.execute("SELECT 1 FROM entries LIMIT 1").fetchone() is not None
    db.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('text_shared', ?)",
        ("0" if has_entries else "1",),
    )


@migration
def m004_compact_entries(db: sqlite3.Connection) -> None:
    """Entries keep their role and kind as one number (:mod:`agentdex.index.rolekind`):
    ``role`` and ``kind`` stay readable by name (virtual generated columns), a row is
    ~13 bytes smaller. An archive that holds entries is copied into the new table once
    (about 10 s per million entries), in the one migration transaction."""
    from agentdex.index.rolekind import code_sql, columns, known_sql
    from agentdex.records import KINDS, ROLES

    _run(
        db,
        f"""
        {_ENTRIES.format(name="entries_compact", role_kind=columns())}
        INSERT INTO entries_compact (id, key, context_id, source_id, rk, role_x, kind_x,
            timestamp, locator, offset, text_chunk, text_start, text_size, raw_chunk,
            raw_start, raw_size, archived_at)
            SELECT id, key, context_id, source_id, {code_sql("role", "kind")},
            {known_sql("role", ROLES)}, {known_sql("kind", KINDS)}, timestamp, locator,
            offset, text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size,
            archived_at FROM entries ORDER BY id;
        DROP INDEX IF EXISTS entries_context;
        DROP TABLE entries;
        ALTER TABLE entries_compact RENAME TO entries;
        CREATE INDEX IF NOT EXISTS entries_context ON entries(context_id);
        """,
    )


#: when an entry was archived (``e``: the entry): the time of the writer that added it, kept
#: once per writer in ``archive_times`` (:func:`m005_packed_entries`)
ARCHIVED_AT_SQL = (
    "(SELECT t.at FROM archive_times t WHERE t.first_id <= e.id ORDER BY t.first_id DESC LIMIT 1)"
)


_ARCHIVE_TIMES = """
        CREATE TABLE IF NOT EXISTS archive_times (
            first_id INTEGER PRIMARY KEY,   -- the first entry id a writer added
            at INTEGER NOT NULL             -- when (epoch seconds)
        );
"""


@migration
def m005_packed_entries(db: sqlite3.Connection) -> None:
    """Entries keep their locator and time in fewer bytes (:mod:`agentdex.index.rowpack`:
    ``locator`` and ``timestamp`` stay readable by name, virtual generated columns over
    ``loc`` and ``ts``) and no ``archived_at`` of their own: a writer archives every entry
    it adds at one time, kept once in ``archive_times`` (the first entry id it added, the
    time; :data:`ARCHIVED_AT_SQL` reads an entry's back), so a row is ~12 bytes smaller.
    The calls' context index goes (only ``forget`` asked by context: it reads the calls).
    An archive that holds entries is copied into the new table once, in the one migration
    transaction, like :func:`m004_compact_entries`."""
    from agentdex.index import rowpack
    from agentdex.index.rolekind import columns

    held = {str(row[1]) for row in db.execute("PRAGMA table_info(entries)")}
    if "archived_at" not in held:  # packed already (an archive whose record of it was lost)
        _run(db, _ARCHIVE_TIMES + "DROP INDEX IF EXISTS usage_calls_context;")
        return
    packed = rowpack.narrowed(
        _ENTRIES.format(name="entries_packed", role_kind=columns()),
        (",\n            archived_at INTEGER NOT NULL", ""),
    )
    db.create_function("adx_pack_time", 1, rowpack.pack_time, deterministic=True)
    db.create_function("adx_pack_locator", 1, rowpack.pack_locator, deterministic=True)
    _run(
        db,
        f"""
        {_ARCHIVE_TIMES}
        INSERT INTO archive_times (first_id, at)
            SELECT id, archived_at FROM (
                SELECT id, archived_at, lag(archived_at) OVER (ORDER BY id) AS before
                FROM entries)
            WHERE before IS NULL OR before != archived_at;
        {packed}
        INSERT INTO entries_packed (id, key, context_id, source_id, rk, role_x, kind_x, ts,
            loc, offset, text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size)
            SELECT id, key, context_id, source_id, rk, role_x, kind_x,
            adx_pack_time(timestamp), adx_pack_locator(locator), offset, text_chunk,
            text_start, text_size, raw_chunk, raw_start, raw_size FROM entries ORDER BY id;
        DROP INDEX IF EXISTS entries_context;
        DROP TABLE entries;
        ALTER TABLE entries_packed RENAME TO entries;
        CREATE INDEX IF NOT EXISTS entries_context ON entries(context_id);
        DROP INDEX IF EXISTS usage_calls_context;
        """,
    )


#: the entries' indexes: a first build into an empty archive drops them and builds them
#: at its end with one sort each (:class:`agentdex.archive.writer.ArchiveWriter`); a
#: writer opening the archive builds any a killed build left missing
ENTRY_INDEXES = (
    ("entries_key", "CREATE UNIQUE INDEX IF NOT EXISTS entries_key ON entries(key)"),
    ("entries_context", "CREATE INDEX IF NOT EXISTS entries_context ON entries(context_id)"),
)


@migration
def m006_entries_key_index(db: sqlite3.Connection) -> None:
    """The key's uniqueness as a named index (``entries_key``) instead of the column's
    ``UNIQUE`` (an index SQLite never drops): a first build into an empty archive drops it
    and sorts 1.25 million keys once at its end instead of inserting each into a B-tree
    whose pages every commit rewrites (docs/performance.md, s12-writer). Same rows, same
    lookups. An archive that holds entries is copied into the new table once, in the one
    migration transaction, like :func:`m005_packed_entries`."""
    from agentdex.index import rowpack
    from agentdex.index.rolekind import columns

    keyed = rowpack.narrowed(
        _ENTRIES.format(name="entries_keyed", role_kind=columns()),
        (",\n            archived_at INTEGER NOT NULL", ""),
        ("key INTEGER NOT NULL UNIQUE", "key INTEGER NOT NULL"),
    )
    _run(
        db,
        f"""
        {keyed}
        INSERT INTO entries_keyed (id, key, context_id, source_id, rk, role_x, kind_x, ts,
            loc, offset, text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size)
            SELECT id, key, context_id, source_id, rk, role_x, kind_x, ts, loc, offset,
            text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size FROM entries
            ORDER BY id;
        DROP INDEX IF EXISTS entries_context;
        DROP TABLE entries;
        ALTER TABLE entries_keyed RENAME TO entries;
        """
        + "".join(f"{statement};\n" for _, statement in ENTRY_INDEXES),
    )


@migration
def m007_entry_spans(db: sqlite3.Connection) -> None:
    """Entries a first build derives from the index's rows (:mod:`agentdex.archive.spans`):
    a span of index record ids per file, with what the index lacks of each record (its
    key, a size the index's length does not give, a prompt's kept line), and the index's
    files whose model calls the archive keeps. A span commits with the archive's batch,
    before the index's; its entries (and calls) are made from the index's committed rows
    right after the index commits, and the span goes."""
    _run(
        db,
        """
        CREATE TABLE IF NOT EXISTS entry_spans (
            first_rid INTEGER PRIMARY KEY,  -- the index record id of the span's first record
            source_id INTEGER NOT NULL,
            items TEXT NOT NULL             -- JSON: one value a record (agentdex.archive.spans)
        );
        CREATE TABLE IF NOT EXISTS usage_spans (
            file_id INTEGER PRIMARY KEY,    -- an index file whose calls the archive keeps
            source_id INTEGER NOT NULL
        );
        """,
    )


#: the tables a complete archive has: a reader treats a database missing one as no archive yet
TABLES = tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", _INITIAL))


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order, in the caller's transaction; the names applied."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    done = {row[0] for row in db.execute("SELECT name FROM migrations")}
    applied: list[str] = []
    for name, fn in MIGRATIONS:
        if name not in done:
            fn(db)
            db.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
            )
            applied.append(name)
    return applied

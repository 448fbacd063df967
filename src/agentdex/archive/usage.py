"""Model calls' token usage kept by the archive: what a source once held stays counted.

Table ``usage_calls`` (migration ``m002_usage``): one row per call as a source
file last wrote it, keyed by the source and the call (the 64-bit name of
:func:`agentdex.index.usage.call_hash`, the same in every file that copies the
call), with its context (the archive's ``contexts``: agent, session, model,
paths), byte offset, time and counts. A later read of the same file replaces
its row of a call; a file that no longer holds a call (deleted, rewritten,
a Gemini chat rewound) leaves the row as it was. The index restores from here
the calls it no longer has any row of (:mod:`agentdex.ingest.archiving`), so a
rebuild after a source is gone keeps its tokens, and a call is still counted
once (the index counts one row per call).

Forgotten conversations lose their rows with their entries
(:func:`agentdex.archive.removal.drop_session_rows`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from agentdex.index.usage import COUNT_COLUMNS

#: the archive's context key, in ``contexts`` column order
CONTEXT_COLUMNS = ("agent", "store", "session_id", "model", "cwd", "project", "branch",
                   "worktree", "host")  # fmt: skip
#: one call as the index and the archive exchange it: source path, context key (9 values),
#: call hash, byte offset, timestamp, then the :data:`COUNT_COLUMNS`
CallRow = tuple[object, ...]

DDL = (
    "CREATE TABLE IF NOT EXISTS usage_calls ("
    " source_id INTEGER NOT NULL,"
    " call INTEGER NOT NULL,"
    " context_id INTEGER NOT NULL,"
    " offset INTEGER NOT NULL,"
    " timestamp REAL,"
    + ", ".join(f" {c} INTEGER NOT NULL" for c in COUNT_COLUMNS)
    + ", PRIMARY KEY (source_id, call)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS usage_calls_context ON usage_calls(context_id)",
    "CREATE INDEX IF NOT EXISTS usage_calls_call ON usage_calls(call)",
)
_UPSERT = (
    f"INSERT OR REPLACE INTO usage_calls (source_id, call, context_id, offset, timestamp,"
    f" {', '.join(COUNT_COLUMNS)}) VALUES ({', '.join('?' * (5 + len(COUNT_COLUMNS)))})"
)
_SELECT = (
    "SELECT s.path, "
    + ", ".join(f"c.{c}" for c in CONTEXT_COLUMNS)
    + ", u.call, u.offset, u.timestamp, "
    + ", ".join(f"u.{c}" for c in COUNT_COLUMNS)
    + " FROM usage_calls u JOIN contexts c ON c.id = u.context_id"
    " JOIN sources s ON s.id = u.source_id"
)


def create(db: sqlite3.Connection) -> None:
    """The table (statement by statement: archive migrations run in one transaction)."""
    for statement in DDL:
        db.execute(statement)


def has_table(db: sqlite3.Connection) -> bool:
    return (
        db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_calls'"
        ).fetchone()
        is not None
    )


def upsert(db: sqlite3.Connection, rows: Iterable[tuple[object, ...]]) -> None:
    """Rows of (source id, call, context id, offset, timestamp, counts...)."""
    db.executemany(_UPSERT, rows)


def has_calls(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM usage_calls LIMIT 1").fetchone() is not None


def rows_of(db: sqlite3.Connection, wanted: Iterable[int] | None) -> Iterator[CallRow]:
    """The archived rows (every file's copy) of these calls (None: of every call), as
    :data:`CallRow`."""
    if wanted is None:
        yield from db.execute(_SELECT)
        return
    ids = sorted(set(wanted))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        yield from db.execute(f"{_SELECT} WHERE u.call IN ({','.join('?' * len(chunk))})", chunk)


def drop_contexts(db: sqlite3.Connection, where: str, params: tuple[object, ...]) -> None:
    """Delete the calls of the contexts matching ``where`` (over ``contexts``)."""
    if has_table(db):
        db.execute(
            f"DELETE FROM usage_calls WHERE context_id IN (SELECT id FROM contexts WHERE {where})",
            params,
        )

"""Per-context totals kept beside the records, so listing conversations reads no record rows.

``agentdex conversations`` shows, per conversation, its first and last activity and
how many prompts, replies and tool events it holds. Aggregating that over
every record on each call cost 2 s on a 1 GB history. The writer keeps one
``context_stats`` row per context instead (a context is one conversation's
agent, store, session and paths: a few per conversation), in the same
transaction as the records it sums, so a reader never sees totals that
disagree with the rows:

- records added since the last commit are summed by id range (they are the
  newest ids) and merged into their contexts' rows;
- a context that lost records (a rewritten or truncated source, ``forget``),
  or whose file now belongs to the archive, is summed again from its rows.

:func:`agentdex.api.conversations` reads these rows and falls back to the
per-record aggregate on a generation written before the table existed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from agentdex.index.files import ARCHIVED_HIGH, ARCHIVED_LOW

#: SQL twins of :func:`agentdex.records.conversation_part` over the index's role/kind
#: columns (``tests/test_conversation_counts.py`` holds them to the Python definition).
PROMPT_SQL = "kind = 'prompt'"
REPLY_SQL = "kind = 'message' AND role = 'assistant'"
TOOL_SQL = "kind IN ('tool_call', 'tool_result')"

#: the totals of ``record_rows r`` (with their ``files f`` row, to tell archived records)
_TOTALS = (
    "SELECT r.context_id, min(r.timestamp), max(r.timestamp), count(*),"
    f" sum({PROMPT_SQL}), sum({REPLY_SQL}), sum({TOOL_SQL}),"
    " sum(coalesce(f.path >= ? AND f.path < ?, 0))"
    " FROM record_rows r LEFT JOIN files f ON f.id = r.file_id"
)

DDL = """
CREATE TABLE IF NOT EXISTS context_stats (
    context_id INTEGER PRIMARY KEY,
    first_ts REAL,               -- min(timestamp) of its records (NULL: none has a time)
    last_ts REAL,
    records INTEGER NOT NULL,    -- never 0: a context without records has no row
    prompts INTEGER NOT NULL,
    replies INTEGER NOT NULL,
    tools INTEGER NOT NULL,
    archived INTEGER NOT NULL    -- records kept only by the archive (source gone)
);
"""


def create_and_fill(db: sqlite3.Connection) -> None:
    """Create the table and sum every context (a migration of an existing generation).

    In one transaction: a reader never finds the table empty while records exist.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(DDL)
        db.execute("DELETE FROM context_stats")
        db.execute(
            f"INSERT INTO context_stats {_TOTALS} GROUP BY r.context_id",
            (ARCHIVED_LOW, ARCHIVED_HIGH),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def merge_added(db: sqlite3.Connection, from_rid: int) -> None:
    """Add the records with ids >= ``from_rid`` (this batch's) to their contexts' totals."""
    db.execute(
        f"INSERT INTO context_stats {_TOTALS} WHERE r.id >= ? GROUP BY r.context_id"
        " ON CONFLICT(context_id) DO UPDATE SET"
        " first_ts = CASE WHEN first_ts IS NULL OR excluded.first_ts < first_ts"
        "   THEN coalesce(excluded.first_ts, first_ts) ELSE first_ts END,"
        " last_ts = CASE WHEN last_ts IS NULL OR excluded.last_ts > last_ts"
        "   THEN coalesce(excluded.last_ts, last_ts) ELSE last_ts END,"
        " records = records + excluded.records, prompts = prompts + excluded.prompts,"
        " replies = replies + excluded.replies, tools = tools + excluded.tools,"
        " archived = archived + excluded.archived",
        (ARCHIVED_LOW, ARCHIVED_HIGH, from_rid),
    )


def recount(db: sqlite3.Connection, context_ids: Iterable[int]) -> None:
    """Sum these contexts again from their rows (after deletes or an archive move)."""
    ids = sorted(set(context_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM context_stats WHERE context_id IN ({marks})", chunk)
        db.execute(
            f"INSERT INTO context_stats {_TOTALS} WHERE r.context_id IN ({marks})"
            " GROUP BY r.context_id",
            (ARCHIVED_LOW, ARCHIVED_HIGH, *chunk),
        )


def present(db: sqlite3.Connection) -> bool:
    """Whether this generation keeps the table (one written before it did not)."""
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'context_stats'"
    ).fetchone()
    return row is not None

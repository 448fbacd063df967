"""Per-context totals kept beside the records, so listing conversations reads no record rows.

``agentdex conversations`` shows, per conversation, its first and last activity and
how many prompts, replies and tool events it holds. Aggregating that over
every record on each call cost 2 s on a 1 GB history. The writer keeps one
``context_stats`` row per context instead (a context is one conversation's
agent, store, session and paths: a few per conversation), in the same
transaction as the records it sums, so a reader never sees totals that
disagree with the rows:

- records added since the last commit are summed in Python as their rows are
  written (:class:`AddedTotals`: a GROUP BY over the batch's rows read back
  from SQLite cost ~9% of the writer's main thread in a cold build, where a
  small page cache sends those rows to the WAL first) and merged into their
  contexts' rows at the commit;
- a context that lost records (a rewritten or truncated source, ``forget``),
  or whose file now belongs to the archive, is summed again from its rows.

:func:`agentdex.api.conversations` reads these rows and falls back to the
per-record aggregate on a generation written before the table existed.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any

from agentdex.index.files import ARCHIVED_HIGH, ARCHIVED_LOW
from agentdex.records import KINDS, ROLES

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


_MERGE = (
    "INSERT INTO context_stats (context_id, first_ts, last_ts, records, prompts, replies,"
    " tools, archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT(context_id) DO UPDATE SET"
    " first_ts = CASE WHEN first_ts IS NULL OR excluded.first_ts < first_ts"
    "   THEN coalesce(excluded.first_ts, first_ts) ELSE first_ts END,"
    " last_ts = CASE WHEN last_ts IS NULL OR excluded.last_ts > last_ts"
    "   THEN coalesce(excluded.last_ts, last_ts) ELSE last_ts END,"
    " records = records + excluded.records, prompts = prompts + excluded.prompts,"
    " replies = replies + excluded.replies, tools = tools + excluded.tools,"
    " archived = archived + excluded.archived"
)


def _parts(rk: int, role_x: object, kind_x: object) -> tuple[int, int, int]:
    """(prompt, reply, tool): what a row with these stored columns adds to the counts, as
    :data:`PROMPT_SQL`, :data:`REPLY_SQL` and :data:`TOOL_SQL` read its virtual ``role``
    and ``kind`` (:func:`agentdex.index.rolekind.columns`)."""
    role = role_x if role_x is not None else (ROLES[rk >> 3] if rk >> 3 < len(ROLES) else None)
    kind = kind_x if kind_x is not None else (KINDS[rk & 7] if rk & 7 < len(KINDS) else None)
    return (
        int(kind == "prompt"),
        int(kind == "message" and role == "assistant"),
        int(kind in ("tool_call", "tool_result")),
    )


#: a record row's (context, file), ``rk``, (role_x, kind_x) and ``ts`` (``AddedTotals.add``)
_CONTEXT_FILE = itemgetter(3, 2)
_RK = itemgetter(4)
_ROLE_KIND_X = itemgetter(5, 6)
_TS = itemgetter(7)
_NONE_NONE = {(None, None)}
_INT = {int}


class AddedTotals:
    """The totals of the record rows written since the last commit, summed as they are
    written, per (context, file); :meth:`merge` adds them to ``context_stats``.

    The same sums as the GROUP BY of :data:`_TOTALS` over the rows: a row's time is what
    the virtual ``timestamp`` reads (:data:`agentdex.index.rowpack.TIMESTAMP_SQL`: ``ts`` /
    1000 for an integer, else ``ts``); a context with a time SQLite would compare
    otherwise (text, NaN) is summed again from its rows instead (:func:`recount`);
    whether a file is archived is read at the merge, from its row then, as the GROUP BY's
    join did.
    """

    def __init__(self) -> None:
        #: (context id, file id) -> [first time, last time, records, prompts, replies, tools]
        self.sums: dict[tuple[int, int], list[Any]] = {}
        #: contexts to sum from their rows instead (a time not kept as a number)
        self.recount: set[int] = set()
        self._parts: dict[int, tuple[int, int, int]] = {}

    def add(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Sum record rows in ``record_rows`` insert order (``segments._INSERT_RECORD``:
        id, block, file, context, rk, role_x, kind_x, ts, ...).

        A block's rows (the usual caller) are mostly of one context and file, with known
        roles and kinds and integer times: those are summed by C loops over their columns
        (min, max, a count of each ``rk``), the rest a row at a time."""
        if rows and len(set(map(_CONTEXT_FILE, rows))) == 1:
            times = [ts for ts in map(_TS, rows) if ts is not None]
            if set(map(_ROLE_KIND_X, rows)) == _NONE_NONE and (
                not times or set(map(type, times)) == _INT
            ):
                self._add_alike(rows, times)
                return
        self._add_rows(rows)

    def _add_alike(self, rows: Sequence[tuple[Any, ...]], times: list[int]) -> None:
        """:meth:`_add_rows` of rows of one context and file, no stored role or kind, and
        every time an integer (milliseconds) or None."""
        first = rows[0]
        key = (first[3], first[2])
        found = self.sums.get(key)
        if found is None:
            found = self.sums[key] = [None, None, 0, 0, 0, 0]
        known = self._parts
        found[2] += len(rows)
        for rk, count in Counter(map(_RK, rows)).items():
            parts = known.get(rk)
            if parts is None:
                parts = known[rk] = _parts(rk, None, None)
            found[3] += parts[0] * count
            found[4] += parts[1] * count
            found[5] += parts[2] * count
        if times:
            # the smallest and largest time in seconds: ts / 1000 grows with ts
            low, high = min(times) / 1000, max(times) / 1000
            if found[0] is None or low < found[0]:
                found[0] = low
            if found[1] is None or high > found[1]:
                found[1] = high

    def _add_rows(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Sum record rows one at a time (any context, file, role, kind and time)."""
        sums = self.sums
        known = self._parts
        for row in rows:
            key = (row[3], row[2])
            found = sums.get(key)
            if found is None:
                found = sums[key] = [None, None, 0, 0, 0, 0]
            rk = row[4]
            if row[5] is None and row[6] is None:
                parts = known.get(rk)
                if parts is None:
                    parts = known[rk] = _parts(rk, None, None)
            else:
                parts = _parts(rk, row[5], row[6])
            found[2] += 1
            found[3] += parts[0]
            found[4] += parts[1]
            found[5] += parts[2]
            ts = row[7]
            if ts is None:
                continue
            kind = type(ts)
            if kind is int:
                ts = ts / 1000
            elif kind is not float or ts != ts:
                self.recount.add(row[3])
                continue
            if found[0] is None or ts < found[0]:
                found[0] = ts
            if found[1] is None or ts > found[1]:
                found[1] = ts

    def merge(self, db: sqlite3.Connection) -> set[int]:
        """Add the sums to ``context_stats`` in the open transaction and start again;
        returns the contexts to :func:`recount` (their sums were not added)."""
        sums, self.sums = self.sums, {}
        recount, self.recount = self.recount, set()
        if not sums:
            return recount
        file_ids = sorted({file_id for _, file_id in sums})
        archived: set[int] = set()
        for start in range(0, len(file_ids), 900):
            part = file_ids[start : start + 900]
            archived.update(
                int(row[0])
                for row in db.execute(
                    f"SELECT id FROM files WHERE id IN ({','.join('?' * len(part))})"
                    " AND path >= ? AND path < ?",
                    (*part, ARCHIVED_LOW, ARCHIVED_HIGH),
                )
            )
        totals: dict[int, list[Any]] = {}
        for (context_id, file_id), (first, last, records, prompts, replies, tools) in sums.items():
            if context_id in recount:
                continue
            held = file_id in archived
            found = totals.get(context_id)
            if found is None:
                totals[context_id] = [
                    first,
                    last,
                    records,
                    prompts,
                    replies,
                    tools,
                    records if held else 0,
                ]
                continue
            if first is not None and (found[0] is None or first < found[0]):
                found[0] = first
            if last is not None and (found[1] is None or last > found[1]):
                found[1] = last
            found[2] += records
            found[3] += prompts
            found[4] += replies
            found[5] += tools
            if held:
                found[6] += records
        db.executemany(_MERGE, [(context_id, *values) for context_id, values in totals.items()])
        return recount


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

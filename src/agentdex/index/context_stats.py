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
from itertools import repeat
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

    def add_run(
        self,
        file_id: int,
        contexts: Sequence[int],
        rks: Sequence[int],
        times: Sequence[object],
        role_xs: Sequence[object] | None = None,
        kind_xs: Sequence[object] | None = None,
    ) -> None:
        """Sum a run of record rows of one file by their columns (``record_rows``' context
        id, ``rk``, ``ts``, ``role_x`` and ``kind_x``; None: every row's is NULL), as the
        writer puts them in a block (:meth:`agentdex.index.segments.BlockWriter.add_many`).

        A run is mostly of one context, with known roles and kinds and integer times:
        those are summed by C loops over the columns (min, max, a count of each ``rk``),
        the rest a row at a time. Summing the columns here, where the run's slices are at
        hand, instead of the block's rows at its seal saves five passes over tuples a
        block (docs/performance.md, s18-writer)."""
        count = len(rks)
        if not count:
            return
        if role_xs is None and kind_xs is None and contexts.count(contexts[0]) == count:
            timed = [ts for ts in times if ts is not None] if None in times else times
            if not timed or set(map(type, timed)) == _INT:
                self._add_alike(contexts[0], file_id, count, rks, timed)
                return
        nones = repeat(None)
        self._add_rows(
            zip(
                nones,
                nones,
                repeat(file_id),
                contexts,
                rks,
                nones if role_xs is None else role_xs,
                nones if kind_xs is None else kind_xs,
                times,
            )
        )

    def _add_alike(
        self, context_id: int, file_id: int, count: int, rks: Iterable[int], times: Sequence[Any]
    ) -> None:
        """:meth:`_add_rows` of ``count`` rows of one context and file, no stored role or
        kind, and every time an integer (milliseconds; ``times`` without the None ones)."""
        key = (context_id, file_id)
        found = self.sums.get(key)
        if found is None:
            found = self.sums[key] = [None, None, 0, 0, 0, 0]
        known = self._parts
        found[2] += count
        for rk, rk_count in Counter(rks).items():
            parts = known.get(rk)
            if parts is None:
                parts = known[rk] = _parts(rk, None, None)
            found[3] += parts[0] * rk_count
            found[4] += parts[1] * rk_count
            found[5] += parts[2] * rk_count
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

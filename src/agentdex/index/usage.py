"""Model calls' token usage in the index: every call read, one counted per call, and rollups.

Tables (migration ``m005_usage``):

``usage_calls``
    one row per call as a file wrote it: the file and byte offset it was read
    at (so a resumed or re-read file replaces exactly what it re-reads, like
    its records), its context (agent, session, model, paths: the ``contexts``
    table records use), ``call`` (a 64-bit hash of agent and
    :attr:`~agentdex.records.Usage.call_id`), the time and the counts, and
    ``counted``.
``usage_rollup``
    per context, 15-minute slot of UTC time (``bucket``, its start in epoch
    seconds; -1 for calls without a time) and prompt size (``size``: how many
    of :data:`PROMPT_THRESHOLDS` the call's prompt, input plus cache, is
    over; some models cost more per token past one): the sums of the counted
    calls. A quarter hour is the unit of every time zone's offset, so local
    days, weeks and months are exact unions of slots; ``agentdex usage``
    groups these few rows instead of every call.
``usage_contexts``
    per context and prompt size, with no time (migration ``m007_usage_contexts``):
    the same sums as the context's rollup rows, so a view without a date range
    (by conversation, model, agent, project, branch: a conversation has a context
    or a few, one per model, cwd, branch...) reads one row per context instead of
    one per context and quarter hour.

**One counted row per call.** The same call can be written by several files
(a resumed Claude Code conversation copies its history into a new file, a
forked Codex rollout its parent's token events) and, for one file, by
several reads (a message still being written when a refresh read it): a
later read of a file replaces that file's earlier row of the call, and among
files the row written first (the earliest time, then the first indexed) is
the counted one. When that row goes (its file is re-read or deleted) another
copy is counted instead, so a copy never counts twice and a call is not lost
while any file still holds it.

The writer keeps the tables level in the transaction that changes the rows:
deletes subtract counted rows from both rollups at once; rows added and calls
that lost their counted row are settled at commit (:meth:`UsageTable.settle`).
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from collections.abc import Iterable, Iterator

from agentdex.index.segments import ContextIds
from agentdex.records import Usage

#: seconds per rollup slot (every UTC offset in use is a multiple of it)
SLOT = 900
#: the rollup slot of a row of ``usage_calls``
BUCKET_SQL = f"coalesce(CAST(timestamp / {SLOT} AS INTEGER) * {SLOT}, -1)"
#: prompt sizes (input + cache read + cache write) past which some models' rates change
PROMPT_THRESHOLDS = (128_000, 200_000, 272_000)
#: the rollup's prompt size class of a row of ``usage_calls``
SIZE_SQL = " + ".join(
    f"(input + cache_read + cache_write > {limit})" for limit in PROMPT_THRESHOLDS
)
#: the count columns, in :data:`agentdex.records.USAGE_COUNTS` order
COUNT_COLUMNS = ("input", "cache_read", "cache_write", "output", "reasoning", "cache_write_1h")

DDL = f"""
CREATE TABLE IF NOT EXISTS usage_calls (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    context_id INTEGER NOT NULL,
    call INTEGER NOT NULL,        -- hash of (agent, call id): the same call in every file
    timestamp REAL,
    {", ".join(f"{c} INTEGER NOT NULL" for c in COUNT_COLUMNS)},
    counted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS usage_calls_call ON usage_calls(call);
CREATE INDEX IF NOT EXISTS usage_calls_file ON usage_calls(file_id, offset);
CREATE TABLE IF NOT EXISTS usage_rollup (
    context_id INTEGER NOT NULL,
    bucket INTEGER NOT NULL,      -- start of a {SLOT}-second slot of UTC time; -1: no time
    size INTEGER NOT NULL,        -- how many PROMPT_THRESHOLDS the prompt is over
    calls INTEGER NOT NULL,
    {", ".join(f"{c} INTEGER NOT NULL" for c in COUNT_COLUMNS)},
    PRIMARY KEY (context_id, bucket, size)
) WITHOUT ROWID;
"""

CONTEXTS_DDL = f"""
CREATE TABLE IF NOT EXISTS usage_contexts (
    context_id INTEGER NOT NULL,
    size INTEGER NOT NULL,        -- how many PROMPT_THRESHOLDS the prompt is over
    calls INTEGER NOT NULL,
    {", ".join(f"{c} INTEGER NOT NULL" for c in COUNT_COLUMNS)},
    PRIMARY KEY (context_id, size)
) WITHOUT ROWID;
"""

_SUMS = ", ".join(f"{{sign}} * sum({c})" for c in COUNT_COLUMNS)
_ADD = ", ".join(f"{c} = {c} + excluded.{c}" for c in COUNT_COLUMNS)


def _upsert(table: str, slot: bool) -> str:
    """Add (``sign`` 1) or take away (-1) the counts of the ``usage_calls`` rows ``where``
    selects to ``table``'s rows (per context, slot when ``slot``, and prompt size)."""
    key = "context_id, bucket, size" if slot else "context_id, size"
    select = f"context_id, {BUCKET_SQL}, {SIZE_SQL}" if slot else f"context_id, {SIZE_SQL}"
    groups = "context_id, 2, 3" if slot else "context_id, 2"
    return (
        f"INSERT INTO {table} ({key}, calls, {', '.join(COUNT_COLUMNS)})"
        f" SELECT {select}, {{sign}} * count(*), {_SUMS}"
        f" FROM usage_calls WHERE {{where}} GROUP BY {groups}"
        f" ON CONFLICT({key}) DO UPDATE SET calls = calls + excluded.calls, {_ADD}"
    )


_UPSERTS = (_upsert("usage_rollup", True), _upsert("usage_contexts", False))
_INSERT = (
    "INSERT INTO usage_calls (file_id, offset, context_id, call, timestamp,"
    f" {', '.join(COUNT_COLUMNS)}) VALUES ({', '.join('?' * (5 + len(COUNT_COLUMNS)))})"
)


@functools.lru_cache(maxsize=16384)  # a refresh names each call twice: index and archive
def call_hash(agent: str, call_id: str) -> int:
    """A signed 64-bit name for one call of one agent (SQLite's integer range)."""
    digest = hashlib.blake2b(f"{agent}\0{call_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def create(db: sqlite3.Connection) -> None:
    db.executescript(DDL)


def create_contexts(db: sqlite3.Connection) -> None:
    """Create ``usage_contexts`` and fill it from the rollup (a migration of an existing
    generation), in one transaction: a reader never finds it short of the rollup."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(CONTEXTS_DDL)
        db.execute("DELETE FROM usage_contexts")
        db.execute(
            f"INSERT INTO usage_contexts (context_id, size, calls, {', '.join(COUNT_COLUMNS)})"
            f" SELECT context_id, size, sum(calls), {', '.join(f'sum({c})' for c in COUNT_COLUMNS)}"
            " FROM usage_rollup GROUP BY context_id, size"
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


class UsageTable:
    """The writer's side of the usage tables (the caller holds the writer lock and a
    transaction; :meth:`settle` runs before each commit)."""

    def __init__(self, db: sqlite3.Connection, contexts: ContextIds) -> None:
        self.db = db
        self.contexts = contexts
        #: calls whose counted row may have changed since the last settle
        self._unsettled: set[int] = set()
        #: calls that lost a row in this writer's lifetime (the archive may restore them)
        self.removed: set[int] = set()

    def add(self, file_id: int, usage: Iterable[Usage], *, replacing: bool) -> int:
        """Add one file's calls (as read now); ``replacing``: the file's rows of the same
        calls from an earlier read go first (a resumed read). Returns how many."""
        rows: list[tuple[object, ...]] = []
        calls: set[int] = set()
        for u in usage:
            key = (u.agent, u.store, u.session_id, u.model, u.cwd, u.project, u.branch,
                   u.worktree, u.host)  # fmt: skip
            call = call_hash(u.agent, u.call_id)
            calls.add(call)
            rows.append((file_id, u.offset, self.contexts.get_or_add(key), call, u.timestamp,
                         *u.counts()))  # fmt: skip
        if not rows:
            return 0
        if replacing:
            for call in calls:
                self._remove("file_id = ? AND call = ?", (file_id, call))
        self.db.executemany(_INSERT, rows)
        self._unsettled |= calls
        return len(rows)

    def add_rows(self, file_id: int, rows: Iterable[tuple[object, ...]]) -> int:
        """Add calls kept elsewhere (the archive's): (context key, call, offset, timestamp,
        counts...) each. Returns how many."""
        out: list[tuple[object, ...]] = []
        for context, call, offset, timestamp, *counts in rows:
            context_id = self.contexts.get_or_add(tuple(context))  # type: ignore[arg-type]
            out.append((file_id, offset, context_id, call, timestamp, *counts))
            self._unsettled.add(int(call))  # type: ignore[call-overload]
        self.db.executemany(_INSERT, out)
        return len(out)

    def pairs(self, calls: Iterable[int] | None = None) -> set[tuple[str, int]]:
        """(source path, call) of every row (of ``calls``): which file holds which call; an
        archived file row counts as its source's."""
        from agentdex.index.files import original_path

        sql = "SELECT f.path, u.call FROM usage_calls u JOIN files f ON f.id = u.file_id"
        if calls is None:
            return {(original_path(p), int(c)) for p, c in self.db.execute(sql)}
        wanted = sorted(set(calls))
        found: set[tuple[str, int]] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self.db.execute(f"{sql} WHERE u.call IN ({','.join('?' * len(chunk))})", chunk)
            found.update((original_path(p), int(c)) for p, c in rows)
        return found

    def rows(self) -> Iterator[tuple[object, ...]]:
        """Every row as (file path, context key (9 values), call, offset, timestamp,
        counts...): what the archive keeps."""
        return self.db.execute(
            "SELECT f.path, c.agent, c.store, c.session_id, c.model, c.cwd, c.project,"
            " c.branch, c.worktree, c.host, u.call, u.offset, u.timestamp, "
            + ", ".join(f"u.{c}" for c in COUNT_COLUMNS)
            + " FROM usage_calls u JOIN contexts c ON c.id = u.context_id"
            " JOIN files f ON f.id = u.file_id"
        )

    def delete_file(self, file_id: int, from_offset: int | None) -> None:
        """Delete a file's calls (those read at byte offsets >= ``from_offset``)."""
        if from_offset is None:
            self._remove("file_id = ?", (file_id,))
        else:
            self._remove("file_id = ? AND offset >= ?", (file_id, from_offset))

    def delete_contexts(self, context_ids: Iterable[int]) -> None:
        """Delete every call of these contexts (a forgotten conversation)."""
        ids = sorted(set(context_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            self._remove(f"context_id IN ({','.join('?' * len(chunk))})", tuple(chunk))

    def _remove(self, where: str, args: tuple[object, ...]) -> None:
        """Delete the rows matching ``where``: counted ones leave the rollup now, and
        their calls are settled again (another copy may count instead)."""
        found = self.db.execute(
            f"SELECT call, max(counted) FROM usage_calls WHERE {where} GROUP BY call", args
        ).fetchall()
        self.removed.update(int(row[0]) for row in found)
        calls = [row[0] for row in found if row[1]]
        if not calls:
            if found:
                self.db.execute(f"DELETE FROM usage_calls WHERE {where}", args)
            return
        self._rollup(f"({where}) AND counted = 1", args, -1)
        self.db.execute(f"DELETE FROM usage_calls WHERE {where}", args)
        self._unsettled.update(calls)

    def _rollup(self, where: str, args: tuple[object, ...], sign: int) -> None:
        for upsert in _UPSERTS:
            self.db.execute(upsert.format(sign=sign, where=where), args)

    def settle(self) -> None:
        """Make exactly one row of each unsettled call the counted one, rollup included."""
        if not self._unsettled:
            return
        db = self.db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS usage_settle (call INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM temp.usage_settle")
        db.executemany(
            "INSERT OR IGNORE INTO temp.usage_settle (call) VALUES (?)",
            ((c,) for c in self._unsettled),
        )
        self._unsettled.clear()
        db.execute("CREATE TEMP TABLE IF NOT EXISTS usage_flip (id INTEGER PRIMARY KEY)")
        db.execute("DELETE FROM temp.usage_flip")
        # the rows whose counted flag is wrong: the first-written row of each call is counted
        db.execute(
            "INSERT INTO temp.usage_flip (id)"
            " SELECT u.id FROM temp.usage_settle s JOIN usage_calls u ON u.call = s.call"
            " WHERE u.counted != (u.id = (SELECT w.id FROM usage_calls w WHERE w.call = s.call"
            "   ORDER BY coalesce(w.timestamp, 1e300), w.id LIMIT 1))"
        )
        flipped = "id IN (SELECT id FROM temp.usage_flip)"
        self._rollup(f"{flipped} AND counted = 1", (), -1)
        self._rollup(f"{flipped} AND counted = 0", (), 1)
        db.execute(f"UPDATE usage_calls SET counted = 1 - counted WHERE {flipped}")
        db.execute("DELETE FROM usage_rollup WHERE calls = 0")
        db.execute("DELETE FROM usage_contexts WHERE calls = 0")

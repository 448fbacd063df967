"""Keeping the index and the archive in step: backfill, re-import, tombstones.

Three rules, applied by the refresh (:mod:`agentdex.index.refresh`) under
the writer lock:

* **backfill**: every record the index holds is in the archive. Records the
  index took while the archive was off (or before it existed) are copied
  into it from the index's own text when it is turned on
  (``meta.archived_rid`` says how far that is done).
* **re-import** (:func:`reconcile`): every archived record that no live
  source holds any more is in the index, as a record of an archived file
  row (:mod:`agentdex.archive.keys`), and no archived row duplicates a live
  record. A refresh checks the conversations whose records it deleted (a
  file gone, rewritten or truncated) or that already have archived rows; a
  generation that was never checked whole (a rebuild, or the archive turned
  back on) is checked whole once (``meta.archive_synced``).
* **tombstones** (:func:`apply_tombstones`): a forgotten conversation has
  no record in the index; a refresh applies tombstones the generation has
  not seen (``meta.tombstones_applied``) and skips their records when it
  reads files (:class:`Forgotten`).

A vanished file's records are not deleted and re-imported: the refresh
renames its file row to the archived path (``IndexWriter.keep_as_archived``)
and only the conversations it held are checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentdex.archive.keys import record_key
from agentdex.index.files import (
    ARCHIVE_PARSER,
    ARCHIVED_HIGH,
    ARCHIVED_LOW,
    archived_path,
    read_file_row,
)
from agentdex.index.segments import load_block, prepare
from agentdex.records import Record, record_from_columns

if TYPE_CHECKING:
    from agentdex.archive.store import ArchiveStore
    from agentdex.archive.writer import ArchiveWriter
    from agentdex.index.writer import IndexWriter

Session = tuple[str, str]
SQL_CHUNK = 900


class Forgotten:
    """The tombstoned conversations, for a per-record check while indexing."""

    def __init__(self, tombstones: Iterable[tuple[int, str | None, str]] = ()) -> None:
        self.pairs: set[tuple[str, str]] = set()
        self.any_agent: set[str] = set()
        for _id, agent, session_id in tombstones:
            if agent is None:
                self.any_agent.add(session_id)
            else:
                self.pairs.add((agent, session_id))

    def __bool__(self) -> bool:
        return bool(self.pairs or self.any_agent)

    def holds(self, agent: object, session_id: object) -> bool:
        return session_id in self.any_agent or (agent, session_id) in self.pairs


@dataclass(slots=True)
class SyncStats:
    """What a :func:`reconcile` did: records re-imported, archived rows dropped, conversations."""

    restored: int = 0
    dropped: int = 0
    sessions: int = 0


def archived_files(index: IndexWriter) -> dict[int, str]:
    """Index file rows that hold archived records: id -> index path."""
    return {
        int(fid): str(path)
        for fid, path in index.db.execute(
            "SELECT id, path FROM files WHERE path >= ? AND path < ?", (ARCHIVED_LOW, ARCHIVED_HIGH)
        )
    }


def _in(values: list[Any]) -> str:
    return ",".join("?" * len(values))


def _sessions(index: IndexWriter, sql: str, ids: Iterable[int]) -> set[Session]:
    """(agent, session) pairs ``sql`` selects for ``ids`` (its ``{ids}``), in SQL-sized chunks."""
    values = sorted(set(ids))
    found: set[Session] = set()
    for i in range(0, len(values), SQL_CHUNK):
        chunk = values[i : i + SQL_CHUNK]
        rows = index.db.execute(sql.format(ids=_in(chunk)), chunk)
        found.update((str(agent), str(session)) for agent, session in rows)
    return found


def sessions_of_contexts(index: IndexWriter, context_ids: Iterable[int]) -> set[Session]:
    return _sessions(
        index, "SELECT agent, session_id FROM contexts WHERE id IN ({ids})", context_ids
    )


def sessions_with_archived_rows(index: IndexWriter, files: dict[int, str]) -> set[Session]:
    return _sessions(
        index,
        "SELECT DISTINCT c.agent, c.session_id FROM record_rows r"
        " JOIN contexts c ON c.id = r.context_id WHERE r.file_id IN ({ids})",
        files,
    )


def _index_contexts(index: IndexWriter, agent: str | None, session_id: str) -> list[int]:
    if agent is None:
        rows = index.db.execute("SELECT id FROM contexts WHERE session_id = ?", (session_id,))
    else:
        rows = index.db.execute(
            "SELECT id FROM contexts WHERE session_id = ? AND agent = ?", (session_id, agent)
        )
    return [int(r[0]) for r in rows]


# -- backfill ----------------------------------------------------------------------------------


def backfill(index: IndexWriter, archive: ArchiveWriter) -> int:
    """Offer the index's records the archive has not seen yet; how many were new to it."""
    start = index.meta_int("archived_rid", 1)
    if start >= index.blocks.next_record:
        return 0
    before = archive.added
    current = None
    for _rid, record, path in index.stored_records(
        "r.id >= ? AND f.parser IS NOT ?", (start, ARCHIVE_PARSER)
    ):
        if path != current:
            archive.begin_source(path, jsonl=False)
            current = path
        archive.offer(prepare(record))
    archive.commit()
    return archive.added - before


# -- tombstones ------------------------------------------------------------------------------


def apply_tombstones(index: IndexWriter, store: ArchiveStore) -> int:
    """Remove forgotten conversations the index still holds; how many records went."""
    applied = index.meta_int("tombstones_applied", 0)
    pending = store.tombstones(after=applied)
    if not pending:
        return 0
    removed = 0
    for _id, agent, session_id in pending:
        removed += forget_in_index(index, agent, session_id)
    index._set_meta("tombstones_applied", pending[-1][0])
    return removed


def forget_in_index(index: IndexWriter, agent: str | None, session_id: str) -> int:
    """Delete one conversation's records and title from an index generation."""
    contexts = _index_contexts(index, agent, session_id)
    by_file: dict[int, set[int]] = {}
    for i in range(0, len(contexts), SQL_CHUNK):
        chunk = contexts[i : i + SQL_CHUNK]
        for rid, fid in index.db.execute(
            f"SELECT id, file_id FROM record_rows WHERE context_id IN ({_in(chunk)})", chunk
        ):
            by_file.setdefault(int(fid), set()).add(int(rid))
    removed = _drop(index, by_file)
    if agent is None:
        index.db.execute("DELETE FROM titles WHERE session_id = ?", (session_id,))
    else:
        index.db.execute(
            "DELETE FROM titles WHERE session_id = ? AND agent = ?", (session_id, agent)
        )
    return removed


def _drop(index: IndexWriter, by_file: dict[int, set[int]]) -> int:
    """Drop records per file: a whole file's records at once, else the listed ones."""
    removed = 0
    archived = archived_files(index) if by_file else {}
    for fid, rids in sorted(by_file.items()):
        total = index.file_record_count(fid)
        if len(rids) >= total:
            removed += index.delete_records(fid, None)
        else:
            removed += index.drop_records(fid, rids)
        left = index.file_record_count(fid)
        if fid in archived and left == 0:
            index.db.execute("DELETE FROM files WHERE id = ?", (fid,))
            index.files.pop(archived[fid], None)
        else:
            index.db.execute("UPDATE files SET records = ? WHERE id = ?", (left, fid))
    return removed


# -- re-import ------------------------------------------------------------------------------


def reconcile(
    index: IndexWriter, store: ArchiveStore, sessions: Iterable[Session] | None
) -> SyncStats:
    """Bring the archived rows of ``sessions`` (None: every conversation) in line.

    Per conversation: the keys its live records have; archived entries with
    other keys are wanted in the index; archived rows whose key is live again,
    or no longer archived (pruned, forgotten), are dropped.
    """
    stats = SyncStats()
    files = archived_files(index)
    if sessions is None:
        todo = {
            (str(a), str(s))
            for a, s in store.db.execute(
                "SELECT DISTINCT c.agent, c.session_id FROM contexts c"
                " WHERE EXISTS (SELECT 1 FROM entries e WHERE e.context_id = c.id)"
            )
        }
        todo |= sessions_with_archived_rows(index, files)
    else:
        todo = set(sessions)
    drops: dict[int, set[int]] = {}
    missing: list[tuple[str, str, list[int], dict[tuple[str, str], list[int]]]] = []
    for agent, session_id in sorted(todo):
        stats.sessions += 1
        keys, live_at = _compare_session(index, store, files, agent, session_id, drops)
        if keys:
            missing.append((agent, session_id, keys, live_at))
    if drops:
        stats.dropped = _drop(index, drops)
    for agent, session_id, keys, live_at in missing:
        stats.restored += _restore(index, store, agent, session_id, keys, live_at)
    return stats


def _compare_session(
    index: IndexWriter,
    store: ArchiveStore,
    files: dict[int, str],
    agent: str,
    session_id: str,
    drops: dict[int, set[int]],
) -> tuple[list[int], dict[tuple[str, str], list[int]]]:
    """Collect the archived rows to drop; return the archived keys to restore, and where
    the conversation's live records are (file path, locator -> record ids)."""
    live: set[int] = set()
    live_at: dict[tuple[str, str], list[int]] = {}
    shown: dict[int, list[tuple[int, int]]] = {}
    paths: dict[int, str] = {}
    contexts = _index_contexts(index, agent, session_id)
    for i in range(0, len(contexts), SQL_CHUNK):
        chunk = contexts[i : i + SQL_CHUNK]
        for rid, fid, role, kind, ts, thash, tlen, locator in index.db.execute(
            "SELECT id, file_id, role, kind, timestamp, thash, tlen, locator FROM record_rows"
            f" WHERE context_id IN ({_in(chunk)})",
            chunk,
        ):
            key = record_key(agent, session_id, role, kind, ts, thash, tlen)
            if fid in files:
                shown.setdefault(key, []).append((int(rid), int(fid)))
                continue
            live.add(key)
            path = paths.get(fid)
            if path is None:
                path = paths[fid] = _file_path(index, fid)
            live_at.setdefault((path, str(locator)), []).append(int(rid))
    archived_contexts = store.session_context_ids(agent, session_id)
    keys: set[int] = set()
    for i in range(0, len(archived_contexts), SQL_CHUNK):
        chunk = archived_contexts[i : i + SQL_CHUNK]
        keys.update(
            int(r[0])
            for r in store.db.execute(
                f"SELECT key FROM entries WHERE context_id IN ({_in(chunk)})", chunk
            )
        )
    wanted = keys - live
    for key, places in shown.items():
        if key not in wanted:
            for rid, fid in places:
                drops.setdefault(fid, set()).add(rid)
    return sorted(wanted - shown.keys()), live_at


def _file_path(index: IndexWriter, file_id: int) -> str:
    row = index.db.execute("SELECT path FROM files WHERE id = ?", (file_id,)).fetchone()
    return "" if row is None else str(row[0])


def _live_text(index: IndexWriter, rid: int) -> str:
    row = index.db.execute("SELECT block_id FROM record_rows WHERE id = ?", (rid,)).fetchone()
    block = None if row is None else load_block(index.db, index.block_file, int(row[0]))
    return "" if block is None else block.original_text(rid - block.first_id)


def _restore(
    index: IndexWriter,
    store: ArchiveStore,
    agent: str,
    session_id: str,
    keys: list[int],
    live_at: dict[tuple[str, str], list[int]],
) -> int:
    """Add archived entries to the index as records of archived file rows; how many.

    An entry whose text the live record at the same place (file and locator)
    still contains is left out: it is an earlier state of that record (a reply
    the agent was still writing when it was read), every part of it is found
    through the live one, and showing both would repeat it. It stays archived.
    """
    counts: dict[int, int] = {}
    entries: list[tuple[Any, ...]] = []
    for i in range(0, len(keys), SQL_CHUNK):
        chunk = keys[i : i + SQL_CHUNK]
        entries.extend(store.entries(f"e.key IN ({_in(chunk)})", chunk))
    index.blocks.flush()  # live records of this batch are read back from their blocks
    # source, then offset, then chunk position: each file's records in the order first read
    for entry in sorted(entries, key=_entry_order):
        record = entry_record(store, entry)
        here = live_at.get((record.source_path, record.locator), ())
        if any(record.text in _live_text(index, rid) for rid in here):
            continue
        fid = _archived_file(index, record)
        index.add(prepare(record), fid)
        counts[fid] = counts.get(fid, 0) + 1
    for fid in counts:
        index.db.execute(
            "UPDATE files SET records = ? WHERE id = ?", (index.file_record_count(fid), fid)
        )
    has_title = index.db.execute(
        "SELECT 1 FROM titles WHERE agent = ? AND session_id = ?", (agent, session_id)
    ).fetchone()
    title = None if has_title else store.title(agent, session_id)
    if title:
        index.set_titles(agent, {session_id: title})
    return sum(counts.values())


def _entry_order(entry: tuple[Any, ...]) -> tuple[Any, ...]:
    """Source path, then byte offset (line-based sources), then archive chunk position."""
    return (entry[3], entry[15] if entry[15] is not None else -1, entry[16], entry[17])


def entry_record(store: ArchiveStore, entry: tuple[Any, ...]) -> Record:
    """The normalized record of an archive entry row (``ENTRY_COLUMNS``)."""
    return record_from_columns(entry[1:16], store.text(entry[16], entry[17], entry[18]))


def _archived_file(index: IndexWriter, record: Record) -> int:
    """The index file row holding archived records of ``record``'s source (made if needed)."""
    path = archived_path(record.source_path)
    known = index.files.get(path)
    if known is not None:
        return known.id
    fid = index.new_file(path, record.agent, record.store, ARCHIVE_PARSER)
    index.update_file(fid, {"size": 0, "mtime": 0.0})
    row = read_file_row(index.db, "id = ?", (fid,))
    assert row is not None
    index.files[path] = row
    return fid

"""Keeping the index and the archive in step: backfill, re-import, tombstones.

Three rules, applied by the refresh (:mod:`agentdex.ingest.refresh`) under
the writer lock:

* **backfill**: every record the index holds is in the archive. Records the
  index took while the archive was off (or before it existed) are copied
  into it from the index's own text when it is turned on
  (``meta.archived_rid`` says how far that is done).
* **re-import** (:func:`reconcile`): every archived record that no live
  source holds any more is in the index, as a record of an archived file
  row (:mod:`agentdex.index.files`), and no archived row duplicates a live
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
from agentdex.archive.removal import entry_keys
from agentdex.index.files import ARCHIVE_PARSER
from agentdex.index.segments import prepare

if TYPE_CHECKING:
    from agentdex.archive.store import ArchiveStore
    from agentdex.archive.writer import ArchiveWriter
    from agentdex.index.writer import IndexWriter

Session = tuple[str, str]


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


# -- backfill ----------------------------------------------------------------------------------


def backfill(index: IndexWriter, archive: ArchiveWriter) -> int:
    """Offer the index's records the archive has not seen yet; how many were new to it."""
    start = index.meta_int("archived_rid", 1)
    if start >= index.next_record:
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
        removed += index.forget_conversation(agent, session_id)
    index.set_meta("tombstones_applied", pending[-1][0])
    return removed


# -- re-import ------------------------------------------------------------------------------


def reconcile(
    index: IndexWriter,
    store: ArchiveStore,
    sessions: Iterable[Session] | None,
    writer: ArchiveWriter | None = None,
) -> SyncStats:
    """Bring the archived rows of ``sessions`` (None: every conversation) in line.

    Per conversation: the keys its live records have; archived entries with
    other keys are wanted in the index; archived rows whose key is live again,
    or no longer archived (pruned, forgotten), are dropped. With the refresh's
    archive ``writer``, a re-imported entry's text then points at the index's new
    copy (one copy of the text).
    """
    stats = SyncStats()
    files = index.archived_files()
    todo = set(sessions) if sessions is not None else store.sessions()
    if sessions is None:
        todo |= index.sessions_of_files(files)
    drops: dict[int, set[int]] = {}
    missing: list[tuple[str, str, list[int], dict[tuple[str, str], list[int]]]] = []
    for agent, session_id in sorted(todo):
        stats.sessions += 1
        keys, live_at = _compare_session(index, store, files, agent, session_id, drops)
        if keys:
            missing.append((agent, session_id, keys, live_at))
    if drops:
        stats.dropped = index.drop_by_file(drops)
    for agent, session_id, keys, live_at in missing:
        stats.restored += _restore(index, store, agent, session_id, keys, live_at, writer)
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
    for rid, fid, role, kind, ts, thash, tlen, locator in index.conversation_rows(
        agent, session_id
    ):
        key = record_key(agent, session_id, role, kind, ts, thash, tlen)
        if fid in files:
            shown.setdefault(key, []).append((int(rid), int(fid)))
            continue
        live.add(key)
        path = paths.get(fid)
        if path is None:
            path = paths[fid] = index.file_path(fid)
        live_at.setdefault((path, str(locator)), []).append(int(rid))
    wanted = set(entry_keys(store, agent, session_id)) - live
    for key, places in shown.items():
        if key not in wanted:
            for rid, fid in places:
                drops.setdefault(fid, set()).add(rid)
    return sorted(wanted - shown.keys()), live_at


def _restore(
    index: IndexWriter,
    store: ArchiveStore,
    agent: str,
    session_id: str,
    keys: list[int],
    live_at: dict[tuple[str, str], list[int]],
    writer: ArchiveWriter | None = None,
) -> int:
    """Add archived entries to the index as records of archived file rows; how many.

    An entry whose text the live record at the same place (file and locator)
    still contains is left out: it is an earlier state of that record (a reply
    the agent was still writing when it was read), every part of it is found
    through the live one, and showing both would repeat it. It stays archived.
    """
    counts: dict[int, int] = {}
    entries = store.entries_by_key(keys)
    index.flush()  # live records of this batch are read back from their blocks
    # source, then offset, then chunk position: each file's records in the order first read
    for entry in sorted(entries, key=_entry_order):
        record = store.record(entry)
        here = live_at.get((record.source_path, record.locator), ())
        if any(record.text in index.record_text(rid) for rid in here):
            continue
        fid = index.archived_file(record.source_path, record.agent, record.store)
        text_at = index.add(prepare(record), fid)
        if writer is not None:
            writer.point_at(int(entry[0]), int(entry[16]), text_at)
        counts[fid] = counts.get(fid, 0) + 1
    index.count_file_records(counts)
    title = None if index.has_title(agent, session_id) else store.title(agent, session_id)
    if title:
        index.set_titles(agent, {session_id: title})
    return sum(counts.values())


def _entry_order(entry: tuple[Any, ...]) -> tuple[Any, ...]:
    """Source path, then byte offset (line-based sources), then where the text was stored
    (chunk position; a shared index block, a negative chunk: block, then position)."""
    chunk = int(entry[16])
    offset = entry[15] if entry[15] is not None else -1
    return (entry[3], offset, chunk < 0, abs(chunk), entry[17])

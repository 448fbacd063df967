"""Changing the archive on request: forget conversations, prune old ones.

Both take the index writer lock (one writer at a time: a refresh waits, or
they wait for it), change the archive first and then every index
generation that exists (the current one and a rebuild in progress), and
discard the no-change manifest (:mod:`agentdex.ingest.manifest`) so the next
refresh checks everything.

**Forget** writes a tombstone per conversation (kept in the archive, so it
outlives rebuilds), then removes the conversation's entries, title and
contexts from the archive and its records from the index. A refresh
consults the tombstones: it never indexes or archives those records again,
and applies tombstones a generation has not seen (a rebuild, or a forget
killed half-way). A killed forget is finished by the next writer: the
tombstone is committed first, and both purges are idempotent.

**Prune** removes archived conversations whose last activity is older than
a cutoff, but only the records no live source holds: what the agent still
has stays archived.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentdex.archive.removal import (
    add_tombstones,
    drop_sessions,
    entry_keys,
    inactive_sessions,
    purge_forgotten,
)
from agentdex.archive.store import ArchiveStore
from agentdex.errors import CorruptError
from agentdex.ingest import events, sync

if TYPE_CHECKING:
    from agentdex.index.writer import IndexWriter

Session = tuple[str, str]


@contextmanager
def writing(root: Path) -> Iterator[ArchiveStore]:
    """The archive opened for writing under the index writer lock (waits for a refresh)."""
    from agentdex.index.lock import WriterLock
    from agentdex.index.store import Location

    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = WriterLock(Location(root).lock_path)
    lock.acquire()
    try:
        store = ArchiveStore(root, write=True)
        try:
            yield store
        finally:
            store.close()
    finally:
        lock.release()


def _generations(root: Path) -> list[Path]:
    from agentdex.index.store import Location

    location = Location(root)
    found: list[Path] = []
    for gen in (location.current(), location.building()):
        if gen is not None and gen not in found and (gen / "index.db").exists():
            found.append(gen)
    return found


def _open_index(gen: Path) -> IndexWriter | None:
    """A generation's writer, or None when it cannot be opened (it will be rebuilt)."""
    from agentdex.index.writer import IndexWriter

    try:
        return IndexWriter(gen)
    except CorruptError:
        return None


def _discard_manifest(root: Path) -> None:
    from agentdex.ingest import manifest

    manifest.discard(root)


# -- forget ------------------------------------------------------------------------------------


def forget(root: Path, sessions: list[tuple[str | None, str]], reason: str) -> int:
    """Tombstone ``sessions`` ((agent or None for any, session id)) and remove them from the
    archive and every index generation; returns the index records removed."""
    removed = 0
    with writing(root) as store:
        add_tombstones(store, sessions, reason)
        purge_forgotten(store)
        for gen in _generations(root):
            index = _open_index(gen)
            if index is None:
                continue
            ok = False
            try:
                removed += sync.apply_tombstones(index, store)
                index.commit()
                ok = True
            finally:
                index.close(ok)
        _discard_manifest(root)
        events.emit(events.Event("forgotten", tuple(sessions), root=str(root)))
    return removed


# -- prune ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class PruneResult:
    """What a prune removed (and kept because a live source still holds it)."""

    conversations: list[dict[str, object]] = field(default_factory=list)
    entries_removed: int = 0
    entries_kept_live: int = 0
    index_records_removed: int = 0


def prune(root: Path, cutoff: float) -> PruneResult:
    """Remove archived records of conversations last active before ``cutoff`` (epoch
    seconds) that no live source holds; the index loses their archived rows."""
    result = PruneResult()
    with writing(root) as store:
        old = inactive_sessions(store, cutoff)
        gens = _generations(root)
        index = _open_index(gens[0]) if gens else None
        ok = False
        try:
            doomed: list[int] = []
            for agent, session_id, last, count in old:
                live = _live_keys(index, agent, session_id) if index is not None else set()
                keys = [k for k in entry_keys(store, agent, session_id) if k not in live]
                doomed.extend(keys)
                result.entries_kept_live += count - len(keys)
                if keys:
                    result.conversations.append(
                        {
                            "agent": agent,
                            "session_id": session_id,
                            "last_activity": last,
                            "records_removed": len(keys),
                            "records_kept": count - len(keys),
                        }
                    )
            result.entries_removed = store.remove_entries(doomed)
            drop_sessions(
                store,
                [
                    (str(item["agent"]), str(item["session_id"]))
                    for item in result.conversations
                    if item["records_kept"] == 0
                ],
            )
            if index is not None:
                touched = [(str(c["agent"]), str(c["session_id"])) for c in result.conversations]
                result.index_records_removed = sync.reconcile(index, store, touched).dropped
                index.commit()
            ok = True
        finally:
            if index is not None:
                index.close(ok)
        if result.conversations:
            _discard_manifest(root)
            pruned = tuple((str(c["agent"]), str(c["session_id"])) for c in result.conversations)
            events.emit(events.Event("pruned", pruned, root=str(root)))
    return result


def _live_keys(index: IndexWriter, agent: str, session_id: str) -> set[int]:
    """Keys of the conversation's records that a live source holds (not archived rows)."""
    from agentdex.archive.keys import record_key

    archived = index.archived_files()
    keys: set[int] = set()
    for _rid, fid, role, kind, ts, thash, tlen, _locator in index.conversation_rows(
        agent, session_id
    ):
        if fid not in archived:
            keys.add(record_key(agent, session_id, role, kind, ts, thash, tlen))
    return keys

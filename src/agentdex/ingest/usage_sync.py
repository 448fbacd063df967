"""Keeping the index's and the archive's token usage in step (with the archive on).

* **kept**: every call a refresh reads goes to the archive too
  (:meth:`agentdex.archive.writer.ArchiveWriter.add_usage`), in the archive's
  batch, which commits before the index's.
* **copied** (:func:`copy_to_archive`): an archive made before it kept usage
  gets the calls the index holds once (``meta.usage_copied`` of the archive),
  vanished files' calls included (the index kept them as archived rows).
* **restored** (:func:`restore`): a source's copy of a call that the archive
  holds and the index no longer has from that source (a rebuild after the
  source was deleted, a file rewritten without it, a Gemini chat rewound) is
  added back to the index as a row of the source's archived file row, so the
  index holds what it held before the source changed, and counts the same row.
  A generation is compared whole once (``meta.usage_restored``: a rebuild, a
  first build); after that only the calls that lost a row in this refresh are
  looked up. The index still counts one row per call, so a restored call is
  never counted twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentdex.archive import usage as archived
from agentdex.index.files import original_path

if TYPE_CHECKING:
    from agentdex.archive.store import ArchiveStore
    from agentdex.archive.writer import ArchiveWriter
    from agentdex.index.writer import IndexWriter
    from agentdex.ingest.sync import Forgotten

COPIED = "usage_copied"
RESTORED = "usage_restored"


def copy_to_archive(index: IndexWriter, writer: ArchiveWriter, store: ArchiveStore) -> int:
    """Copy the index's calls into an archive that never had them (once); how many."""
    if store.meta_int(COPIED, 0) == 1:
        return 0
    if index.db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
        # an empty generation (a first build, a rebuild starting): every call it will hold
        # is offered to the archive as it is read, or restored from it; nothing to copy
        store.set_meta(COPIED, 1)
        return 0
    copied = writer.add_usage_rows(
        (original_path(str(row[0])), *row[1:]) for row in index.usage.rows()
    )
    store.set_meta(COPIED, 1)
    return copied


def nothing_to_restore(index: IndexWriter, store: ArchiveStore) -> bool:
    """Note that this generation need not be compared whole with the archive when the
    archive holds no call yet (a first build on a new machine): every call it will hold is
    one this generation offers. A call that loses its row meanwhile is still looked up
    (``index.usage.removed``). Whether the note was written (to commit)."""
    if index.meta_int(RESTORED, 0) == 1 or not archived.has_table(store.db):
        return False
    if archived.has_calls(store.db):
        return False
    index.set_meta(RESTORED, 1)
    return True


def restore(index: IndexWriter, store: ArchiveStore, forgotten: Forgotten) -> int:
    """Add back the archived copies of calls that the index no longer has from that source
    (any more; ``whole``: every archived copy is compared); how many rows."""
    if not archived.has_table(store.db):
        return 0
    whole = index.meta_int(RESTORED, 0) != 1
    calls: set[int] | None = None if whole else set(index.usage.removed)
    index.usage.removed.clear()
    restored = 0
    if (calls or whole) and archived.has_calls(store.db):
        present = index.usage.pairs(calls)
        by_file: dict[int, list[tuple[object, ...]]] = {}
        for row in archived.rows_of(store.db, calls):
            path, context, rest = str(row[0]), row[1:10], row[10:]
            if (path, rest[0]) in present:
                continue
            agent, store_id, session = str(context[0]), str(context[1]), context[2]
            if forgotten and forgotten.holds(agent, session):
                continue
            fid = index.archived_file(path, agent, store_id)
            by_file.setdefault(fid, []).append((context, *rest))
        for fid, rows in by_file.items():
            restored += index.restore_usage(fid, rows)
    if whole:
        index.set_meta(RESTORED, 1)
    return restored

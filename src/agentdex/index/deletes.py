"""The index writer's deletes: a file's records, from an offset or an id on, or some of them.

Named methods of :class:`agentdex.index.writer.IndexWriter` (this is its
mixin). SQLite loses the rows at once; the postings get the delete through
the ``postings_deletes`` journal (the writer module's docstring), applied
when the batch's tantivy commit runs, so a kill in between is replayed by
the next writer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from agentdex.index.segments import prepare

if TYPE_CHECKING:
    from agentdex.index.files import FileRows
    from agentdex.index.postings import PostingsWriter
    from agentdex.index.segments import BlockWriter, Prepared
    from agentdex.index.usage import UsageTable
    from agentdex.records import Record


class _Writer(Protocol):
    """What these methods use of the writer they are mixed into."""

    db: sqlite3.Connection
    blocks: BlockWriter
    files: FileRows
    usage: UsageTable
    dead_bytes: int
    touched_contexts: set[int]
    _postings: PostingsWriter | None
    _queued_deletes: list[tuple[int, int | None]]
    _stats_recount: set[int]

    def add(self, prepared: Prepared, file_id: int) -> tuple[int, int]: ...
    def stored_records(
        self, where: str, params: tuple[Any, ...] = ()
    ) -> Iterator[tuple[int, Record, str]]: ...
    def delete_records(self, file_id: int, from_offset: int | None) -> int: ...
    def delete_from_rid(self, file_id: int, from_rid: int) -> int: ...
    def _delete(self, file_id: int, where: str, args: tuple[int, ...], *, whole: bool) -> int: ...
    def _contexts_changing(self, where: str, args: tuple[Any, ...]) -> None: ...


class RecordDeletes:
    """Mixin of the index writer: deleting records and file rows."""

    def delete_records(self: _Writer, file_id: int, from_offset: int | None) -> int:
        """Delete a file's records (those at byte offsets >= ``from_offset``), and its calls'
        usage read there (both are read again, or the file is gone); returns how many records."""
        self.usage.delete_file(file_id, from_offset)
        where = "file_id = ?" + (" AND offset >= ?" if from_offset is not None else "")
        args: tuple[int, ...] = (file_id,) if from_offset is None else (file_id, from_offset)
        return self._delete(file_id, where, args, whole=from_offset is None)

    def delete_from_rid(self: _Writer, file_id: int, from_rid: int) -> int:
        """Delete a file's records with ids >= ``from_rid``; returns how many."""
        return self._delete(file_id, "file_id = ? AND id >= ?", (file_id, from_rid), whole=False)

    def _delete(
        self: _Writer, file_id: int, where: str, args: tuple[int, ...], *, whole: bool
    ) -> int:
        """Delete the file's records matching ``where``: SQLite now, the postings journaled
        as the file's records from the first deleted id on (every one, when ``whole``)."""
        count, dead, first = self.db.execute(
            f"SELECT count(*), coalesce(sum(tlen + 1), 0), min(id) FROM record_rows WHERE {where}",
            args,
        ).fetchone()
        if not count:
            return 0
        self._contexts_changing(where, args)
        self.db.execute(f"DELETE FROM record_rows WHERE {where}", args)
        from_rid = None if whole else int(first)
        self.db.execute(
            "INSERT INTO postings_deletes (file_id, from_rid) VALUES (?, ?)", (file_id, from_rid)
        )
        if self._postings is None:
            self._queued_deletes.append((file_id, from_rid))
        else:
            self._postings.delete_file(file_id, from_rid)
        self.dead_bytes += dead
        return int(count)

    def remove_file(self: _Writer, file_id: int, path: str) -> int:
        """Delete a file's row and its records; returns how many records."""
        removed = self.delete_records(file_id, None)
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))
        self.files.pop(path, None)
        return removed

    def _contexts_changing(self: _Writer, where: str, args: tuple[Any, ...]) -> None:
        """Note the contexts of the records matching ``where``, about to be deleted or moved
        to the archive: the archive sync checks their conversations, and their
        ``context_stats`` are summed again at the next commit."""
        ids = {
            row[0]
            for row in self.db.execute(
                f"SELECT DISTINCT context_id FROM record_rows WHERE {where}", args
            )
        }
        self.touched_contexts |= ids
        self._stats_recount |= ids

    def drop_records(self: _Writer, file_id: int, rids: set[int]) -> int:
        """Delete the records ``rids`` of one file, keeping its others; returns how many.

        The postings journal deletes a file's records from an id on, so the
        file's records past the first dropped one are deleted and the kept ones
        re-added from their stored text (new ids, same file, same order): a
        kill between the commits is recovered like any other batch.
        """
        if not rids:
            return 0
        self.blocks.flush()  # records added in this batch are read back from their blocks
        first = min(rids)
        kept = [
            (record, path)
            for rid, record, path in self.stored_records(
                "r.file_id = ? AND r.id >= ?", (file_id, first)
            )
            if rid not in rids
        ]
        dropped = self.delete_from_rid(file_id, first) - len(kept)
        for record, _path in kept:
            self.add(prepare(record), file_id)
        return dropped

"""The index writer's edits by conversation, and its rows kept from the archive.

Named methods of :class:`agentdex.index.writer.IndexWriter` (this is its
mixin) for what the ingest layer does by conversation: forget one, find
which conversations a set of contexts or files hold, read a conversation's
record keys, drop records, and keep records the archive feeds back as rows
of ``archived:`` files (:mod:`agentdex.index.files`). Only the index writes
its tables; the ingest layer (:mod:`agentdex.ingest.sync`) decides what.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from agentdex.index.files import (
    ARCHIVE_PARSER,
    ARCHIVED_HIGH,
    ARCHIVED_LOW,
    archived_path,
    read_file_row,
)
from agentdex.index.segments import load_block

if TYPE_CHECKING:
    from agentdex.index.files import FileRows
    from agentdex.index.segments import BlockFile, Prepared
    from agentdex.index.usage import UsageTable

Session = tuple[str, str]
#: ids per SQL statement (below SQLite's limit on host parameters)
SQL_CHUNK = 900


def _in(values: list[Any]) -> str:
    return ",".join("?" * len(values))


def _chunks(values: Iterable[int]) -> Iterator[list[int]]:
    ordered = sorted(set(values))
    for i in range(0, len(ordered), SQL_CHUNK):
        yield ordered[i : i + SQL_CHUNK]


class _Writer(Protocol):
    """What these methods use of the writer they are mixed into."""

    db: sqlite3.Connection
    files: FileRows
    block_file: BlockFile
    usage: UsageTable

    def add(self, prepared: Prepared, file_id: int) -> tuple[int, int]: ...
    def delete_records(self, file_id: int, from_offset: int | None) -> int: ...
    def drop_records(self, file_id: int, rids: set[int]) -> int: ...
    def file_record_count(self, file_id: int) -> int: ...
    def new_file(self, path: str, agent: str, store: str, parser: str | None) -> int: ...
    def update_file(self, file_id: int, values: dict[str, Any]) -> None: ...
    def _contexts_changing(self, where: str, args: tuple[Any, ...]) -> None: ...
    def archived_files(self) -> dict[int, str]: ...
    def _sessions(self, sql: str, ids: Iterable[int]) -> set[Session]: ...
    def conversation_contexts(self, agent: str | None, session_id: str) -> list[int]: ...
    def drop_by_file(self, by_file: dict[int, set[int]]) -> int: ...


class ConversationEdits:
    """Mixin of the index writer: edits by conversation and archived rows."""

    # -- which conversations --------------------------------------------------------------
    def archived_files(self: _Writer) -> dict[int, str]:
        """File rows that hold records kept from the archive: id -> index path."""
        return {
            int(fid): str(path)
            for fid, path in self.db.execute(
                "SELECT id, path FROM files WHERE path >= ? AND path < ?",
                (ARCHIVED_LOW, ARCHIVED_HIGH),
            )
        }

    def _sessions(self: _Writer, sql: str, ids: Iterable[int]) -> set[Session]:
        found: set[Session] = set()
        for chunk in _chunks(ids):
            rows = self.db.execute(sql.format(ids=_in(chunk)), chunk)
            found.update((str(agent), str(session)) for agent, session in rows)
        return found

    def sessions_of_contexts(self: _Writer, context_ids: Iterable[int]) -> set[Session]:
        """The (agent, session) pairs of these context ids."""
        return self._sessions(
            "SELECT agent, session_id FROM contexts WHERE id IN ({ids})", context_ids
        )

    def sessions_of_files(self: _Writer, file_ids: Iterable[int]) -> set[Session]:
        """The (agent, session) pairs with records in these files."""
        return self._sessions(
            "SELECT DISTINCT c.agent, c.session_id FROM record_rows r"
            " JOIN contexts c ON c.id = r.context_id WHERE r.file_id IN ({ids})",
            file_ids,
        )

    def conversation_contexts(self: _Writer, agent: str | None, session_id: str) -> list[int]:
        """Context ids of one conversation (``agent`` None: that session id of any agent)."""
        if agent is None:
            rows = self.db.execute("SELECT id FROM contexts WHERE session_id = ?", (session_id,))
        else:
            rows = self.db.execute(
                "SELECT id FROM contexts WHERE session_id = ? AND agent = ?", (session_id, agent)
            )
        return [int(r[0]) for r in rows]

    def conversation_rows(
        self: _Writer, agent: str, session_id: str
    ) -> Iterator[tuple[int, int, str, str, Any, int, int, str]]:
        """``(id, file_id, role, kind, timestamp, thash, tlen, locator)`` of a conversation's
        records: every part of their archive key, no text read."""
        for chunk in _chunks(self.conversation_contexts(agent, session_id)):
            yield from self.db.execute(
                "SELECT id, file_id, role, kind, timestamp, thash, tlen, locator FROM record_rows"
                f" WHERE context_id IN ({_in(chunk)})",
                chunk,
            )

    def file_path(self: _Writer, file_id: int) -> str:
        row = self.db.execute("SELECT path FROM files WHERE id = ?", (file_id,)).fetchone()
        return "" if row is None else str(row[0])

    def record_text(self: _Writer, rid: int) -> str:
        """One record's original text ("" when it is gone; this batch's records once
        :meth:`flush` wrote their block)."""
        row = self.db.execute("SELECT block_id FROM record_rows WHERE id = ?", (rid,)).fetchone()
        block = None if row is None else load_block(self.db, self.block_file, int(row[0]))
        return "" if block is None else block.original_text(rid - block.first_id)

    def has_title(self: _Writer, agent: str, session_id: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM titles WHERE agent = ? AND session_id = ?", (agent, session_id)
        ).fetchone()
        return row is not None

    # -- removing -------------------------------------------------------------------------
    def forget_conversation(self: _Writer, agent: str | None, session_id: str) -> int:
        """Delete one conversation's records, model calls' usage and title; how many records
        went."""
        by_file: dict[int, set[int]] = {}
        contexts = self.conversation_contexts(agent, session_id)
        self.usage.delete_contexts(contexts)
        for chunk in _chunks(contexts):
            for rid, fid in self.db.execute(
                f"SELECT id, file_id FROM record_rows WHERE context_id IN ({_in(chunk)})", chunk
            ):
                by_file.setdefault(int(fid), set()).add(int(rid))
        removed = self.drop_by_file(by_file)
        if agent is None:
            self.db.execute("DELETE FROM titles WHERE session_id = ?", (session_id,))
        else:
            self.db.execute(
                "DELETE FROM titles WHERE session_id = ? AND agent = ?", (session_id, agent)
            )
        return removed

    def drop_by_file(self: _Writer, by_file: dict[int, set[int]]) -> int:
        """Drop records per file (a whole file's at once, else the listed ids); an archived
        file row left empty goes too. Returns how many records went."""
        removed = 0
        archived = self.archived_files() if by_file else {}
        for fid, rids in sorted(by_file.items()):
            total = self.file_record_count(fid)
            if len(rids) >= total:
                removed += self.delete_records(fid, None)
            else:
                removed += self.drop_records(fid, rids)
            left = self.file_record_count(fid)
            if fid in archived and left == 0:
                self.db.execute("DELETE FROM files WHERE id = ?", (fid,))
                self.files.pop(archived[fid], None)
            else:
                self.db.execute("UPDATE files SET records = ? WHERE id = ?", (left, fid))
        return removed

    # -- records kept from the archive ----------------------------------------------------
    def keep_as_archived(self: _Writer, file_id: int, path: str) -> bool:
        """A vanished file's records stay, as kept from the archive; False if they cannot.

        The file row is renamed to its archived path, so its records and
        postings stay as they are: nothing is re-indexed. Only possible while
        no archived row of that path exists (else the caller removes the file
        and the archive sync re-adds what is missing).
        """
        new_path = archived_path(path)
        if new_path in self.files or not self.file_record_count(file_id):
            return False
        self.db.execute(
            "UPDATE files SET path = ?, parser = ?, size = 0, mtime = 0, resume_offset = 0,"
            " resume_line = 0, state = '{}', wal_sig = '', indexed_at = ? WHERE id = ?",
            (new_path, ARCHIVE_PARSER, time.time(), file_id),
        )
        self.files.pop(path, None)
        row = read_file_row(self.db, "id = ?", (file_id,))
        assert row is not None
        self.files[new_path] = row
        self._contexts_changing("file_id = ?", (file_id,))
        return True

    def archived_file(self: _Writer, source_path: str, agent: str, store: str) -> int:
        """The file row holding records kept from the archive for ``source_path`` (made if
        needed)."""
        path = archived_path(source_path)
        known = self.files.get(path)
        if known is not None:
            return known.id
        fid = self.new_file(path, agent, store, ARCHIVE_PARSER)
        self.update_file(fid, {"size": 0, "mtime": 0.0})
        row = read_file_row(self.db, "id = ?", (fid,))
        assert row is not None
        self.files[path] = row
        return fid

    def count_file_records(self: _Writer, file_ids: Iterable[int]) -> None:
        """Store the current record count of these files in their rows."""
        for fid in file_ids:
            self.db.execute(
                "UPDATE files SET records = ? WHERE id = ?", (self.file_record_count(fid), fid)
            )

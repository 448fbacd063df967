"""The tail: records in SQLite that the postings do not hold yet, and catching up with them.

Named methods of :class:`agentdex.index.writer.IndexWriter` (this is its
mixin). A small refresh leaves its records out of the postings (readers
verify them directly), and a writer killed between its commit steps leaves
SQLite ahead of tantivy; :meth:`PostingsTail.catch_up` indexes both in one
go and replays the journaled deletes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentdex.index import postings as postings_mod
from agentdex.index import stored
from agentdex.index.postings import LONG_TOKEN, role_kind, rust_safe
from agentdex.index.scores import level_of
from agentdex.index.segments import has_long_token

if TYPE_CHECKING:
    from agentdex.index.postings import PostingsWriter
    from agentdex.index.segments import BlockFile, BlockWriter


class _Writer(Protocol):
    """What these methods use of the writer they are mixed into."""

    gen: Path
    db: sqlite3.Connection
    blocks: BlockWriter
    block_file: BlockFile
    in_postings: bool
    text_chars: set[str]
    _chars_grew: bool

    @property
    def postings(self) -> PostingsWriter: ...
    def meta_int(self, key: str, default: int = 0) -> int: ...
    def set_meta(self, key: str, value: object) -> None: ...
    def _append_vocabulary(self, texts: list[str]) -> None: ...


#: :meth:`PostingsWriter.add`'s arguments for one record: ``(rid, file_id, context_id, rk,
#: flags, text, timestamp, level)``
PostingsArgs = tuple[int, int, int, int, int, str, float | None, int]


def postings_args(row: tuple[Any, ...], lowered: str) -> PostingsArgs:
    """A stored record's postings document (a row and text of :func:`stored.lowered_rows`)."""
    rid, file_id, context_id, role, kind, timestamp, tlen = row
    flags = LONG_TOKEN if has_long_token(lowered, len(lowered)) else 0
    text = rust_safe(lowered)
    return (
        rid,
        file_id,
        context_id,
        role_kind(role, kind),
        flags,
        text,
        timestamp,
        level_of(kind, role, tlen),
    )


class PostingsTail:
    """Mixin of the index writer: the records not in the postings yet."""

    def tail_size(self: _Writer) -> int:
        """Records not in the postings yet (a deferred tail, or a writer killed mid-commit)."""
        deletes = self.db.execute("SELECT count(*) FROM postings_deletes").fetchone()[0]
        return max(0, self.blocks.next_record - self.meta_int("postings_rid", 1)) + deletes

    def defer_postings(self: _Writer) -> None:
        """This refresh's new records stay out of the postings (a small refresh: no tantivy)."""
        self.in_postings = False

    def _append_vocabulary(self: _Writer, texts: list[str]) -> None:
        if not texts:
            return
        analyzer = postings_mod.analyzer()
        terms: set[str] = set()
        for text in texts:
            terms.update(analyzer.analyze(text))
        postings_mod.append_vocabulary(self.gen, sorted(terms))

    def catch_up(self: _Writer) -> None:
        """Bring the postings level with SQLite: index the tail and replay journaled deletes.

        The tail is what small refreshes left out of the postings, or what a
        writer killed between its commit steps did not get to; either way the
        records are in SQLite and readers verify them until this runs.
        """
        self.in_postings = True
        postings_rid = self.meta_int("postings_rid", 1)
        last = self.db.execute("SELECT max(id) FROM record_rows").fetchone()[0]
        deletes = self.db.execute(
            "SELECT file_id, from_rid FROM postings_deletes ORDER BY id"
        ).fetchall()
        if not deletes and (last is None or last < postings_rid):
            return
        self.postings.delete_from_rid(postings_rid)
        for file_id, from_rid in deletes:
            self.postings.delete_file(file_id, from_rid)
        readded: list[str] = []
        for row, lowered in stored.lowered_rows(self.db, self.block_file, postings_rid):
            args = postings_args(row, lowered)
            text = args[5]  # as tantivy takes it: a lone surrogate is a "?" there
            if not text.isascii():
                # the characters of what tantivy indexes, as a bulk load notes them: a lone
                # surrogate of the stored text cannot be stored in the index's text_chars
                self.text_chars.update(c for c in set(text) if c > "\x7f")
                self._chars_grew = True
            self.postings.add(*args)
            readded.append(text)
        self.postings.commit()
        self.set_meta("postings_rid", self.blocks.next_record)
        if self._chars_grew:
            self.set_meta("text_chars", "".join(sorted(self.text_chars)))
            self._chars_grew = False
        self.db.execute("DELETE FROM postings_deletes")
        if self.meta_int("vocab_rid", 1) < self.blocks.next_record:
            self._append_vocabulary(readded)
            self.set_meta("vocab_rid", self.blocks.next_record)
        self.db.execute("COMMIT")
        self.db.execute("BEGIN IMMEDIATE")

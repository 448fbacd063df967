"""The write side of one index generation: files, records, text blocks and postings, in batches.

SQLite holds the truth (files and their resume cursors, records, text
blocks); tantivy holds the postings derived from it. A batch is committed in
three steps:

1. SQLite: the batch's files, records, blocks and the postings deletes it
   implies (``postings_deletes``), in one transaction;
2. tantivy: the batch's documents and deletes, in one commit;
3. SQLite: ``postings_rid`` (every record below it is in tantivy),
   ``vocab_rid`` (every record below it has its terms in the vocabulary)
   and the applied deletes cleared.

A bulk load's periodic commit may run step 2 on a thread while the next batch
is written, step 3 then going into that batch's transaction
(:meth:`IndexWriter.commit`'s ``beside``).

A process killed between the steps leaves SQLite ahead of tantivy;
:meth:`IndexWriter.catch_up` (run by the next writer that indexes postings)
replays the deletes and re-adds the records past ``postings_rid`` from their
stored text, and readers verify those records directly until then. Small
refreshes use the same mechanism on purpose: their records stay out of the
postings (no tantivy writer at all: an append is searchable in a fraction
of the time) until the tail is big enough to index in one go. So a kill at any point loses
nothing that was committed and never shows half a batch.

Step 1 runs the writer's ``before_commit`` hooks inside its transaction,
just before it commits: another store that must never be behind the index
(the archive: :mod:`agentdex.ingest.archiving` registers it) commits there,
and may record how far it got in the same transaction. ``after_commit`` hooks
run once the three steps are done: that store may then read the batch's
committed rows (the archive makes a first build's entries from them:
:mod:`agentdex.archive.spans`). The last commit of :meth:`IndexWriter.finish` with
``while_merging`` hooks runs them once step 1 is done, on the hooks' thread (they read
committed SQLite rows only, never the postings).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from agentdex.index import context_stats, coverage, stored
from agentdex.index import merging as merging_mod
from agentdex.index import postings as postings_mod
from agentdex.index.columns import Columns
from agentdex.index.conversations import ConversationEdits
from agentdex.index.coverage import BuildCoverage
from agentdex.index.deletes import RecordDeletes
from agentdex.index.files import READ_ERROR_KEY, FileRows
from agentdex.index.memory import release_free_memory
from agentdex.index.postings import INDEXING_THREADS, PostingsWriter
from agentdex.index.segments import (
    BlockFile,
    BlockWriter,
    Prepared,
)
from agentdex.index.store import open_writer_db
from agentdex.index.tail import PostingsTail
from agentdex.index.termlist import write_term_list
from agentdex.index.usage import UsageTable
from agentdex.records import Record, Usage
from agentdex.tuning import env_int

#: a refresh that adds more text than this rebuilds the whole term list at its end
#: instead of tokenizing the new text again in Python for the delta
VOCAB_DELTA_BYTES = 8 * 1024 * 1024
#: rebuild the term list when its delta grows past this share of it (or this size)
VOCAB_DELTA_SHARE = 0.25
VOCAB_DELTA_MAX = 16 * 1024 * 1024
#: nice levels the tail's children (the term list's, the merge) run below the writer while
#: its ``while_merging`` hooks run beside them (a first build's archive entries: the tail's
#: longest chain, to keep a core to itself; docs/performance.md, s18-tail); 0: the writer's
TAIL_CHILD_NICE = env_int("AGENTDEX_INDEX_TAIL_CHILD_NICE", 5)
RECORD_INDEXES = (
    "CREATE INDEX IF NOT EXISTS record_rows_file ON record_rows(file_id)",
    "CREATE INDEX IF NOT EXISTS record_rows_context ON record_rows(context_id)",
)
#: SQLite's page cache (KiB) during a bulk load: its rows are appended (no record indexes
#: to keep in cache), and SQLite sorts (each commit's ``context_stats`` sums) in up to
#: the cache's size of memory besides the cache itself (docs/performance.md, s9-rss)
BULK_CACHE_KIB = 4000
#: ... and while the bulk load's record indexes are built at its end (33 MB of SQLite
#: memory with the writer's usual 16 MB cache at 1 GB, 4.4 MB with this; same CPU time)
SORT_CACHE_KIB = 2000


class _Beside:
    """A call run on a thread of its own (a child process waited for beside this thread's
    work); :meth:`join` waits for it and raises what it raised."""

    def __init__(self, call: Callable[..., None], *args: object) -> None:
        self._error: BaseException | None = None

        def run() -> None:
            try:
                call(*args)
            except BaseException as exc:  # handed to join()
                self._error = exc

        self._thread = threading.Thread(target=run, name="agentdex-beside", daemon=True)
        self._thread.start()

    def join(self, *, quiet: bool = False) -> None:
        self._thread.join()
        if self._error is not None and not quiet:
            raise self._error


def _run_each(calls: list[Callable[[], None]]) -> None:
    for call in calls:
        call()


def upsert_titles(db: sqlite3.Connection, agent: str, titles: dict[str, str]) -> None:
    """Set conversations' titles (session id -> title) in the index's ``titles`` table."""
    if titles:
        db.executemany(
            "INSERT INTO titles (agent, session_id, title) VALUES (?, ?, ?)"
            " ON CONFLICT(agent, session_id) DO UPDATE SET title = excluded.title",
            [(agent, sid, title) for sid, title in titles.items()],
        )


class IndexWriter(ConversationEdits, RecordDeletes, PostingsTail):
    """Writes one generation; the caller holds the writer lock.

    ``before_commit`` hooks run inside each batch's SQLite transaction, just
    before it commits (after the batch's blocks are written): what another
    store must make durable before the index may point past it goes there.
    The index knows nothing of who registers them (:mod:`agentdex.ingest.archiving`).
    """

    def __init__(
        self, gen: Path, *, postings_threads: int = INDEXING_THREADS, keep_text_end: int = 0
    ) -> None:
        """``keep_text_end``: bytes of ``text.blocks`` another store points at (kept even
        when this generation's committed blocks end before them)."""
        self.gen = gen
        self.db = open_writer_db(gen)
        self.block_file = BlockFile(gen, write=True)
        self.blocks = BlockWriter(self.db, self.block_file, keep_end=keep_text_end)
        #: model calls' token usage (:mod:`agentdex.index.usage`)
        self.usage = UsageTable(self.db, self.blocks.contexts)
        self._postings: PostingsWriter | None = None
        self._postings_threads = postings_threads
        #: postings deletes made before the tantivy writer was opened (applied first)
        self._queued_deletes: list[tuple[int, int | None]] = []
        self.files = FileRows(self.db)
        self._bulk = False
        #: the page cache setting a bulk load replaced (restored at its end)
        self._cache_size: int | None = None
        for statement in RECORD_INDEXES:  # a bulk load killed before its end left none
            self.db.execute(statement)
        self.dead_bytes = 0
        self.pending = 0
        self.last_commit = time.monotonic()
        #: lower-cased texts added since the last commit, for the vocabulary delta;
        #: None once they exceed VOCAB_DELTA_BYTES (the term list is rebuilt instead)
        self._new_texts: list[str] | None = []
        self._new_text_bytes = 0
        self.vocab_stale = False
        #: while set, a stale term list is rewritten whole at a commit at most this often
        #: (a first build that readers see as it commits: :mod:`agentdex.ingest.firstbuild`)
        self.terms_every: float | None = None
        self._terms_at = float("-inf")
        #: ``time.time()`` when the last whole term list was started (readers' asks after it
        #: count: :func:`agentdex.index.postings.want_terms`)
        self._terms_wall = float("-inf")
        #: every non-ASCII character of the indexed text (the term list is read by first char)
        row = self.db.execute("SELECT value FROM meta WHERE key = 'text_chars'").fetchone()
        self.text_chars: set[str] = set(row[0]) if row and row[0] else set()
        self._chars_grew = False
        #: run in each commit's transaction just before it commits (the class docstring)
        self.before_commit: list[Callable[[IndexWriter], None]] = []
        #: run after each commit, the batch's rows committed (the module docstring)
        self.after_commit: list[Callable[[IndexWriter], None]] = []
        #: the record id :meth:`add_many` gave the first of its records last time (another
        #: store makes its rows from them: the archive)
        self.added_from = 0
        #: run once by :meth:`finish` after its last commit, in order, on a thread of their
        #: own while the merge child merges (when there is one): end-of-build work that needs
        #: neither the postings nor this writer's connection
        self.while_merging: list[Callable[[], None]] = []
        #: contexts whose records were deleted, or added, since the writer opened
        self.touched_contexts: set[int] = set()
        self.added_contexts: set[int] = set()
        #: ``context_stats`` bookkeeping (the added records' sums are ``blocks.totals``):
        #: these contexts lost records (or moved to the archive) since the last commit
        self._stats_recount: set[int] = set()
        #: what :meth:`finish`'s merge into one segment did (None: no merge was started)
        self.merged: dict[str, Any] | None = None
        #: the postings writer re-added a merge child's records (:func:`merging.readd_left`)
        self._readding = False
        #: the ``postings_rid`` of a postings commit running on its thread (:meth:`commit`)
        self._committing: int | None = None
        self.db.execute("BEGIN IMMEDIATE")
        #: whether records added now go to the postings: true when the postings hold every
        #: record (no tail); a small refresh leaves new records as the tail instead (readers
        #: verify the tail directly) and :meth:`catch_up` indexes it later in one go
        self.in_postings = self.tail_size() == 0

    @property
    def postings(self) -> PostingsWriter:
        """The tantivy writer, opened on first use (it starts threads: fork workers before)."""
        if self._postings is None:
            self._postings = PostingsWriter(self.gen / "postings", threads=self._postings_threads)
            # every journaled delete (this writer's queued ones, and any a killed writer
            # left): the journal is cleared once the postings commit, so none may be skipped
            journal = self.db.execute("SELECT file_id, from_rid FROM postings_deletes ORDER BY id")
            for file_id, from_rid in journal.fetchall():
                self._postings.delete_file(file_id, from_rid)
            self._queued_deletes.clear()
            # a merge child that did not finish left a segment that must go (index/merging)
            self._readding = merging_mod.readd_left(self._postings, self.db, self.block_file)
        return self._postings

    @property
    def threads_started(self) -> bool:
        """Whether this process now runs helper threads (forking is no longer safe)."""
        return self._postings is not None or self.blocks.threads_started

    def start_bulk_load(self) -> None:
        """Before a big first build: drop the record indexes, rebuilt once in :meth:`finish`,
        and write the term list once at the end.

        Inserting 300k rows into two B-tree indexes one by one cost more than
        sorting them once at the end. Only into an empty generation: updates
        need the file index.
        """
        if self.db.execute("SELECT 1 FROM record_rows LIMIT 1").fetchone() is None:
            self.db.execute("DROP INDEX IF EXISTS record_rows_file")
            self.db.execute("DROP INDEX IF EXISTS record_rows_context")
            self._bulk = True
            self._cache_size = int(self.db.execute("PRAGMA cache_size").fetchone()[0])
            self.db.execute(f"PRAGMA cache_size=-{BULK_CACHE_KIB}")
            # the whole term list is written from tantivy's dictionary at the end: no
            # Python tokenizing of the text on the way for a delta that would be replaced
            self._new_texts = None
            self.vocab_stale = True

    # -- meta ---------------------------------------------------------------------------
    def meta_int(self, key: str, default: int = 0) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row and row[0] is not None else default

    def set_meta(self, key: str, value: object) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _bump_meta(self, key: str, amount: int) -> None:
        if amount:
            self.db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = CAST(value AS INTEGER) + excluded.value",
                (key, amount),
            )

    def coverage(self) -> BuildCoverage | None:
        """What this generation covers while its first build runs (None: complete)."""
        return coverage.read(self.db)

    def set_coverage(self, value: BuildCoverage | None) -> None:
        """Record the first build's coverage in the open batch (None: it is complete)."""
        coverage.write(self.db, value)

    # -- records ------------------------------------------------------------------------
    def add(self, prepared: Prepared, file_id: int) -> tuple[int, int]:
        """Add one record; returns where its text is stored: (block id, position).
        (:meth:`add_many` of one: a refresh in this process, a record re-imported.)"""
        return self.add_many(Columns.from_rows((prepared,)), file_id)[0]

    def add_many(self, items: Columns, file_id: int) -> list[tuple[int, int]]:
        """:meth:`add` for each of ``items`` (a file's records as columns: a parse worker's
        wire, :meth:`BlockWriter.add_many`); returns where each one's text is stored.

        The records of one file in two loops (their rows and blocks, then their postings)
        over the columns each needs: a chain of calls and attribute reads a record was most
        of the writer's main thread in a cold build."""
        first, contexts, refs = self.blocks.add_many(items, file_id)
        self.added_from = first
        self.added_contexts.update(contexts)
        text_chars = self.text_chars
        for chars in items.chars.values():
            if not text_chars.issuperset(chars):
                text_chars.update(chars)
                self._chars_grew = True
        if not self.in_postings:
            return refs  # the tail: verified by readers until catch_up() indexes it
        self.postings.add_many(first, file_id, contexts, items)
        if self._new_texts is not None:
            self._new_texts.extend(items.postings)
            self._new_text_bytes += sum(map(len, items.lower_bytes()))
            if self._new_text_bytes > VOCAB_DELTA_BYTES:
                self._new_texts = None
                self.vocab_stale = True
        return refs

    def block_rows(self, block_ids: list[int]) -> list[tuple[object, ...]]:
        """``(id, offset, lower_size, original_size, count, lower_starts, original_starts)``
        of these text blocks, written and fsynced first (another store may point at them
        and commit before this writer does: :mod:`agentdex.archive.shared`)."""
        self.blocks.flush()
        self.block_file.sync()
        found: list[tuple[object, ...]] = []
        for start in range(0, len(block_ids), 900):
            part = block_ids[start : start + 900]
            found += self.db.execute(
                "SELECT id, offset, lower_size, original_size, count, lower_starts,"
                f" original_starts FROM blocks WHERE id IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
        return found

    def add_usage(self, file_id: int, usage: list[Usage], *, resumed: bool) -> int:
        """Add the model calls' usage one read of a file found; ``resumed``: the read went on
        from a resume point, so this file's earlier rows of the same calls are replaced."""
        return self.usage.add(file_id, usage, replacing=resumed)

    def restore_usage(self, file_id: int, rows: list[tuple[object, ...]]) -> int:
        """Add calls the archive kept (:meth:`UsageTable.add_rows`) to a file row (an archived
        one); returns how many."""
        return self.usage.add_rows(file_id, rows)

    def note_read_failure(self, path: str, failure: str | None) -> None:
        """Remember why the last read of ``path`` failed, or forget it once a read succeeds."""
        key = READ_ERROR_KEY + path
        if failure is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            value = orjson.dumps({"message": failure, "at": time.time()}).decode()
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def flush(self) -> None:
        """Write this batch's open block, so its records read back like committed ones."""
        self.blocks.flush()

    @property
    def path(self) -> str:
        """The file of this generation's SQLite database (another store may ATTACH it to
        read committed rows)."""
        return str(self.db.execute("PRAGMA database_list").fetchone()[2])

    @property
    def next_record(self) -> int:
        """The id the next record added gets (every record below it is written)."""
        return self.blocks.next_record

    def stored_records(
        self, where: str, params: tuple[Any, ...] = ()
    ) -> Iterator[tuple[int, Record, str]]:
        """``(id, record, file path)`` of the records matching ``where`` (over ``records r``
        joined with ``files f``), in id order, with their original text."""
        return stored.records(self.db, self.block_file, where, params)

    # -- batches --------------------------------------------------------------------------
    def commit(self, *, beside: bool = False) -> None:
        """Commit the batch: SQLite, then the postings, then the markers (module docstring).

        ``beside`` (a bulk load's periodic commit): when no term list is due and nothing
        else waits for the postings' markers, tantivy's commit (writing the segment its
        heap holds: 8.9 s of a 1 GB cold build's main thread) runs on a thread of its own
        while this one goes on with the next batch (:meth:`PostingsWriter.start_commit`);
        its markers (step 3) are then written in the next batch's transaction, once it is
        done (:meth:`_settle_postings`). Until that commits, ``postings_rid`` is one batch
        behind: readers verify those records directly, and a writer killed meanwhile
        leaves them to :meth:`catch_up`, as for a kill between steps 1 and 3."""
        self._commit(beside=beside)

    def _commit(self, committed: Callable[[], None] | None = None, *, beside: bool = False) -> None:
        """:meth:`commit`; ``committed`` is called once the batch's SQLite transaction
        committed (step 1), before the postings commit, and then the ``after_commit`` hooks
        are not run here: ``committed`` runs them (:meth:`finish`)."""
        self._settle_postings()
        self.blocks.flush()
        self._update_context_stats()
        self.usage.settle()
        for hook in self.before_commit:
            hook(self)
        if self._chars_grew:
            self.set_meta("text_chars", "".join(sorted(self.text_chars)))
            self._chars_grew = False
        self._bump_meta("text_bytes", self.blocks.text_bytes)
        self._bump_meta("dead_bytes", self.dead_bytes)
        self.blocks.text_bytes = 0
        self.dead_bytes = 0
        self.db.execute("COMMIT")
        if committed is not None:
            committed()
        applied = self._postings is not None or bool(self._queued_deletes)
        next_rid = self.blocks.next_record
        if applied and beside and self._commit_beside():
            # step 2 on its thread; step 3 goes into the next batch's transaction
            self.postings.start_commit()
            self._committing = next_rid
        else:
            self._postings_steps(applied, next_rid)
        self.db.execute("BEGIN IMMEDIATE")
        self.pending = 0
        self.last_commit = time.monotonic()
        if committed is None:
            for after in self.after_commit:
                after(self)

    def _postings_steps(self, applied: bool, next_rid: int) -> None:
        """Steps 2 and 3 of a commit: the postings (when ``applied``: records or deletes
        went to them), then the markers in a transaction of their own."""
        if applied:
            self.postings.commit()
            release_free_memory()
        self.db.execute("BEGIN IMMEDIATE")
        if applied:
            self.db.execute("DELETE FROM postings_deletes")
            if self._readding:
                self.db.execute("DELETE FROM meta WHERE key = ?", (merging_mod.READDED,))
                self._readding = False
        if self.in_postings:
            self.set_meta("postings_rid", next_rid)
            if self._new_texts is not None and not self.vocab_stale:
                self._append_vocabulary(self._new_texts)
                self.set_meta("vocab_rid", next_rid)
            elif self.vocab_stale and self._terms_due():
                # a generation read while it is built: without a term list readers would
                # verify every record past vocab_rid on each query (read by a child process:
                # the term dictionaries it maps are not this process's memory)
                self._terms_wall = time.time()
                write_term_list(self.gen, self.text_chars)
                self.set_meta("vocab_rid", next_rid)
                self._terms_at = time.monotonic()
        self._new_texts = None if self.vocab_stale else []
        self._new_text_bytes = 0
        self.db.execute("COMMIT")

    def _commit_beside(self) -> bool:
        """May this commit's postings be committed on a thread (``commit(beside=True)``)?
        Only a bulk load's, with nothing for step 3 to do but its markers: no term list
        due (it reads the committed postings), no deletes journaled, no re-added records."""
        return (
            self._bulk
            and self.in_postings
            and self.vocab_stale
            and not self._readding
            and not self._queued_deletes
            and not self._terms_due()
            and self.db.execute("SELECT 1 FROM postings_deletes LIMIT 1").fetchone() is None
        )

    def _settle_postings(self) -> None:
        """Wait for a postings commit running on its thread; write its markers (step 3) in
        the open transaction: every record below them is in tantivy now."""
        committed, self._committing = self._committing, None
        if committed is not None:
            self.postings.settle()
            self.set_meta("postings_rid", committed)

    def _update_context_stats(self) -> None:
        """Bring ``context_stats`` level with the sealed records, in the open transaction."""
        self._stats_recount |= self.blocks.totals.merge(self.db)
        if self._stats_recount:
            context_stats.recount(self.db, self._stats_recount)
            self._stats_recount.clear()

    def _terms_due(self) -> bool:
        """Rewrite the whole term list at this commit? At the first one, then at most every
        ``terms_every`` seconds and only when a reader asked since the last (each rewrite
        reads every term dictionary: a 1 GB first build nobody reads spent ~15 s on 8-9)."""
        every = self.terms_every
        if every is None or time.monotonic() - self._terms_at < every:
            return False
        return self._terms_wall == float("-inf") or postings_mod.terms_wanted_since(
            self.gen, self._terms_wall
        )

    def commit_due(self, commit_bytes: float, commit_seconds: float) -> bool:
        """Are ``commit_bytes`` of input pending, or ``commit_seconds`` past since the last
        commit? (A caller may feed its parse workers more before the commit holds it.)"""
        return self.pending >= commit_bytes or time.monotonic() - self.last_commit > commit_seconds

    def maybe_commit(
        self, commit_bytes: float, commit_seconds: float, *, beside: bool = False
    ) -> bool:
        """Commit when :meth:`commit_due`; say whether it committed."""
        if self.commit_due(commit_bytes, commit_seconds):
            self.commit(beside=beside)
            return True
        return False

    def end_bulk_load(self) -> None:
        """Build the record indexes a bulk load dropped (before anything queries by them)."""
        if self._bulk:
            self.db.execute(f"PRAGMA cache_size=-{SORT_CACHE_KIB}")
            try:
                for statement in RECORD_INDEXES:
                    self.db.execute(statement)
            finally:
                if self._cache_size is not None:
                    self.db.execute(f"PRAGMA cache_size={self._cache_size}")
            self._bulk = False

    def finish(self, *, big: bool, merge: bool = False) -> None:
        """Final commit; rebuild the term list if needed; let merges finish after big builds.

        ``merge`` (a big build of a new generation): the postings are then merged into one
        tantivy segment by a child process (:mod:`.merging`); what it did is in
        :attr:`merged`. After the last commit four things run side by side: the
        :attr:`while_merging` hooks, on a thread of their own started first, as soon as the
        last commit's SQLite rows are committed (the archive's entries of a first build: its
        own database, read from this one's committed rows, beside the last postings commit
        and tantivy's last merges too; that commit's ``after_commit`` hooks run there first);
        the merge child; the term list's child
        (:func:`write_term_list`, waited for on another thread); and, on this thread, the
        record indexes a bulk load dropped. None of them writes what another
        reads: the children read and rewrite the postings, the hooks write another store,
        this thread this writer's open transaction (the term list is installed as a file,
        its ``vocab_rid`` committed here once its child is done). One after another they
        were ~16 s of a 1 GB build's tail on one busy core (docs/performance.md, s15-tail)."""
        # the postings' last indexing buffers are written and freed first: SQLite's sort of
        # every record row for a bulk load's indexes then no longer runs beside them (the
        # cold build's peak RSS fell there: docs/performance.md, s5-21a); no term list in
        # this commit: a stale one is written whole below
        beside: list[_Beside] = []
        merging = None
        every, self.terms_every = self.terms_every, None
        try:
            hooks, self.while_merging = self.while_merging, []
            try:
                if hooks:
                    # they read this writer's committed rows only: started once the last
                    # batch's rows are (step 1), beside its postings commit and tantivy's
                    # last merges too, that commit's after_commit hooks first
                    afters = [partial(after, self) for after in self.after_commit]
                    self._commit(lambda: beside.append(_Beside(_run_each, [*afters, *hooks])))
                else:
                    self.commit()
            finally:
                self.terms_every = every
            if not (self.gen / "postings" / "meta.json").is_file():
                postings_mod.open_index(self.gen / "postings", create=True)
            delta = self.gen / postings_mod.VOCAB_DELTA
            full = self.gen / postings_mod.VOCAB_FILE
            delta_size = delta.stat().st_size if delta.exists() else 0
            full_size = full.stat().st_size if full.exists() else 0
            oversized = delta_size > VOCAB_DELTA_MAX or (
                full_size and delta_size > VOCAB_DELTA_SHARE * full_size
            )
            if self._postings is not None and (big or self.vocab_stale or oversized):
                self._postings.close(wait_merges=big)
                self._postings = None
            nice = TAIL_CHILD_NICE if hooks else 0
            if merge and big and self.tail_size() == 0:
                merging = merging_mod.start(self.gen, self.db, self.block_file, nice=nice)
            listing = None
            if self.vocab_stale or oversized:
                # term counts read while the merge runs are estimates, as with any delete
                listing = _Beside(
                    partial(write_term_list, nice=nice), self.gen, "".join(sorted(self.text_chars))
                )
                beside.append(listing)
            written = self._bulk
            self.end_bulk_load()
            while beside:  # the first failure is raised; the others are waited for below
                beside[0].join()
                beside.pop(0)
            if listing is not None:
                self.set_meta("vocab_rid", self.blocks.next_record)
                self.vocab_stale = False
                written = True
            if written:  # the record indexes, the term list's record id
                self.db.execute("COMMIT")
                self.db.execute("BEGIN IMMEDIATE")
        finally:
            for waiting in beside:  # after a failure: no thread (nor child) outlives finish
                waiting.join(quiet=True)
            if merging is not None:
                self.merged = merging_mod.wait(merging, self.db)

    def close(self, ok: bool) -> None:
        try:
            if ok:
                self._settle_postings()
                self._update_context_stats()
                self.usage.settle()
                self.db.execute("COMMIT")
            else:
                self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        finally:
            self.blocks.close()
            self.block_file.close()
            if self._postings is not None:
                if not ok:
                    self._postings.rollback()
                self._postings.close(wait_merges=False)
                self._postings = None
        self.db.close()

    # -- files -----------------------------------------------------------------------------------
    def new_file(self, path: str, agent: str, store: str, parser: str | None) -> int:
        file_id = self.db.execute(
            "INSERT INTO files (path, agent, store, parser, size, mtime) VALUES (?,?,?,?,?,?)",
            (path, agent, store, parser, -1, -1.0),
        ).lastrowid
        assert file_id is not None
        return file_id

    def update_file(self, file_id: int, values: dict[str, Any]) -> None:
        names = ", ".join(f"{name} = ?" for name in values)
        self.db.execute(f"UPDATE files SET {names} WHERE id = ?", (*values.values(), file_id))

    def set_titles(self, agent: str, titles: dict[str, str]) -> None:
        upsert_titles(self.db, agent, titles)

    def file_record_count(self, file_id: int) -> int:
        """How many records the file has, this batch's included (the open block is sealed)."""
        self.blocks.flush()
        row = self.db.execute("SELECT count(*) FROM record_rows WHERE file_id = ?", (file_id,))
        return int(row.fetchone()[0])

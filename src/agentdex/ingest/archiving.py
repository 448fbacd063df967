"""The archive's part in one refresh, behind one object the refresh calls at fixed points.

:class:`IndexingArchive` is opened by the refresh after its index writer
(and under the same writer lock):

* :meth:`start`: apply tombstones the generation has not seen, copy into the
  archive whatever the index holds that it lacks (:func:`sync.backfill`),
  commit;
* per file: :meth:`begin_source`, then :meth:`offer` for each record the
  index takes (:meth:`skips` says which records are forgotten); a vanished
  file goes through :meth:`keep_vanished`;
* :meth:`finish`, before the index's final commit: re-import what the
  sources no longer hold (:func:`sync.reconcile`).

The order of the two stores' commits (:meth:`_commit_first`): the archive's
batch commits inside the index's open transaction, just before the index's,
so the archive never loses what the index holds. In a first build into an
empty archive a worker's file is kept as a span (its records' keys, sizes and
kept lines, :mod:`agentdex.archive.spans`) and its entries are made from the
index's committed rows at its end (:meth:`_end_first_build`); spans a killed
writer left are derived (or, past the index's ``archived_rid``, dropped) when
the next refresh starts, before anything else.

With ``archive = false`` in the config nothing is archived, kept or
re-imported; tombstones still apply, so a forgotten conversation stays
forgotten either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentdex.archive.store import ArchiveStore, archive_path
from agentdex.ingest import sync, usage_sync

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentdex.archive.writer import ArchiveWriter
    from agentdex.discovery import Source
    from agentdex.index.columns import Columns
    from agentdex.index.files import FileRow
    from agentdex.index.segments import Prepared
    from agentdex.index.writer import IndexWriter
    from agentdex.records import Usage


def archive_enabled() -> bool:
    """The config's ``archive`` switch (on unless ``archive = false``)."""
    from agentdex.config import load_config

    return load_config().archive


class IndexingArchive:
    """Archive work of one refresh over one index generation."""

    def __init__(
        self, root: Path, index: IndexWriter, *, enabled: bool, redact: bool = True
    ) -> None:
        self.index = index
        self.enabled = enabled
        self.redact = redact
        self.store: ArchiveStore | None = None
        if enabled or (archive_path(root) / "archive.db").is_file():
            self.store = ArchiveStore(root, write=True)
        self.forgotten = sync.Forgotten(self.store.tombstones() if self.store else ())
        self.writer: ArchiveWriter | None = None
        self.restored = 0
        #: usage rows of calls the index had lost, added back from the archive
        self.restored_usage = 0
        self.forgotten_records = 0

    @property
    def archived(self) -> int:
        return self.writer.added if self.writer is not None else 0

    def start(self) -> None:
        """Tombstones first (nothing forgotten is backfilled), then the backfill; commit."""
        changed = False
        if self.store is not None:
            from agentdex.archive.removal import purge_forgotten

            purge_forgotten(self.store)  # a forget killed after its tombstone: finish it
            self._redact_once()
            self.forgotten_records = sync.apply_tombstones(self.index, self.store)
            changed = self.forgotten_records > 0
        if self.enabled and self.store is not None:
            from agentdex.archive.writer import ArchiveWriter

            self.writer = ArchiveWriter(
                self.store,
                redact=self.redact,
                gen=self.index.gen,
                block_rows=self.index.block_rows,
                index_path=self.index.path,
            )
            self.writer.derive()  # spans a killed writer left (module docstring)
            self.index.before_commit.append(self._commit_first)
            self.index.after_commit.append(self._derive)
        if self.writer is not None:
            changed = sync.backfill(self.index, self.writer) > 0 or changed
            assert self.store is not None
            changed = usage_sync.copy_to_archive(self.index, self.writer, self.store) > 0 or changed
            changed = usage_sync.nothing_to_restore(self.index, self.store) or changed
            if self.index.next_record == 1 and not self.store_has_entries():
                # a new generation and an empty archive (a new machine): every entry the
                # archive will hold is offered by this generation, so nothing can be
                # missing from it at the end (see finish), unless it loses records
                self.index.set_meta("archive_fresh", 1)
                changed = True
        if changed:
            self.index.commit()
        if self.writer is not None:
            self.writer.stop_threads()  # parse workers may be forked next

    def _commit_first(self, index: IndexWriter) -> None:
        """The commit order of the two stores, stated once: the archive's batch is written,
        fsynced and committed inside the index's open transaction, just before the index
        commits, and how far it got (``archived_rid``: every record below it was offered
        to the archive) commits with the index's batch. So the archive is never behind
        the index, and a kill between the two commits only leaves the archive ahead."""
        assert self.writer is not None
        self.writer.commit()
        index.set_meta("archived_rid", index.next_record)
        if index.touched_contexts:  # records left: what the archive holds may be missing
            index.set_meta("archive_fresh", 0)

    def _derive(self, index: IndexWriter) -> None:
        """The entries of the spans the index just committed (:mod:`agentdex.archive.spans`);
        a first build into an empty archive makes them at its end instead
        (:meth:`_end_first_build`): one statement beside the merge child, where making them
        at each commit held the writer (and the parse workers behind it) at every commit."""
        assert self.writer is not None
        if not self.writer.defers():
            self.writer.derive()

    def _end_first_build(self) -> None:
        assert self.writer is not None
        self.writer.derive()
        self.writer.end_bulk_load()

    def needs_text_move(self) -> bool:
        """Does the archive still keep its own copy of texts from before they were shared
        with the index? (One rebuild of the index moves them: :meth:`_share_text`.)"""
        return (
            self.enabled and self.store is not None and self.store.meta_int("text_shared", 1) == 0
        )

    def store_has_entries(self) -> bool:
        return self.store is not None and self.store.has_entries()

    def _redact_once(self) -> None:
        """Mask what an archive kept before redaction was on (once); with redaction off,
        note that secrets may come in again (so turning it on masks them)."""
        from agentdex.archive.redaction import is_redacted, redact_archive

        assert self.store is not None
        if self.redact and not is_redacted(self.store):
            if self.store.db.execute("SELECT 1 FROM entries LIMIT 1").fetchone():
                redact_archive(self.store)
            else:
                self.store.set_meta("redacted", 1)
        elif not self.redact and is_redacted(self.store):
            self.store.set_meta("redacted", 0)

    # -- per file -----------------------------------------------------------------------------
    def begin_source(self, source: Source) -> None:
        if self.writer is not None:
            self.writer.begin_source(str(source.path), jsonl="jsonl" in source.row.format)

    def skips(self, prepared: Prepared) -> bool:
        """Is this record in a forgotten conversation (never indexed nor archived)?"""
        return bool(self.forgotten) and self.forgotten.holds(prepared.meta[0], prepared.meta[2])

    def offer(self, prepared: Prepared, text_at: tuple[int, int] | None = None) -> None:
        """Archive a record the index took; ``text_at``: where the index stored its text
        (block id, position), which the archive points at instead of storing it again."""
        if self.writer is not None:
            self.writer.offer(prepared, text_at)

    def offer_many(self, items: Columns, refs: Sequence[tuple[int, int]]) -> None:
        """:meth:`offer` for each of ``items`` (a file's records as columns: a parse worker's
        wire) with where the index stored each one's text (``refs``)."""
        if self.writer is not None:
            self.writer.offer_many(items, refs, self.index.added_from)

    def offer_usage(self, path: str, usage: list[Usage], file_id: int) -> None:
        """Keep the model calls one read of ``path`` found (forgotten ones left out);
        ``file_id``: the index's file they were just added to."""
        if self.writer is not None and usage:
            self.writer.add_usage(path, usage, file_id)

    def titles(self, agent: str, titles: dict[str, str]) -> dict[str, str]:
        """The titles to index (forgotten ones left out), archived as well."""
        if self.forgotten:
            titles = {s: t for s, t in titles.items() if not self.forgotten.holds(agent, s)}
        if self.writer is not None:
            self.writer.set_titles(agent, titles)
        return titles

    def keep_vanished(self, old: FileRow) -> bool:
        """Keep a vanished file's records as archived ones; False: delete them as usual."""
        return self.writer is not None and self.index.keep_as_archived(old.id, old.path)

    # -- end ------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Re-import what the sources no longer hold (with the archive on)."""
        index = self.index
        if self.writer is None or self.store is None:
            index.end_bulk_load()
            if index.touched_contexts:
                index.set_meta("archive_synced", 0)  # deletes the archive did not see
                index.set_meta("archive_fresh", 0)
            return
        fresh = index.meta_int("archive_fresh", 0) == 1 and not index.touched_contexts
        if not fresh:  # a fresh build's last batch commits in IndexWriter.finish (below)
            index.commit()  # the batch's archive entries first: reconcile reads them
            index.end_bulk_load()  # the comparison queries records by conversation
        if not fresh or index.usage.removed:
            self.writer.derive()  # reconcile and restore read the entries and calls
        self.restored_usage += usage_sync.restore(index, self.store, self.forgotten)
        if fresh:
            # the archive only holds what this generation offered and never lost: nothing
            # to re-import (a first build skips comparing every conversation)
            index.set_meta("archive_synced", 1)
            self._share_text(commit=False)
            # the last batch commits in IndexWriter.finish, which starts the hook below as
            # soon as its rows are committed (beside its postings commit); nothing reads
            # entries by key or conversation any more in this refresh, nor the index's
            # records by file or conversation: the entries a first build left as spans are
            # made, and the indexes both stores dropped built, while the merge child and
            # the term list's child run (IndexWriter.finish; the archive's open batch
            # commits when it closes)
            index.while_merging.append(self._end_first_build)
            return
        self.writer.end_bulk_load()  # the comparison looks entries up by key
        if index.meta_int("archive_synced", 0) != 1:
            sessions = None
        else:
            files = index.archived_files()
            sessions = index.sessions_of_contexts(index.touched_contexts)
            if files and index.added_contexts:
                added = index.sessions_of_contexts(index.added_contexts)
                sessions |= added & index.sessions_of_files(files)
        if sessions is None or sessions:
            result = sync.reconcile(index, self.store, sessions, self.writer)
            self.restored += result.restored
        index.set_meta("archive_synced", 1)
        self._share_text()

    def _share_text(self, *, commit: bool = True) -> None:
        """One copy of the text: every record this generation holds was offered (its entry
        points at the generation's blocks now); texts still in other generations' files
        move into the archive's chunks and those files leave the archive. ``commit``: commit
        now (else with the index's next commit)."""
        assert self.writer is not None and self.store is not None
        self.writer.release_other_files()
        if self.store.meta_int("text_shared", 1) != 1:
            self.store.set_meta("text_shared", 1)
        if commit:
            self.index.commit()

    def close(self, ok: bool) -> None:
        try:
            if self.writer is not None:
                self.writer.close(ok)
                if ok and self.store is not None and self.writer.vacated_chunks:
                    # texts that moved to the index's blocks leave the chunks
                    self.store.repack_chunks(self.writer.vacated_chunks)
        finally:
            if self.store is not None:
                self.store.close()

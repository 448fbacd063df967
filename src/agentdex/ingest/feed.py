"""One changed file, planned and fed to both stores: the per-file half of a refresh.

Per discovered file: unchanged (same size and mtime, and the same ``-wal``
for SQLite stores) costs nothing beyond discovery's stat. An append-only
JSONL file (resumable parser, same inode, not smaller, same first bytes)
resumes from its stored cursor after deleting its records at offsets at or
past the resume point. Anything else is reparsed whole. A file whose read
failed is retried next time.

Every record passes :func:`agentdex.ingest.pipeline.prepare_record` (in a
parse worker, or here) before either store sees it, and then goes to the
index and the archive together (:meth:`Refresher._add`).
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agentdex.discovery import Source
from agentdex.index.columns import Columns
from agentdex.index.files import FileRow, FileRows, head_hash
from agentdex.index.segments import Prepared
from agentdex.index.writer import IndexWriter
from agentdex.ingest.firstbuild import FirstBuild
from agentdex.ingest.pipeline import (
    ArchiveParts,
    Stage,
    mask_secrets,
    mask_title,
    prepare_record,
    prepare_source,
    stages,
)
from agentdex.ingest.stats import RefreshStats
from agentdex.parsers.base import ParseCursor
from agentdex.readers import Diagnostic, Diagnostics, is_read_failure
from agentdex.records import Usage
from agentdex.tuning import env_float, env_int

HEAD_BYTES = 4096
#: Commit after this much parsed input (bytes) or this many seconds.
COMMIT_BYTES = env_int("AGENTDEX_INDEX_COMMIT_BYTES", 64 * 1024 * 1024)
COMMIT_SECONDS = 10.0
#: A generation's first build commits less often as it goes: after each of its periodic
#: commits both thresholds above grow by this factor, up to ``COMMIT_MAX_FACTOR`` times
#: them (every commit writes a tantivy segment per indexing thread, and tantivy merges
#: only ~8 of a size: a 1 GB build committing every 10 s ended with 15-16 segments, and a
#: term-set count costs per term per segment; docs/performance.md, s7-seg and s7-seg2).
#: Incremental refreshes keep the base cadence.
COMMIT_GROWTH = env_float("AGENTDEX_INDEX_COMMIT_GROWTH", 2.0)
COMMIT_MAX_FACTOR = 16.0


def _wal_sig(source: Source) -> str:
    if "sqlite" not in source.row.format and source.path.suffix not in (".db", ".vscdb"):
        return ""
    try:
        st = os.stat(f"{source.path}-wal")
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


@dataclass(slots=True)
class Plan:
    source: Source
    old: FileRow | None
    wal_sig: str
    st: os.stat_result
    head_len: int
    head_hash: str
    resumable: bool
    cursor: ParseCursor
    resume_from: int | None


#: what a parse worker sends back: the file's prepared records
#: (:class:`agentdex.index.columns.Columns`), the cursor after parsing, diagnostics (kept
#: items and total count) and a parser error
Parsed = tuple[Columns, ParseCursor, list[Diagnostic], int, str | None]


class Refresher:
    """Plans each changed file and feeds its records to the :class:`IndexWriter`."""

    def __init__(
        self,
        gen: Path,
        stats: RefreshStats,
        diagnostics: Diagnostics,
        *,
        archive: bool,
        redact: bool = True,
    ) -> None:
        from agentdex.archive.shared import referenced_end
        from agentdex.ingest.archiving import IndexingArchive

        self.stats = stats
        self.diagnostics = diagnostics
        #: set while the generation's first build runs (:mod:`agentdex.ingest.firstbuild`)
        self.first: FirstBuild | None = None
        #: how many times the base commit thresholds the next periodic commit waits for
        self.commit_factor = 1.0
        #: this refresh started the generation (readers see it as it commits)
        self.first_build = False
        #: ``[privacy] redact``: secrets masked in texts, titles and the archive's raw lines
        self.redact = redact
        self.stages = stages(redact_secrets=redact)
        # blocks the archive points at survive a writer killed between the two commits
        self.index = IndexWriter(gen, keep_text_end=referenced_end(gen.parent, gen))
        #: files whose usage this refresh read (the usage backfill skips them)
        self.usage_read: set[int] = set()
        try:
            self.archive = IndexingArchive(gen.parent, self.index, enabled=archive, redact=redact)
        except BaseException:
            self.index.close(False)
            raise

    @property
    def files(self) -> FileRows:
        return self.index.files

    def remove_file(self, old: FileRow) -> None:
        if not self.archive.keep_vanished(old):
            self.stats.records_removed += self.index.remove_file(old.id, old.path)
        self.stats.files_removed += 1

    def _add(self, prepared: Prepared, file_id: int) -> bool:
        """Index (and archive) one record unless its conversation is forgotten."""
        if self.archive.skips(prepared):
            return False
        self.archive.offer(prepared, self.index.add(prepared, file_id))
        return True

    def add_usage(self, file_id: int, usage: list[Usage], *, resumed: bool, path: str) -> None:
        """Index (and archive) the model calls one read of the file at ``path`` found
        (forgotten conversations' left out)."""
        forgotten = self.archive.forgotten
        if forgotten:
            usage = [u for u in usage if not forgotten.holds(u.agent, u.session_id)]
        self.stats.usage_added += self.index.add_usage(file_id, usage, resumed=resumed)
        self.archive.offer_usage(path, usage, file_id)
        self.usage_read.add(file_id)

    def close(self, ok: bool) -> None:
        """The archive first: its batch commits before the index's (never behind it)."""
        try:
            self.archive.close(ok)
        finally:
            self.index.close(ok)

    def plan(self, source: Source) -> Plan | None:
        """Decide how to (re)index ``source``: None when there is nothing to parse."""
        from agentdex.parsers import get_parser

        path = str(source.path)
        old = self.files.get(path)
        wal_sig = _wal_sig(source)
        try:
            st = os.stat(source.path)
            head_len = min(st.st_size, HEAD_BYTES)
            head = head_hash(source.path, head_len)
        except OSError:
            if old is not None:
                self.remove_file(old)
            return None
        assert source.row.parser is not None
        try:
            spec = get_parser(source.row.parser)
        except (KeyError, ImportError) as exc:
            self.diagnostics.add(source.path, "", f"no parser {source.row.parser}: {exc}")
            self.stats.files_failed += 1
            return None
        cursor = ParseCursor()
        resume_from: int | None = None
        if (
            old is not None
            and spec.resumable
            and old.parser == source.row.parser
            and old.inode == st.st_ino
            and st.st_size >= old.size
            and old.head_len <= st.st_size
            and head_hash(source.path, old.head_len) == old.head_hash
        ):
            import orjson

            resume_from = old.resume_offset
            cursor = ParseCursor(
                offset=old.resume_offset, line=old.resume_line, state=orjson.loads(old.state)
            )
        return Plan(source, old, wal_sig, st, head_len, head, spec.resumable, cursor, resume_from)

    def index_source(self, source: Source) -> None:
        """Parse and index one changed file in this process."""
        from agentdex.parsers import run

        plan = self.plan(source)
        if plan is None:
            return
        file_id = self._begin(plan)
        added = 0
        before = self.diagnostics.count
        try:
            for record in run(source, plan.cursor, self.diagnostics):
                added += self._add(prepare_record(record, self.stages), file_id)
        except Exception as exc:  # a parser bug costs this file, not the run
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG):
                raise
            self.diagnostics.add(source.path, "", f"parser error: {exc!r}")
            self.stats.files_failed += 1
        self._finish(plan, file_id, added, before)

    def index_parsed(self, plan: Plan, parsed: Parsed) -> None:
        """Index one file a parse worker has already read and prepared."""
        wire, cursor, diagnostics, count, error = parsed
        plan.cursor = cursor
        file_id = self._begin(plan)
        before = self.diagnostics.count
        for item in diagnostics:
            self.diagnostics.add(item.path, item.locator, item.message)
        self.diagnostics.count += max(0, count - len(diagnostics))
        if error is not None:
            self.diagnostics.add(plan.source.path, "", f"parser error: {error}")
            self.stats.files_failed += 1
        forgotten = self.archive.forgotten
        if forgotten:  # never indexed nor archived (IndexingArchive.skips)
            wire = Columns.from_rows(
                row
                for row in wire.rows()
                if not forgotten.holds(row[0][0], row[0][2])  # type: ignore[index]
            )
        # the file's records at once, as the worker sent them (the stores' add_many take
        # its columns: no Prepared made per record, no chain of calls a record)
        self.archive.offer_many(wire, self.index.add_many(wire, file_id))
        self._finish(plan, file_id, len(wire), before)

    def _begin(self, plan: Plan) -> int:
        """Drop what will be re-read (all, or past the resume point); the file's row id."""
        source = plan.source
        self.archive.begin_source(source)
        if plan.old is not None:
            self.stats.records_removed += self.index.delete_records(plan.old.id, plan.resume_from)
            return plan.old.id
        return self.index.new_file(str(source.path), source.agent, source.store, source.row.parser)

    def _finish(self, plan: Plan, file_id: int, added: int, before: int) -> None:
        source, cursor, resume_from = plan.source, plan.cursor, plan.resume_from
        if self.diagnostics.count > before and added == 0 and not os.path.exists(source.path):
            # vanished mid-index: forget it entirely
            self.index.remove_file(file_id, str(source.path))
            return
        path = str(source.path)
        self.add_usage(file_id, cursor.usage, resumed=resume_from is not None, path=path)
        failure = next(
            (
                d.message
                for d in self.diagnostics.items[before:]
                if d.path == path and is_read_failure(d.message)
            ),
            None,
        )
        unreadable = failure is not None  # locked, busy, I/O error: retried next run
        self.index.note_read_failure(path, failure)
        total = self.index.file_record_count(file_id) if resume_from is not None else added
        resumable = plan.resumable and not unreadable
        self.index.update_file(
            file_id,
            {
                "agent": source.agent,
                "store": source.store,
                "parser": source.row.parser,
                "size": -1 if unreadable else source.size,  # -1: retried next time
                "mtime": source.mtime,
                "inode": plan.st.st_ino,
                "head_len": plan.head_len,
                "head_hash": plan.head_hash,
                "wal_sig": plan.wal_sig,
                "resume_offset": cursor.resume_offset if resumable else 0,
                "resume_line": cursor.resume_line if resumable else 0,
                "state": cursor_state(cursor.state if plan.resumable else {}),
                "records": total,
                "indexed_at": time.time(),
            },
        )
        titles = cursor.titles
        if self.redact and titles:
            titles = {session: mask_title(title) for session, title in titles.items()}
        self.index.set_titles(source.agent, self.archive.titles(source.agent, titles))
        self.stats.records_added += added
        parsed = source.size if resume_from is None else max(0, source.size - resume_from)
        if resume_from is not None:
            self.stats.files_resumed += 1
        else:
            self.stats.files_parsed += 1
        self.index.pending += parsed
        self.stats.bytes_parsed += parsed

    def maybe_commit(self) -> None:
        """Commit when the pending input or the time since the last commit calls for it.

        A first build's thresholds grow after each periodic commit (``COMMIT_GROWTH``, to
        at most ``COMMIT_MAX_FACTOR`` x 64 MB / 10 s), so a long build leaves few tantivy
        segments. What is committed is what a search during the build answers from and
        where a killed build resumes: a kill loses at most the one interval in progress
        (at most 1 GB of parsed input or 160 s of work, re-read by the next refresh).
        The first build's early commit for the first answer comes first, as before.
        A bulk load's periodic commits write tantivy's segment on a thread of their own
        (``beside``: :meth:`IndexWriter.commit`); every other commit waits for it.
        """
        if self.first is not None and self.first.wants_early_commit():
            self.index.commit()
            return
        factor = self.commit_factor
        committed = self.index.maybe_commit(
            COMMIT_BYTES * factor, COMMIT_SECONDS * factor, beside=True
        )
        if committed and self.first is not None:
            self.commit_factor = min(factor * COMMIT_GROWTH, COMMIT_MAX_FACTOR)

    def commit_due(self) -> bool:
        """Would :meth:`maybe_commit` commit now?"""
        if self.first is not None and self.first.wants_early_commit():
            return True
        factor = self.commit_factor
        return self.index.commit_due(COMMIT_BYTES * factor, COMMIT_SECONDS * factor)

    def file_done(self, source: Source) -> None:
        """A changed file was indexed (or skipped): the first build's coverage grows."""
        if self.first is not None:
            self.first.done(source)

    def out_of_time(self) -> bool:
        """A first build past its deadline stops at this file boundary."""
        if self.first is not None and self.first.out_of_time():
            self.stats.incomplete = True
        return self.stats.incomplete


def parse_in_worker(source: Source, cursor: ParseCursor, steps: tuple[Stage, ...]) -> Parsed:
    """Runs in a parse worker: the parser plus the per-record work that needs no index
    (``steps``: the refresh's stages, secrets masked among them)."""
    diagnostics = Diagnostics()
    prepared = Columns()
    error = None
    jsonl = "jsonl" in source.row.format
    archive = ArchiveParts(str(source.path), jsonl=jsonl, redact=mask_secrets in steps)
    try:
        prepare_source(source, cursor, diagnostics, steps, archive, prepared)
    except Exception as exc:  # reported by the writer as a per-file parser error
        error = repr(exc)
    finally:
        archive.close()
    return prepared, cursor, diagnostics.items, diagnostics.count, error


def maybe_changed(refresher: Refresher, source: Source) -> bool:
    old = refresher.files.get(str(source.path))
    return not (
        old is not None
        and old.size == source.size
        and old.mtime == source.mtime
        and old.wal_sig == _wal_sig(source)
        and old.parser == source.row.parser
    )


def cursor_state(state: dict[str, Any]) -> str:
    return orjson.dumps(state, default=str).decode()

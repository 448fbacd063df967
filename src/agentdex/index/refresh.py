"""Incremental refresh: bring the index in line with the stores on disk.

Per discovered file: unchanged (same size and mtime, and the same ``-wal``
for SQLite stores) costs nothing beyond discovery's stat. An append-only
JSONL file (resumable parser, same inode, not smaller, same first bytes)
resumes from its stored cursor after deleting its records at offsets at or
past the resume point. Anything else is reparsed whole. Files that are gone
lose their records. A file whose read failed is retried next time. Work is
committed in batches at file boundaries (:mod:`agentdex.index.writer`), so
a killed refresh leaves a consistent index that the next run continues.

Big refreshes parse in forked worker processes (one per core) while this
process writes: at most ``IN_FLIGHT_BYTES`` of input is parsed ahead of the
writer, so memory stays bounded at any corpus size.

The archive (:mod:`agentdex.archive.indexing`) takes part at fixed points:
every record indexed is offered to it, a vanished file's records are kept
as archived ones instead of deleted, records of forgotten conversations are
skipped, and before the final commit what the sources no longer hold is
re-imported from it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdex.catalogue import Coverage, StoreRow
from agentdex.discovery import Root, Source, observe
from agentdex.errors import CorruptError
from agentdex.index import manifest
from agentdex.index.files import FileRow, FileRows, head_hash, is_archived
from agentdex.index.lock import LockBusy, WriterLock
from agentdex.index.memory import limit_malloc_arenas
from agentdex.index.segments import Prepared, prepare
from agentdex.index.stats import DiskFullError, RefreshStats
from agentdex.index.store import Location, OutdatedIndexError
from agentdex.index.writer import IndexWriter, cursor_state
from agentdex.parsers.base import ParseCursor
from agentdex.readers import Diagnostic, Diagnostics, is_read_failure

HEAD_BYTES = 4096
#: Commit after this much parsed input (bytes) or this many seconds.
COMMIT_BYTES = int(os.environ.get("AGENTDEX_INDEX_COMMIT_BYTES", 64 * 1024 * 1024))
COMMIT_SECONDS = 10.0
#: Rebuild when dead text exceeds this share of all text (and MIN_GARBAGE bytes).
GARBAGE_RATIO = 0.5
MIN_GARBAGE = 64 * 1024 * 1024
#: parse in worker processes only when there is this much to read
PARALLEL_MIN_BYTES = int(os.environ.get("AGENTDEX_INDEX_PARALLEL_MIN_BYTES", 32 * 1024 * 1024))
#: parsed-but-not-yet-written input kept in flight (bounds memory)
IN_FLIGHT_BYTES = 8 * 1024 * 1024
#: a refresh reading less than this leaves its records out of the postings (the tail) ...
DEFER_BYTES = 1024 * 1024
#: ... while the tail holds fewer records than this (readers verify it on every query)
TAIL_RECORDS = 2000
#: a refresh reading more than this waits for tantivy's segment merges before it ends
BIG_REFRESH_BYTES = 256 * 1024 * 1024

Progress = Callable[[int, int, int, int], None]


def _wal_sig(source: Source) -> str:
    if "sqlite" not in source.row.format and source.path.suffix not in (".db", ".vscdb"):
        return ""
    try:
        st = os.stat(f"{source.path}-wal")
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}"


def _discover(home: str | None, rows: Iterable[StoreRow] | None) -> Any:
    from agentdex import discovery

    if rows is not None:
        return discovery.discover(home, rows=rows)
    configured = getattr(discovery, "discover_configured", None)
    if configured is not None:
        return configured(home)
    return discovery.discover(home)


@dataclass(slots=True)
class _Plan:
    source: Source
    old: FileRow | None
    wal_sig: str
    st: os.stat_result
    head_len: int
    head_hash: str
    resumable: bool
    cursor: ParseCursor
    resume_from: int | None


#: what a parse worker sends back: prepared records, the cursor after parsing,
#: diagnostics (kept items and total count) and a parser error, if any
_Parsed = tuple[list[Prepared], ParseCursor, list[Diagnostic], int, str | None]


class _Refresher:
    """Plans each changed file and feeds its records to the :class:`IndexWriter`."""

    def __init__(
        self, gen: Path, stats: RefreshStats, diagnostics: Diagnostics, *, archive: bool
    ) -> None:
        from agentdex.archive.indexing import IndexingArchive

        self.stats = stats
        self.diagnostics = diagnostics
        self.index = IndexWriter(gen)
        try:
            self.archive = IndexingArchive(gen.parent, self.index, enabled=archive)
        except BaseException:
            self.index.close(False)
            raise

    @property
    def files(self) -> FileRows:
        return self.index.files

    def remove_file(self, old: FileRow) -> None:
        if not self.archive.keep_vanished(old):
            self.stats.records_removed += self.index.remove_file(old)
        self.stats.files_removed += 1

    def _add(self, prepared: Prepared, file_id: int) -> bool:
        """Index (and archive) one record unless its conversation is forgotten."""
        if self.archive.skips(prepared):
            return False
        self.index.add(prepared, file_id)
        self.archive.offer(prepared)
        return True

    def close(self, ok: bool) -> None:
        """The archive first: its batch commits before the index's (never behind it)."""
        try:
            self.archive.close(ok)
        finally:
            self.index.close(ok)

    def plan(self, source: Source) -> _Plan | None:
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
        return _Plan(source, old, wal_sig, st, head_len, head, spec.resumable, cursor, resume_from)

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
                added += self._add(prepare(record), file_id)
        except Exception as exc:  # a parser bug costs this file, not the run
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG):
                raise
            self.diagnostics.add(source.path, "", f"parser error: {exc!r}")
            self.stats.files_failed += 1
        self._finish(plan, file_id, added, before)

    def index_parsed(self, plan: _Plan, parsed: _Parsed) -> None:
        """Index one file a parse worker has already read and prepared."""
        prepared, cursor, diagnostics, count, error = parsed
        plan.cursor = cursor
        file_id = self._begin(plan)
        before = self.diagnostics.count
        for item in diagnostics:
            self.diagnostics.add(item.path, item.locator, item.message)
        self.diagnostics.count += max(0, count - len(diagnostics))
        if error is not None:
            self.diagnostics.add(plan.source.path, "", f"parser error: {error}")
            self.stats.files_failed += 1
        added = 0
        for record in prepared:
            added += self._add(record, file_id)
        self._finish(plan, file_id, added, before)

    def _begin(self, plan: _Plan) -> int:
        """Drop what will be re-read (all, or past the resume point); the file's row id."""
        source = plan.source
        self.archive.begin_source(source)
        if plan.old is not None:
            self.stats.records_removed += self.index.delete_records(plan.old.id, plan.resume_from)
            return plan.old.id
        return self.index.new_file(str(source.path), source.agent, source.store, source.row.parser)

    def _finish(self, plan: _Plan, file_id: int, added: int, before: int) -> None:
        source, cursor, resume_from = plan.source, plan.cursor, plan.resume_from
        if self.diagnostics.count > before and added == 0 and not os.path.exists(source.path):
            # vanished mid-index: forget it entirely
            self.index.delete_records(file_id, None)
            self.index.db.execute("DELETE FROM files WHERE id = ?", (file_id,))
            return
        path = str(source.path)
        failure = next(
            (
                d.message
                for d in self.diagnostics.items[before:]
                if d.path == path and is_read_failure(d.message)
            ),
            None,
        )
        unreadable = failure is not None  # locked, busy, I/O error: retried next run
        _note_read_failure(self.index.db, path, failure)
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
        self.index.set_titles(source.agent, self.archive.titles(source.agent, cursor.titles))
        self.stats.records_added += added
        parsed = source.size if resume_from is None else max(0, source.size - resume_from)
        if resume_from is not None:
            self.stats.files_resumed += 1
        else:
            self.stats.files_parsed += 1
        self.index.pending += parsed
        self.stats.bytes_parsed += parsed

    def maybe_commit(self) -> None:
        self.index.maybe_commit(COMMIT_BYTES, COMMIT_SECONDS)


def _parse_in_worker(source: Source, cursor: ParseCursor) -> _Parsed:
    """Runs in a parse worker: the parser plus the per-record work that needs no index."""
    from agentdex.parsers import run

    diagnostics = Diagnostics()
    prepared: list[Prepared] = []
    error = None
    try:
        for record in run(source, cursor, diagnostics):
            prepared.append(prepare(record))
    except Exception as exc:  # reported by the writer as a per-file parser error
        error = repr(exc)
    return prepared, cursor, diagnostics.items, diagnostics.count, error


def _indexable(source: Source) -> bool:
    row = source.row
    return row.parser is not None and row.coverage not in (Coverage.LISTED, Coverage.PRIVATE)


def refresh(
    root: str | os.PathLike[str] | None = None,
    *,
    home: str | None = None,
    full: bool = False,
    rows: Iterable[StoreRow] | None = None,
    wait: bool | float = True,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
    known: manifest.Changes | None = None,
) -> RefreshStats:
    """Refresh (or with ``full`` rebuild) the index; returns what was done.

    ``wait=False`` returns at once with ``skipped_busy`` when another process
    is writing; a number waits that many seconds. ``known``: the changed
    store files the caller's manifest check found (re-checked under the lock).
    """
    from agentdex.index.store import index_root

    started = time.monotonic()
    stats = RefreshStats()
    location = Location(index_root(root))
    location.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = WriterLock(location.lock_path)
    timeout = None if wait is True else (0.0 if wait is False else float(wait))
    try:
        lock.acquire(timeout)
    except LockBusy:
        stats.skipped_busy = True
        return stats

    def _warn(message: str) -> None:
        stats.warnings.append(message)
        if warn is not None:
            warn(message)

    try:
        rows_list = list(rows) if rows is not None else None
        _refresh_locked(location, stats, full, home, rows_list, progress, _warn, known)
    finally:
        lock.release()
    stats.seconds = round(time.monotonic() - started, 4)
    return stats


def _choose_generation(location: Location, full: bool) -> tuple[Path, bool]:
    """The generation to write, and whether it is a first build (no index yet)."""
    building = location.building()
    if full:
        gen = location.new_generation()
        location.set_building(gen)
        return gen, False
    if building is not None:
        return building, False
    current = location.current()
    if current is None:
        return location.new_generation(), True
    return current, False


def _open_refresher(
    location: Location, stats: RefreshStats, full: bool, warn: Callable[[str], None]
) -> tuple[Path, _Refresher]:
    from agentdex.archive.indexing import archive_enabled

    archive = archive_enabled()
    gen, first_build = _choose_generation(location, full)
    try:
        refresher = _Refresher(gen, stats, Diagnostics(), archive=archive)
        if first_build:
            location.set_current(gen)  # migrated: readers now see progress as it commits
    except CorruptError as exc:
        if exc.__cause__ is not None:
            _raise_disk_full(exc.__cause__)  # could not write it: not corrupt, no rebuild
        if isinstance(exc, OutdatedIndexError):
            warn(f"{exc.message}; rebuilding it in the new format")
        else:
            warn(f"{exc.message}; rebuilding the index")
        gen = location.new_generation()
        location.set_building(gen)
        stats.rebuilt = True
        refresher = _Refresher(gen, stats, Diagnostics(), archive=archive)
    return gen, refresher


def _refresh_locked(
    location: Location,
    stats: RefreshStats,
    full: bool,
    home: str | None,
    rows: list[StoreRow] | None,
    progress: Progress | None,
    warn: Callable[[str], None],
    known: manifest.Changes | None = None,
) -> None:
    limit_malloc_arenas()
    # checked before anything is written: the files an agent appended to since the last refresh
    if rows is not None or full:
        known = None
    elif known is None or not manifest.still_current(location.root, known):
        known = manifest.changed_sources(location.root, home)
    try:
        gen, refresher = _open_refresher(location, stats, full, warn)
    except (OSError, sqlite3.OperationalError, ValueError) as exc:
        _raise_disk_full(exc)
        raise
    if location.building() == gen:
        stats.rebuilt = True
    if stats.rebuilt:
        known = None
    stats.generation = gen.name
    manifest.discard(location.root)
    ok = rebuild_first = False
    try:
        refresher.archive.start()
        with observe.recording() as notes:
            found = _run(refresher, home, rows, progress, warn, known)
        refresher.archive.finish()
        refresher.index.finish(big=stats.bytes_parsed >= BIG_REFRESH_BYTES)
        ok = True
    except _RebuildFirst:
        rebuild_first = True  # nothing written yet: the rollback leaves the index as it was
    except (OSError, sqlite3.OperationalError, ValueError) as exc:
        _raise_disk_full(exc)
        raise
    finally:
        stats.diagnostics = refresher.diagnostics.count
        stats.records_archived += refresher.archive.archived
        stats.records_restored += refresher.archive.restored
        refresher.close(ok)
    if rebuild_first:
        warn("most indexed files changed; rebuilding the index instead of updating it")
        _refresh_locked(location, stats, True, home, rows, progress, warn)
        return
    if location.building() == gen:
        location.set_current(gen)
    location.remove_stale()
    if rows is None and not stats.files_failed and not _has_unreadable(refresher.diagnostics):
        if known is not None:
            manifest.update(location.root, gen.name, known)
        else:
            manifest.write(location.root, gen.name, home, notes, stats.files_seen, found)
    if not full and _garbage_heavy(gen):
        warn("index has mostly deleted text; compacting with a full rebuild")
        _refresh_locked(location, stats, True, home, rows, progress, warn)


def _has_unreadable(diagnostics: Diagnostics) -> bool:
    """A file that could not be read is retried: the next refresh must not take the fast path."""
    return any(is_read_failure(d.message) for d in diagnostics.items)


#: ``meta`` key prefix of a file's last read failure (``agentdex sources`` shows it).
READ_ERROR_KEY = "read_error:"


def _note_read_failure(db: sqlite3.Connection, path: str, failure: str | None) -> None:
    """Remember why the last read of ``path`` failed, or forget it once a read succeeds."""
    import orjson

    key = READ_ERROR_KEY + path
    if failure is None:
        db.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        value = orjson.dumps({"message": failure, "at": time.time()}).decode()
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


#: errno -> what stopped the writes (``ulimit -f`` gives EFBIG: Python ignores SIGXFSZ)
_WRITE_LIMITS = {
    errno.ENOSPC: "disk full",
    errno.EFBIG: "file size limit reached (ulimit -f)",
    errno.EDQUOT: "disk quota exceeded",
}


def _raise_disk_full(exc: BaseException) -> None:
    what = _write_failure(exc)
    if what is not None:
        raise DiskFullError(
            f"{what} while indexing; the index keeps its last committed state "
            "(free space and run `agentdex index` again)"
        ) from exc


def _write_failure(exc: BaseException) -> str | None:
    """What stopped the index being written (full disk, size limit, quota, write I/O), if so."""
    if isinstance(exc, OSError):
        return _WRITE_LIMITS.get(exc.errno or 0)
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError):
        # SQLite reports ENOSPC as SQLITE_FULL and EFBIG/EDQUOT as a write I/O error
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name == "SQLITE_FULL" or "full" in text:
            return "disk full"
        if name.startswith("SQLITE_IOERR"):
            return (
                f"cannot write the index ({exc}: a full disk, a file size limit or a failing disk)"
            )
        return None
    # tantivy reports I/O errors as ValueError with the OS message inside
    if isinstance(exc, ValueError):
        if "file too large" in text:
            return _WRITE_LIMITS[errno.EFBIG]
        if "no space left" in text or "disk full" in text:
            return "disk full"
        if "quota" in text:
            return _WRITE_LIMITS[errno.EDQUOT]
    return None


class _RebuildFirst(Exception):
    """Most indexed bytes are about to be replaced: rebuild instead of parsing twice."""


def _mostly_replaced(files: FileRows, changed: list[Source]) -> bool:
    """Would re-indexing ``changed`` leave the index mostly dead text?

    A home copied or restored from a backup changes every file's mtime; a
    refresh would re-index it all in place and then compact it with a full
    rebuild, parsing the whole home twice. Deciding up front parses it once.
    """
    replaced = sum(old.size for s in changed if (old := files.get(str(s.path))) is not None)
    if replaced <= MIN_GARBAGE:
        return False  # (an append: no need to read every file row)
    return replaced > GARBAGE_RATIO * sum(old.size for old in files.values())


def _garbage_heavy(gen: Path) -> bool:
    db = sqlite3.connect(gen / "index.db")
    try:
        values = dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()
    total = int(values.get("text_bytes", 0) or 0)
    dead = int(values.get("dead_bytes", 0) or 0)
    return dead > MIN_GARBAGE and dead > GARBAGE_RATIO * total


def _run(
    refresher: _Refresher,
    home: str | None,
    rows: list[StoreRow] | None,
    progress: Progress | None,
    warn: Callable[[str], None],
    known: manifest.Changes | None = None,
) -> list[Source]:
    """Discover (or, with ``known``, take the changed store files) and index what changed.

    Returns the sources discovery found (empty with ``known``), for the manifest.
    """
    stats = refresher.stats
    if known is not None:
        sources = _known_sources(known)
        stats.files_seen = known.files
    else:
        found = _discover(home, rows)
        for message in found.warnings:
            warn(message)
        sources = [s for s in found.sources if _indexable(s)]
        stats.files_seen = len(sources)
        refresher.files.read_all()  # every one is compared: one query, not one per file
    changed = [s for s in sources if _maybe_changed(refresher, s)]
    if not stats.rebuilt and _mostly_replaced(refresher.files, changed):
        raise _RebuildFirst
    if known is None:
        seen_paths = {str(s.path) for s in sources}
        in_scope = {row.store for row in rows} if rows is not None else None
        for path, old in list(refresher.files.items()):
            if is_archived(path):
                continue  # kept from the archive: no source to compare with
            if path not in seen_paths and (in_scope is None or old.store in in_scope):
                refresher.remove_file(old)
    stats.files_unchanged = stats.files_seen - len(changed)
    _index_changed(refresher, changed, progress)
    return sources


def _known_sources(known: manifest.Changes) -> list[Source]:
    """The manifest's changed store files as discovery would have found them now."""
    from agentdex.catalogue import store

    sources: list[Source] = []
    for path, (store_id, name, root, host, only) in known.sources.items():
        try:
            st = os.stat(path)
            row = store(store_id)
        except (OSError, KeyError):
            continue  # gone since the check: the next refresh's discovery sees it
        sources.append(
            Source(row, Path(path), Root(name, Path(root), host, only), st.st_size, st.st_mtime)
        )
    return sources


def _index_changed(refresher: _Refresher, changed: list[Source], progress: Progress | None) -> None:
    stats = refresher.stats
    total_bytes = sum(s.size for s in changed)
    index = refresher.index
    if total_bytes >= PARALLEL_MIN_BYTES:
        index.start_bulk_load()
    # a small refresh (an agent appending a message) opens no tantivy writer: its records
    # join the tail that readers verify directly, indexed in one go once it has grown
    tail = index.tail_size()
    stats.deferred = total_bytes < DEFER_BYTES and tail < TAIL_RECORDS
    if stats.deferred:
        index.defer_postings()
    # workers are forked: only while this process runs no threads (tantivy starts some)
    workers = 0 if index.threads_started else _worker_count(total_bytes)
    stats.workers = workers
    if workers:
        _run_parallel(refresher, changed, workers, progress, total_bytes)
        return
    if tail and not stats.deferred:
        index.catch_up()
    done_bytes = 0
    for i, source in enumerate(changed):
        refresher.index_source(source)
        done_bytes += source.size
        refresher.maybe_commit()
        if progress is not None:
            progress(i + 1, len(changed), done_bytes, total_bytes)


def _worker_count(total_bytes: int) -> int:
    """Parse workers for a refresh of ``total_bytes``: one per core for big ones.

    ``AGENTDEX_INDEX_WORKERS=N`` overrides (0 parses in this process).
    """
    if total_bytes < PARALLEL_MIN_BYTES:
        return 0
    setting = os.environ.get("AGENTDEX_INDEX_WORKERS", "")
    workers = int(setting) if setting.isdigit() else min(4, os.cpu_count() or 1)
    if not workers:
        return 0
    import multiprocessing

    return workers if "fork" in multiprocessing.get_all_start_methods() else 0


def _run_parallel(
    refresher: _Refresher,
    changed: list[Source],
    workers: int,
    progress: Progress | None,
    total_bytes: int,
) -> None:
    """Parse in ``workers`` forked processes while this one writes, in file order.

    At most ``IN_FLIGHT_BYTES`` of input is parsed ahead of the writer, so
    memory stays bounded; commits still happen at file boundaries here.
    """
    from collections import deque

    from agentdex.index.workers import ParseWorkers

    pending: deque[_Plan] = deque()
    in_flight = 0
    done_bytes = 0
    index = 0
    with ParseWorkers(workers, _parse_in_worker) as pool:
        if refresher.index.tail_size():
            refresher.index.catch_up()  # after the fork: it starts tantivy's threads
        while index < len(changed) or pending:
            while (
                index < len(changed)
                and (not pending or in_flight < IN_FLIGHT_BYTES)
                and pool.can_submit()
            ):
                source = changed[index]
                index += 1
                plan = refresher.plan(source)
                if plan is None:
                    done_bytes += source.size
                    continue
                pool.submit(source, plan.cursor)
                pending.append(plan)
                in_flight += source.size
            if not pending:
                break
            plan = pending.popleft()
            refresher.index_parsed(plan, pool.next_result())
            in_flight -= plan.source.size
            done_bytes += plan.source.size
            refresher.maybe_commit()
            if progress is not None:
                progress(index - len(pending), len(changed), done_bytes, total_bytes)


def _maybe_changed(refresher: _Refresher, source: Source) -> bool:
    old = refresher.files.get(str(source.path))
    return not (
        old is not None
        and old.size == source.size
        and old.mtime == source.mtime
        and old.wal_sig == _wal_sig(source)
        and old.parser == source.row.parser
    )

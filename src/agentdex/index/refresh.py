"""Incremental refresh: bring the index in line with the stores on disk.

Per discovered file: unchanged (same size and mtime, and the same ``-wal``
for SQLite stores) costs nothing beyond discovery's stat. An append-only
JSONL file (resumable parser, same inode, not smaller, same first bytes)
resumes from its stored cursor after deleting its records at offsets at or
past the resume point. Anything else is reparsed whole. Files that are gone
lose their records. Work is committed in batches at file boundaries, each
batch one SQLite transaction holding the files' cursors, records and text
blocks together, so a killed refresh leaves a consistent index that the next
run continues.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentdex.catalogue import Coverage, StoreRow
from agentdex.discovery import Source
from agentdex.errors import AgentdexError, CorruptError
from agentdex.index.lock import LockBusy, WriterLock
from agentdex.index.segments import BlockWriter
from agentdex.index.signatures import SignatureWriter
from agentdex.index.store import Location, open_writer_db
from agentdex.readers import Diagnostics

HEAD_BYTES = 4096
#: Commit after this much parsed input (bytes) or this many seconds.
COMMIT_BYTES = int(os.environ.get("AGENTDEX_INDEX_COMMIT_BYTES", 16 * 1024 * 1024))
COMMIT_SECONDS = 5.0
#: Rebuild when dead text exceeds this share of all text (and MIN_GARBAGE bytes).
GARBAGE_RATIO = 0.5
MIN_GARBAGE = 64 * 1024 * 1024

Progress = Callable[[int, int, int, int], None]


class DiskFullError(AgentdexError):
    """The disk filled up while indexing; the index keeps its last committed state."""


@dataclass(slots=True)
class RefreshStats:
    generation: str = ""
    files_seen: int = 0
    files_unchanged: int = 0
    files_parsed: int = 0
    files_resumed: int = 0
    files_removed: int = 0
    files_failed: int = 0
    records_added: int = 0
    records_removed: int = 0
    bytes_parsed: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    skipped_busy: bool = False
    diagnostics: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def _head_hash(path: Path, length: int) -> str:
    with open(path, "rb") as handle:
        return hashlib.blake2b(handle.read(length), digest_size=12).hexdigest()


def _wal_sig(source: Source) -> str:
    if source.row.format not in ("sqlite", "vscdb"):
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


class _Refresher:
    def __init__(self, gen: Path, stats: RefreshStats, diagnostics: Diagnostics) -> None:
        self.gen = gen
        self.stats = stats
        self.diagnostics = diagnostics
        self.db = open_writer_db(gen)
        self.signatures = SignatureWriter(gen)
        self.writer = BlockWriter(self.db, self.signatures)
        self.files: dict[str, tuple[Any, ...]] = {
            row[1]: row
            for row in self.db.execute(
                "SELECT id, path, size, mtime, inode, head_len, head_hash, wal_sig,"
                " resume_offset, resume_line, state, parser, store FROM files"
            )
        }
        self.dead_bytes = 0
        self.pending = 0
        self.last_commit = time.monotonic()
        self.db.execute("BEGIN IMMEDIATE")

    # -- transactions ---------------------------------------------------------
    def commit(self) -> None:
        self.writer.flush()
        self._bump_meta("text_bytes", self.writer.text_bytes)
        self._bump_meta("dead_bytes", self.dead_bytes)
        self.writer.text_bytes = 0
        self.dead_bytes = 0
        self.db.execute("COMMIT")
        self.db.execute("BEGIN IMMEDIATE")
        self.pending = 0
        self.last_commit = time.monotonic()

    def maybe_commit(self) -> None:
        if self.pending >= COMMIT_BYTES or time.monotonic() - self.last_commit > COMMIT_SECONDS:
            self.commit()

    def close(self, ok: bool) -> None:
        try:
            if ok:
                self.commit()
            self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        self.db.close()

    def _bump_meta(self, key: str, amount: int) -> None:
        if amount:
            self.db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                " SET value = CAST(value AS INTEGER) + excluded.value",
                (key, amount),
            )

    def meta_int(self, key: str) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    # -- per file ------------------------------------------------------------
    def delete_records(self, file_id: int, from_offset: int | None) -> None:
        where = "file_id = ?" + (" AND offset >= ?" if from_offset is not None else "")
        args: tuple[int, ...] = (file_id,) if from_offset is None else (file_id, from_offset)
        row = self.db.execute(
            f"SELECT count(*), coalesce(sum(tlen + 1), 0) FROM records WHERE {where}", args
        ).fetchone()
        if row[0]:
            self.db.execute(f"DELETE FROM records WHERE {where}", args)
            self.stats.records_removed += row[0]
            self.dead_bytes += row[1]

    def remove_file(self, old: tuple[Any, ...]) -> None:
        self.delete_records(old[0], None)
        self.db.execute("DELETE FROM files WHERE id = ?", (old[0],))
        self.stats.files_removed += 1

    def index_source(self, source: Source) -> None:
        from agentdex.parsers import ParseCursor, get_parser, run

        path = str(source.path)
        old = self.files.get(path)
        wal_sig = _wal_sig(source)
        if (
            old is not None
            and old[2] == source.size
            and old[3] == source.mtime
            and old[7] == wal_sig
            and old[11] == source.row.parser
        ):
            self.stats.files_unchanged += 1
            return
        try:
            st = os.stat(source.path)
            head_len = min(st.st_size, HEAD_BYTES)
            head_hash = _head_hash(source.path, head_len)
        except OSError:
            if old is not None:
                self.remove_file(old)
            return
        assert source.row.parser is not None
        spec = get_parser(source.row.parser)
        cursor = ParseCursor()
        resume_from: int | None = None
        if (
            old is not None
            and spec.resumable
            and old[11] == source.row.parser
            and old[4] == st.st_ino
            and st.st_size >= old[2]
            and old[5] <= st.st_size
            and _head_hash(source.path, old[5]) == old[6]
        ):
            resume_from = old[8]
            cursor = ParseCursor(offset=old[8], line=old[9], state=orjson.loads(old[10]))
        if old is not None:
            file_id = old[0]
            self.delete_records(file_id, resume_from)
        else:
            file_id = self.db.execute(
                "INSERT INTO files (path, agent, store, parser, size, mtime) VALUES (?,?,?,?,?,?)",
                (path, source.agent, source.store, source.row.parser, -1, -1.0),
            ).lastrowid
            assert file_id is not None
        added = 0
        before = self.diagnostics.count
        try:
            for record in run(source, cursor, self.diagnostics):
                self.writer.add(record, file_id)
                added += 1
        except Exception as exc:  # a parser bug costs this file, not the run
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise
            self.diagnostics.add(source.path, "", f"parser error: {exc!r}")
            self.stats.files_failed += 1
        if self.diagnostics.count > before and added == 0 and not os.path.exists(source.path):
            # vanished mid-index: forget it entirely
            self.delete_records(file_id, None)
            self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))
            return
        total = (
            self.db.execute(
                "SELECT count(*) FROM records WHERE file_id = ?", (file_id,)
            ).fetchone()[0]
            if resume_from is not None
            else added
        )
        self.db.execute(
            "UPDATE files SET agent=?, store=?, parser=?, size=?, mtime=?, inode=?, head_len=?,"
            " head_hash=?, wal_sig=?, resume_offset=?, resume_line=?, state=?, records=?,"
            " indexed_at=? WHERE id=?",
            (
                source.agent,
                source.store,
                source.row.parser,
                source.size,
                source.mtime,
                st.st_ino,
                head_len,
                head_hash,
                wal_sig,
                cursor.resume_offset if spec.resumable else 0,
                cursor.resume_line if spec.resumable else 0,
                orjson.dumps(cursor.state if spec.resumable else {}, default=str).decode(),
                total,
                time.time(),
                file_id,
            ),
        )
        if cursor.titles:
            self.db.executemany(
                "INSERT INTO titles (agent, session_id, title) VALUES (?, ?, ?)"
                " ON CONFLICT(agent, session_id) DO UPDATE SET title = excluded.title",
                [(source.agent, sid, title) for sid, title in cursor.titles.items()],
            )
        self.stats.records_added += added
        if resume_from is not None:
            self.stats.files_resumed += 1
            self.pending += max(0, source.size - resume_from)
            self.stats.bytes_parsed += max(0, source.size - resume_from)
        else:
            self.stats.files_parsed += 1
            self.pending += source.size
            self.stats.bytes_parsed += source.size


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
) -> RefreshStats:
    """Refresh (or with ``full`` rebuild) the index; returns what was done.

    ``wait=False`` returns at once with ``skipped_busy`` when another process
    is writing; a number waits that many seconds.
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
        _refresh_locked(location, stats, full, home, rows_list, progress, _warn)
    finally:
        lock.release()
    stats.seconds = round(time.monotonic() - started, 4)
    return stats


def _choose_generation(location: Location, full: bool, warn: Callable[[str], None]) -> Path:
    building = location.building()
    if full:
        gen = location.new_generation()
        location.set_building(gen)
        return gen
    if building is not None:
        return building
    current = location.current()
    if current is None:
        gen = location.new_generation()
        location.set_current(gen)  # first build: readers see progress as it commits
        return gen
    return current


def _refresh_locked(
    location: Location,
    stats: RefreshStats,
    full: bool,
    home: str | None,
    rows: list[StoreRow] | None,
    progress: Progress | None,
    warn: Callable[[str], None],
) -> None:
    gen = _choose_generation(location, full, warn)
    try:
        refresher = _Refresher(gen, stats, Diagnostics())
    except CorruptError as exc:
        warn(f"{exc.message}; rebuilding the index")
        gen = location.new_generation()
        location.set_building(gen)
        stats.rebuilt = True
        refresher = _Refresher(gen, stats, Diagnostics())
    if location.building() == gen:
        stats.rebuilt = True
    stats.generation = gen.name
    ok = False
    try:
        _run(refresher, home, rows, progress, warn)
        ok = True
    except (OSError, sqlite3.OperationalError) as exc:
        if _is_disk_full(exc):
            raise DiskFullError(
                "disk full while indexing; the index keeps its last committed state "
                "(free space and run `agentdex index` again)"
            ) from exc
        raise
    finally:
        stats.diagnostics = refresher.diagnostics.count
        refresher.close(ok)
    if location.building() == gen:
        location.set_current(gen)
    location.remove_stale()
    if not full and _garbage_heavy(gen):
        warn("index has mostly deleted text; compacting with a full rebuild")
        _refresh_locked(location, stats, True, home, rows, progress, warn)


def _is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    return isinstance(exc, sqlite3.OperationalError) and "full" in str(exc).lower()


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
) -> None:
    found = _discover(home, rows)
    for message in found.warnings:
        warn(message)
    sources = [s for s in found.sources if _indexable(s)]
    stats = refresher.stats
    stats.files_seen = len(sources)
    seen_paths = {str(s.path) for s in sources}
    in_scope = {row.store for row in rows} if rows is not None else None
    for path, old in list(refresher.files.items()):
        if path not in seen_paths and (in_scope is None or old[12] in in_scope):
            refresher.remove_file(old)
    changed = [s for s in sources if _maybe_changed(refresher, s)]
    stats.files_unchanged = len(sources) - len(changed)
    total_bytes = sum(s.size for s in changed)
    done_bytes = 0
    for i, source in enumerate(changed):
        refresher.index_source(source)
        done_bytes += source.size
        refresher.maybe_commit()
        if progress is not None:
            progress(i + 1, len(changed), done_bytes, total_bytes)
    stats.files_unchanged += 0


def _maybe_changed(refresher: _Refresher, source: Source) -> bool:
    old = refresher.files.get(str(source.path))
    return not (
        old is not None
        and old[2] == source.size
        and old[3] == source.mtime
        and old[7] == _wal_sig(source)
        and old[11] == source.row.parser
    )


def print_warning(message: str) -> None:
    print(f"agentdex: {message}", file=sys.stderr)

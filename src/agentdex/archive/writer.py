"""The write side of the archive during a refresh: every indexed record, once.

The refresh offers each record it indexes (:meth:`ArchiveWriter.offer`). A
record whose key (:func:`agentdex.archive.keys.record_key`) is already
archived costs one ignored insert and nothing else; a new one gets an entry
row and its text appended to the open text chunk.

Raw source bytes are kept where that is cheap and useful: the source line of
each *prompt* (what a person typed) read from a JSONL store, up to
``RAW_MAX`` bytes. The line holds what normalizing drops (the agent's ids,
parent links, attachments, the exact envelope) for the records people look
for most, and prompts are a small share of a history (about one record in
ten). Replies and tool output are kept as text only: their lines repeat that
text with bulky envelopes (on real Claude Code transcripts all lines would
triple the archive).

The archive keeps one transaction open per batch, like the index writer:
chunks are compressed on a helper thread, appended as they fill, and the
batch commits (after an fsync of the chunk file) just before the index's own
commit (the order is stated in :mod:`agentdex.ingest.archiving`), so the archive
always holds at least what the index holds.
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import TYPE_CHECKING

from agentdex.archive.keys import record_key
from agentdex.archive.store import CHUNK_BYTES, LEVEL, RAW, TEXT, ArchiveStore
from agentdex.index import codec
from agentdex.index.segments import ContextIds

if TYPE_CHECKING:
    from collections.abc import Iterable
    from concurrent.futures import Future, ThreadPoolExecutor

    from agentdex.archive.usage import CallRow
    from agentdex.index.segments import Prepared
    from agentdex.records import Usage

#: a prompt's raw source line is kept up to this size (its text is kept whatever its size)
RAW_MAX = 64 * 1024
#: the records whose raw source line is kept
RAW_KINDS = frozenset({"prompt"})

_INSERT_ENTRY = (
    "INSERT INTO entries (key, context_id, source_id, role, kind, timestamp, locator, offset,"
    " text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size, archived_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
#: records looked up and inserted together
BATCH = 500


class _OpenChunk:
    """Bytes collected for one chunk whose id is already reserved."""

    def __init__(self, chunk_id: int) -> None:
        self.id = chunk_id
        self.parts: list[bytes] = []
        self.size = 0


class ArchiveWriter:
    """Adds one refresh's records to the archive; the caller holds the index writer lock."""

    def __init__(self, store: ArchiveStore, *, redact: bool = True) -> None:
        #: mask secrets in the raw source lines kept (record texts come masked already)
        self.redact = redact
        self.store = store
        self.db = store.db
        self.contexts = ContextIds(self.db)
        #: source path -> id, read per path on first use (an append touches one source)
        self.sources: dict[str, int] = {}
        self._next_chunk = (
            int(self.db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]) + 1
        )
        self._open: dict[int, _OpenChunk] = {}
        self._pending: deque[tuple[int, int, bytes, Future[bytes]]] = deque()
        self._pool: ThreadPoolExecutor | None = None
        self._source_id = 0
        self._source_path: str | None = None
        self._raw_fd = -1
        self._lines: dict[int, tuple[int, int, int]] = {}
        self._batch: list[tuple[int, Prepared]] = []
        self._now = int(time.time())
        #: entries added in this writer's lifetime, and their text bytes (for stats)
        self.added = 0
        self.text_bytes = 0
        self.db.execute("BEGIN IMMEDIATE")

    # -- sources -------------------------------------------------------------------------------
    def begin_source(self, path: str, *, jsonl: bool) -> None:
        """The file the next offered records come from (``jsonl``: keep prompts' lines)."""
        self._flush()
        self._close_raw()
        self._source_path = path if jsonl else None
        self._lines = {}
        self._source_id = self._source(path)

    def _source(self, path: str) -> int:
        source_id = self.sources.get(path)
        if source_id is None:
            row = self.db.execute("SELECT id FROM sources WHERE path = ?", (path,)).fetchone()
            if row is None:
                row = (self.db.execute("INSERT INTO sources (path) VALUES (?)", (path,)).lastrowid,)
            source_id = self.sources[path] = int(row[0] or 0)
        return source_id

    # -- token usage ---------------------------------------------------------------------------
    def add_usage(self, path: str, usage: Iterable[Usage]) -> None:
        """Keep the model calls one read of ``path`` found (a later read replaces its row of
        the same call; calls the file no longer holds stay: :mod:`agentdex.archive.usage`)."""
        from agentdex.archive.usage import upsert
        from agentdex.index.usage import call_hash

        source_id = self._source(path)
        rows = []
        for u in usage:
            context = (u.agent, u.store, u.session_id, u.model, u.cwd, u.project, u.branch,
                       u.worktree, u.host)  # fmt: skip
            call = call_hash(u.agent, u.call_id)
            context_id = self.contexts.get_or_add(context)
            rows.append((source_id, call, context_id, u.offset, u.timestamp, *u.counts()))
        upsert(self.db, rows)

    def add_usage_rows(self, rows: Iterable[CallRow]) -> int:
        """Keep calls as the index holds them (:data:`agentdex.archive.usage.CallRow`; they
        replace the archive's rows of the same source and call). How many."""
        from agentdex.archive.usage import upsert

        out = []
        for row in rows:
            path, context, rest = str(row[0]), row[1:10], row[10:]
            out.append((self._source(path), rest[0], self.contexts.get_or_add(context), *rest[1:]))
        upsert(self.db, out)
        return len(out)

    def _close_raw(self) -> None:
        if self._raw_fd >= 0:
            os.close(self._raw_fd)
            self._raw_fd = -1

    def _raw_line(self, offset: int) -> tuple[int, int, int] | None:
        """The chunk reference of the source line at ``offset`` (None: too long, unreadable)."""
        known = self._lines.get(offset)
        if known is not None:
            return known
        if self._source_path is None:
            return None
        try:
            if self._raw_fd < 0:
                self._raw_fd = os.open(self._source_path, os.O_RDONLY)
            data = os.pread(self._raw_fd, RAW_MAX + 2, offset)
        except OSError:
            self._source_path = None
            return None
        end = data.find(b"\n")
        if end < 0:
            if len(data) > RAW_MAX:
                return None
            end = len(data)
        line = data[:end].rstrip(b"\r")
        if not line.startswith((b"{", b"[")) or len(line) > RAW_MAX:
            return None  # not a JSON line: the file changed since it was parsed
        if self.redact:
            from agentdex.archive.redaction import mask_piece

            masked = mask_piece(RAW, line)
            if masked is None:
                return None
            line = masked
        chunk_id, start = self._next(RAW)
        self._append(RAW, line)
        ref = self._lines[offset] = (chunk_id, start, len(line))
        return ref

    # -- records -------------------------------------------------------------------------------
    def offer(self, prepared: Prepared) -> None:
        """Archive one record unless its key is already there (checked in batches)."""
        meta = prepared.meta
        key = record_key(
            meta[0], meta[2], meta[3], meta[4], meta[5], prepared.thash, len(prepared.lower)
        )
        self._batch.append((key, prepared))
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        """Insert the batch's records that are not archived yet (one lookup, one insert)."""
        batch, self._batch = self._batch, []
        if not batch:
            return
        keys = [key for key, _ in batch]
        known = {
            int(row[0])
            for row in self.db.execute(
                f"SELECT key FROM entries WHERE key IN ({','.join('?' * len(keys))})", keys
            )
        }
        rows = []
        for key, prepared in batch:
            if key in known:
                continue
            known.add(key)  # the same record twice in one batch is archived once
            rows.append(self._entry_row(key, prepared))
        if rows:
            self.db.executemany(_INSERT_ENTRY, rows)
            self.added += len(rows)

    def _entry_row(self, key: int, prepared: Prepared) -> tuple[object, ...]:
        agent, store, session, role, kind, timestamp = prepared.meta[:6]
        model, cwd, project, branch, worktree, host, locator, offset = prepared.meta[6:]
        context = (agent, store, session, model, cwd, project, branch, worktree, host)
        context_id = self.contexts.get_or_add(context)
        text = prepared.text.encode("utf-8", "surrogatepass")
        text_chunk, text_start = self._next(TEXT)
        self._append(TEXT, text)
        self.text_bytes += len(text)
        raw = None
        if (
            kind in RAW_KINDS
            and self._source_path is not None
            and isinstance(offset, int)
            and offset >= 0
        ):
            raw = self._raw_line(offset)
        return (
            key,
            context_id,
            self._source_id,
            role,
            kind,
            timestamp,
            locator,
            offset,
            text_chunk,
            text_start,
            len(text),
            *(raw if raw is not None else (None, None, None)),
            self._now,
        )

    def set_titles(self, agent: str, titles: dict[str, str]) -> None:
        if titles:
            self.db.executemany(
                "INSERT INTO titles (agent, session_id, title) VALUES (?, ?, ?)"
                " ON CONFLICT(agent, session_id) DO UPDATE SET title = excluded.title",
                [(agent, sid, title) for sid, title in titles.items()],
            )

    # -- chunks --------------------------------------------------------------------------------
    def _next(self, kind: int) -> tuple[int, int]:
        """Where the next bytes of this kind go: (chunk id, offset in the chunk)."""
        chunk = self._open.get(kind)
        if chunk is None:
            chunk = self._open[kind] = _OpenChunk(self._next_chunk)
            self._next_chunk += 1
        return chunk.id, chunk.size

    def _append(self, kind: int, data: bytes) -> None:
        """Add bytes at the place :meth:`_next` gave; seal the chunk when it is full."""
        chunk = self._open[kind]
        chunk.parts.append(data)
        chunk.size += len(data)
        if chunk.size >= CHUNK_BYTES:
            self._seal(kind)

    def _seal(self, kind: int) -> None:
        chunk = self._open.pop(kind, None)
        if chunk is None or not chunk.size:
            return
        data = b"".join(chunk.parts)
        job = self._executor().submit(codec.compress, data, LEVEL)
        self._pending.append((chunk.id, kind, data, job))
        while len(self._pending) > 2:
            self._write_pending()

    def _write_pending(self) -> None:
        chunk_id, kind, data, job = self._pending.popleft()
        self.store.append_chunk(kind, data, job.result(), chunk_id=chunk_id)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdex-archive")
        return self._pool

    @property
    def threads_started(self) -> bool:
        return self._pool is not None

    def stop_threads(self) -> None:
        """Stop the helper thread (call after a commit, before forking parse workers)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    # -- batches ---------------------------------------------------------------------------------
    def commit(self) -> None:
        """Write every open chunk, fsync the chunk file, then commit the batch's rows."""
        self._flush()
        for kind in (TEXT, RAW):
            self._seal(kind)
        while self._pending:
            self._write_pending()
        self.store.sync()
        self.db.execute("COMMIT")
        self.db.execute("BEGIN IMMEDIATE")

    def close(self, ok: bool) -> None:
        """Commit (``ok``) or drop the open batch; release the file handles and the thread."""
        try:
            if ok:
                self.commit()
            self.db.execute("ROLLBACK")
        finally:
            self._batch.clear()
            self._close_raw()
            self._pending.clear()
            self._open.clear()
            self.stop_threads()

"""Compute the missing embeddings of an index: newest first, resumable, one filler at a time.

What is embedded: prompts, the agent's replies and summaries, as the
index stores their text (lower-cased; redacted when the index redacts), and
each conversation's title from the index's ``titles`` table (after the
records: ``title_members`` in the store, see :mod:`agentdex.semantic.store`); tool
calls, tool output and reasoning are not (they are most of a history's bytes,
and whether they help recall has not been measured). A long message is cut
into chunks of the model's window (``MAX_CHUNKS`` at most, its first
``MAX_CHARS`` characters: a multi-megabyte output never is) and its vector is
the normalized mean of its chunks'.

Each batch is one commit (its vectors appended and fsynced, then its keys and
members in SQLite), so a killed fill loses at most one batch and the next one
carries on where it stopped. After a complete pass, members of records the
index no longer holds and vectors no member holds are dropped.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentdex.errors import AgentdexError
from agentdex.index.segments import BlockFile, load_block
from agentdex.index.store import Location, open_reader_db
from agentdex.semantic import store
from agentdex.semantic.link import ELIGIBLE, Live, blocks_of, link, live_titles
from agentdex.semantic.model import DEFAULT, Embedder, ModelSpec

MAX_CHUNKS = 3
#: characters read per record before tokenizing (4 chunks of 128 tokens fit in far less)
MAX_CHARS = 6_000
BATCH = 64
#: chunks a lane takes at once: onnxruntime's peak grows with a call's size (32 at once
#: peaked at 807 MB in a bare process; a 1 GB fill with 4 peaked at 332 MB, and ran
#: faster per CPU second than with 8: bench/bench_semantic.py, docs/performance.md).
#: An int8 model (the default) runs them one chunk a call (``Embedder.embed_ids``)
GROUP = 4
#: embed conversation titles after the records; only ``bench/semantic_eval.py --titles``
#: turns it off, to measure what titles add to recall and cost (docs/search.md)
EMBED_TITLES = True


class SemanticDiskFull(AgentdexError):
    """The disk filled while vectors were written; what was committed stays usable."""


@dataclass(slots=True)
class FillStats:
    eligible: int = 0
    embedded_before: int = 0
    records_done: int = 0  #: records that got their members row in this run
    texts_embedded: int = 0  #: distinct texts run through the model
    chunks_embedded: int = 0
    reused: int = 0  #: records whose text already had vectors (identical text, a rebuild)
    linked: int = 0  #: of them, linked by text hash before the fill (no text read)
    titles_done: int = 0  #: conversations whose title got its members row in this run
    members_dropped: int = 0
    vectors_dropped: int = 0
    vectors: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class FillLock:
    """``semantic/fill.lock``: one filler per index (``acquire(wait=False)`` may say no)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.fd = os.open(folder / "fill.lock", os.O_RDWR | os.O_CREAT, 0o600)

    def acquire(self, *, wait: bool) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        os.close(self.fd)


_WRITE_LIMITS = {
    errno.ENOSPC: "disk full",
    errno.EFBIG: "file size limit reached (ulimit -f)",
    errno.EDQUOT: "disk quota exceeded",
}


def write_failure(exc: BaseException) -> str | None:
    """What stopped the vectors being written (full disk, size limit, quota, write I/O)."""
    if isinstance(exc, OSError):
        return _WRITE_LIMITS.get(exc.errno or 0)
    if isinstance(exc, sqlite3.OperationalError):
        # SQLite reports ENOSPC as SQLITE_FULL and EFBIG/EDQUOT as a write I/O error
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name == "SQLITE_FULL" or "full" in str(exc).lower():
            return "disk full"
        if name.startswith("SQLITE_IOERR") or "disk i/o error" in str(exc).lower():
            return "disk I/O error (a full disk, a file size limit or a failing disk)"
    return None


def fill(
    index_root: Path,
    *,
    spec: ModelSpec = DEFAULT,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    wait: bool = True,
    max_records: int | None = None,
    batch: int | None = None,
    threads: int = 1,
) -> FillStats:
    """Embed every eligible record of the current generation that has no vectors yet.

    ``progress(done, todo)`` after each batch; ``should_stop()`` is asked between
    batches (background fills stop when a request comes in); ``wait=False``
    returns at once (``stopped: "busy"``) when another process is filling.
    """
    started = time.monotonic()
    stats = FillStats()
    folder = store.semantic_dir(index_root)
    gen = Location(index_root).current()
    if gen is None:
        stats.stopped = "no-index"
        return stats
    try:
        lock = FillLock(folder)
        try:
            if not lock.acquire(wait=wait):
                stats.stopped = "busy"
                return stats
            db = store.connect(folder, create=True)
            assert db is not None
            try:
                _fill(
                    db,
                    folder,
                    gen,
                    spec,
                    embedder,
                    stats,
                    progress,
                    should_stop,
                    max_records,
                    batch or BATCH,
                    threads,
                )
            finally:
                db.close()
        finally:
            lock.close()
    except (OSError, sqlite3.OperationalError) as exc:
        what = write_failure(exc)
        if what is None:
            raise
        raise SemanticDiskFull(
            f"{what} while writing vectors; the embeddings committed so far are kept"
            " and lexical search is unaffected"
        ) from None
    stats.seconds = round(time.monotonic() - started, 3)
    return stats


def _fill(
    db: sqlite3.Connection,
    folder: Path,
    gen: Path,
    spec: ModelSpec,
    embedder: Embedder | None,
    stats: FillStats,
    progress: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None,
    max_records: int | None,
    size: int,
    threads: int,
) -> None:
    if store.get_meta(db, "model") not in (None, spec.id):
        # another model's vectors: start over in fresh files
        number = int(store.vfile(db).rsplit("-", 1)[1]) + 1
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM members")
        db.execute("DELETE FROM title_members")
        db.execute("DELETE FROM keys")
        store.set_meta(db, "vfile", f"vec-{number:06d}")
        store.set_meta(db, "rows", 0)
        store.set_meta(db, "dead", 0)
        store.set_meta(db, "generation", "")
        db.execute("COMMIT")

    def model() -> Embedder:  # loaded when a text needs it: linking and reuse do not
        nonlocal embedder
        if embedder is None:
            from agentdex.semantic.model import embedder as shared

            embedder = shared(spec, threads=threads)
        return embedder

    index_db = open_reader_db(gen)
    # pages read through mmap count in this process' RSS: a fill reads every eligible row
    index_db.execute("PRAGMA mmap_size=0")
    blocks = BlockFile(gen)
    appender = store.Appender(folder, db, spec.dim)
    try:
        index_db.execute("BEGIN")
        live = Live.read(index_db, times=True)
        stats.eligible = len(live)
        # records whose text has a vector already (a rebuilt index numbers its records
        # anew; a copied conversation): linked from the index's text hashes, nothing read
        stats.linked = link(db, live, gen.name, spec.id)
        # an int64 array, newest first: 8 bytes a record (a list of ints took 36)
        todo, stats.embedded_before = live.missing(db)
        if max_records is not None:
            todo = todo[:max_records]
        if progress:
            progress(0, len(todo))
        for at in range(0, len(todo), size):
            if should_stop is not None and should_stop():
                stats.stopped = "interrupted"
                break
            batch = todo[at : at + size].tolist()
            texts = _texts(index_db, blocks, batch, blocks_of(index_db, batch))
            _embed_batch(db, appender, model, spec, batch, texts, live, stats)
            stats.records_done += len(batch)
            if progress:
                progress(stats.records_done, len(todo))
        titles = live_titles(index_db, spec.id) if EMBED_TITLES else {}
        index_db.execute("ROLLBACK")
        if stats.stopped is None and (max_records is None or len(todo) < max_records):
            # titles after the records: one short text a conversation
            _embed_titles(db, appender, model, spec, titles, stats, should_stop, size)
        if stats.stopped is None and (max_records is None or len(todo) < max_records):
            stats.complete = True
            keys = {k: ckey for k, (ckey, _) in titles.items()}
            dropped = store.collect_garbage(db, live.rids, live.thash, keys)
            stats.members_dropped, stats.vectors_dropped = dropped
        appender.close()
        store.compact(folder, db, spec.dim)
        stats.vectors = db.execute("SELECT count(*) FROM keys").fetchone()[0]
    finally:
        appender.close()
        blocks.close()
        with suppress(sqlite3.Error):
            index_db.close()


def _texts(
    index_db: sqlite3.Connection, blocks: BlockFile, rids: list[int], block_of: dict[int, int]
) -> dict[int, bytes]:
    """The lower-cased text (UTF-8) of each record, read block by block."""
    out: dict[int, bytes] = {}
    by_block: dict[int, list[int]] = {}
    for rid in rids:
        by_block.setdefault(block_of[rid], []).append(rid)
    for block_id, members in by_block.items():
        block = load_block(index_db, blocks, block_id)
        if block is None:
            continue
        for rid in members:
            start, end = block.lower_span(rid - block.first_id)
            out[rid] = block.lower[start:end]
    return out


def _embed_texts(
    appender: store.Appender,
    model: Callable[[], Embedder],
    spec: ModelSpec,
    fresh: dict[int, str],
    stats: FillStats,
) -> tuple[int, list[int]]:
    """Append (not commit) a vector for each text of ``fresh`` (content key -> text);
    returns the first row written and the keys in row order."""
    import numpy as np

    first = appender.rows
    new_keys: list[int] = []
    if fresh:
        new_keys = list(fresh)
        embedder = model()
        encoded = embedder.encode([fresh[k] for k in new_keys], max_chunks=MAX_CHUNKS)
        flat = [(n, ids) for n, chunks in enumerate(encoded) for ids in chunks]
        order = sorted(range(len(flat)), key=lambda i: len(flat[i][1]))  # similar lengths pad less
        sums = np.zeros((len(new_keys), spec.dim), dtype=np.float32)
        parts = [order[at : at + GROUP] for at in range(0, len(order), GROUP)]
        done = embedder.embed_groups([[flat[i][1] for i in part] for part in parts])
        for part, vectors in zip(parts, done, strict=True):
            for i, vector in zip(part, vectors, strict=True):
                sums[flat[i][0]] += vector
        sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        appender.append(sums, new_keys)
        appender.sync()
        stats.texts_embedded += len(fresh)
        stats.chunks_embedded += len(flat)
    return first, new_keys


def _embed_titles(
    db: sqlite3.Connection,
    appender: store.Appender,
    model: Callable[[], Embedder],
    spec: ModelSpec,
    titles: dict[tuple[str, str], tuple[int, str]],
    stats: FillStats,
    should_stop: Callable[[], bool] | None,
    size: int,
) -> None:
    """Title members (and vectors for new title texts) for every conversation whose
    title has none or a changed one; one commit per batch, like records."""
    have = {
        (agent, sid): ckey
        for agent, sid, ckey in db.execute("SELECT agent, session_id, ckey FROM title_members")
    }
    todo = sorted(k for k, (ckey, _) in titles.items() if have.get(k) != ckey)
    for at in range(0, len(todo), size):
        if should_stop is not None and should_stop():
            stats.stopped = "interrupted"
            return
        batch = todo[at : at + size]
        distinct = sorted({titles[k][0] for k in batch})
        marks = ",".join("?" * len(distinct))
        sql = f"SELECT ckey FROM keys WHERE ckey IN ({marks})"
        known = {c for (c,) in db.execute(sql, distinct)}
        fresh = {titles[k][0]: titles[k][1][:MAX_CHARS] for k in batch if titles[k][0] not in known}
        first, new_keys = _embed_texts(appender, model, spec, fresh, stats)
        with _batch_commit(db, appender, first):
            db.executemany(
                "INSERT INTO keys (ckey, row) VALUES (?, ?)",
                ((ckey, first + n) for n, ckey in enumerate(new_keys)),
            )
            db.executemany(
                "INSERT OR REPLACE INTO title_members (agent, session_id, ckey) VALUES (?, ?, ?)",
                ((agent, sid, titles[(agent, sid)][0]) for agent, sid in batch),
            )
        stats.titles_done += len(batch)


def _embed_batch(
    db: sqlite3.Connection,
    appender: store.Appender,
    model: Callable[[], Embedder],
    spec: ModelSpec,
    batch: list[int],
    texts: dict[int, bytes],
    live: Live,
    stats: FillStats,
) -> None:
    """Members for ``batch`` and a vector for each text not stored yet, in one commit.

    A text longer than the model's window is cut into up to ``MAX_CHUNKS`` chunks;
    its vector is the normalized mean of theirs (one vector per text keeps the
    store small: bench/bench_semantic.py)."""
    keys = {rid: store.content_key(spec.id, texts.get(rid, b"")) for rid in batch}
    distinct = sorted(set(keys.values()))
    marks = ",".join("?" * len(distinct))
    #: content key -> the (thash, tlen) its key row holds (None, None: none)
    known: dict[int, tuple[int | None, int | None]] = {
        ckey: (thash, tlen)
        for ckey, thash, tlen in db.execute(
            f"SELECT ckey, thash, tlen FROM keys WHERE ckey IN ({marks})", distinct
        )
    }
    fresh: dict[int, str] = {}
    for rid in batch:
        ckey = keys[rid]
        if ckey in known:
            stats.reused += 1
        elif ckey not in fresh:
            raw = texts.get(rid, b"")[: MAX_CHARS * 4]
            fresh[ckey] = raw.decode("utf-8", "replace")[:MAX_CHARS]
    first, new_keys = _embed_texts(appender, model, spec, fresh, stats)
    with _batch_commit(db, appender, first):
        own = list(zip(live.thash_of(batch), live.tlen_of(batch), strict=True))
        origin = {keys[rid]: n for n, rid in enumerate(batch)}  # a record with that text
        for ckey in new_keys:
            known[ckey] = own[origin[ckey]]
        db.executemany(
            "INSERT INTO keys (ckey, row, thash, tlen) VALUES (?, ?, ?, ?)",
            ((ckey, first + n, *known[ckey]) for n, ckey in enumerate(new_keys)),
        )
        ckeys = [keys[rid] for rid in batch]
        db.executemany(
            store.INSERT_MEMBER,
            store.member_rows(batch, ckeys, own, (known[ckey] for ckey in ckeys)),
        )


@contextmanager
def _batch_commit(db: sqlite3.Connection, appender: store.Appender, first: int) -> Iterator[None]:
    """One batch's rows and the vectors appended from row ``first`` commit together: on
    any failure the transaction rolls back and the flat files are cut back to ``first``."""
    try:
        db.execute("BEGIN IMMEDIATE")
        yield
        store.set_meta(db, "rows", appender.rows)
        db.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        appender.rollback(first)
        raise


def drop_gone(index_root: Path) -> tuple[int, int]:
    """Drop members of records the index no longer holds and vectors no member holds
    (after ``forget`` or ``archive prune``); (members, vectors) dropped. Skipped (0, 0)
    when no vectors exist or a fill is running (its next pass drops them)."""
    folder = store.semantic_dir(index_root)
    gen = Location(index_root).current()
    if gen is None or not (folder / "vectors.db").is_file():
        return 0, 0
    lock = FillLock(folder)
    try:
        if not lock.acquire(wait=False):
            return 0, 0
        db = store.connect(folder, create=True)  # exists: adds tables newer than the store
        assert db is not None
        try:
            if store.get_meta(db, "generation") != gen.name:
                return 0, 0  # members of an older generation: the next fill remaps them
            index_db = open_reader_db(gen)
            try:
                index_db.execute("PRAGMA mmap_size=0")  # mapped pages read count in RSS
                live = Live.read(index_db)
                titles = live_titles(index_db, DEFAULT.id)
            finally:
                index_db.close()
            keys = {k: ckey for k, (ckey, _) in titles.items()}
            dropped = store.collect_garbage(db, live.rids, live.thash, keys)
            store.compact(folder, db, DEFAULT.dim)
            return dropped
        finally:
            db.close()
    finally:
        lock.close()


def _counts_only(gen: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Coverage with no vector store (the default): the eligible records and titles counted,
    not read (reading every record's row made a no-change `agentdex index --json` at 1 GB
    take 1.4-2.3 s)."""
    index_db = open_reader_db(gen)
    try:
        info["eligible"] = index_db.execute(
            f"SELECT count(*) FROM record_rows WHERE {ELIGIBLE}"
        ).fetchone()[0]
        info["titles"] = len(live_titles(index_db, DEFAULT.id))
    finally:
        index_db.close()
    return info


def coverage(index_root: Path) -> dict[str, Any]:
    """How much of the current generation is embedded (for ``doctor`` and ``index --json``)."""
    folder = store.semantic_dir(index_root)
    gen = Location(index_root).current()
    info: dict[str, Any] = {
        "eligible": 0,
        "embedded": 0,
        "titles": 0,
        "titles_embedded": 0,
        "vectors": 0,
        "bytes": 0,
    }
    if gen is None:
        return info
    db = store.connect(folder, create=False)
    if db is None:
        return _counts_only(gen, info)
    try:
        index_db = open_reader_db(gen)
        try:
            # arrays (a dict of 470k records took ~60 MB), and no mmap: every page of the
            # records read through it stayed in RSS, ~100 MB at 1 GB right after a fill
            index_db.execute("PRAGMA mmap_size=0")
            live = Live.read(index_db)
            titles = {k: ckey for k, (ckey, _) in live_titles(index_db, DEFAULT.id).items()}
        finally:
            index_db.close()
        info["eligible"] = len(live)
        info["titles"] = len(titles)
        try:
            if store.get_meta(db, "generation") == gen.name:
                mine = store.member_hashes(db)
                info["embedded"] = int(store.live_members(live.rids, live.thash, mine).sum())
            info["titles_embedded"] = sum(
                1
                for agent, sid, ckey in db.execute(
                    "SELECT agent, session_id, ckey FROM title_members"
                )
                if titles.get((agent, sid)) == ckey
            )
            info["vectors"] = db.execute("SELECT count(*) FROM keys").fetchone()[0]
            info["model"] = store.get_meta(db, "model")
        except sqlite3.DatabaseError as exc:
            info["error"] = f"vectors.db unreadable: {exc}"
    finally:
        db.close()
    info["bytes"] = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return info

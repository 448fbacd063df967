"""Incremental refresh: bring the stores in line with the agents' files on disk.

Discovery (or the manifest's list of changed files) says what to look at;
:mod:`.feed` plans and feeds each changed file, :mod:`.parallel` decides
where it is parsed. Files that are gone lose their records (or, with the
archive on, keep them as archived ones). Work is committed in batches at
file boundaries (:mod:`agentdex.index.writer`), so a killed refresh leaves
a consistent index that the next run continues.

The archive (:mod:`.archiving`) takes part at fixed points: every record
indexed is offered to it, a vanished file's records are kept as archived
ones instead of deleted, records of forgotten conversations are skipped,
and before the final commit what the sources no longer hold is re-imported
from it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentdex.catalogue import Coverage, StoreRow
from agentdex.discovery import Root, Source, observe
from agentdex.errors import CorruptError
from agentdex.index.coverage import BuildCoverage
from agentdex.index.files import FileRows, is_archived
from agentdex.index.lock import LockBusy, WriterLock
from agentdex.index.memory import limit_malloc_arenas
from agentdex.index.store import Location, OutdatedIndexError, text_bytes
from agentdex.ingest import events, manifest, usage_backfill
from agentdex.ingest.feed import Refresher, maybe_changed
from agentdex.ingest.firstbuild import FirstBuild
from agentdex.ingest.parallel import Progress, index_changed
from agentdex.ingest.stats import RefreshStats, raise_if_write_failure
from agentdex.paths import ensure_private_dir, private_files
from agentdex.readers import Diagnostics, is_read_failure

#: Rebuild when dead text exceeds this share of all text (and MIN_GARBAGE bytes).
GARBAGE_RATIO = 0.5
MIN_GARBAGE = 64 * 1024 * 1024
#: a refresh reading more than this waits for tantivy's segment merges before it ends
BIG_REFRESH_BYTES = 256 * 1024 * 1024


def _discover(home: str | None, rows: Iterable[StoreRow] | None) -> Any:
    from agentdex import discovery

    if rows is not None:
        return discovery.discover(home, rows=rows)
    configured = getattr(discovery, "discover_configured", None)
    if configured is not None:
        return configured(home)
    return discovery.discover(home)


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
    deadline: float | None = None,
) -> RefreshStats:
    """Refresh (or with ``full`` rebuild) the index; returns what was done.

    ``deadline``: seconds after which a big first build stops at a file
    boundary, committed (``stats.incomplete``; :mod:`.firstbuild`).

    ``wait=False`` returns at once with ``skipped_busy`` when another process
    is writing; a number waits that many seconds. ``known``: the changed
    store files the caller's manifest check found (re-checked under the lock).
    """
    from agentdex.index.store import index_root

    started = time.monotonic()
    stats = RefreshStats()
    location = Location(index_root(root))
    ensure_private_dir(location.root)
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

    until = None if deadline is None else started + deadline
    try:
        rows_list = list(rows) if rows is not None else None
        with private_files():  # index and archive files 0600 whatever the caller's umask
            _refresh_locked(location, stats, full, home, rows_list, progress, _warn, known, until)
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


class _Rebuild(Exception):
    """The index must be built anew in a new generation (the warning is given)."""


def _same_redaction(refresher: Refresher, redact: bool) -> bool:
    """Was the index built with this ``[privacy] redact`` setting? (A new one: it is now.)"""
    built = refresher.index.meta_int("redaction", -1)
    if built == -1:
        refresher.index.set_meta("redaction", int(redact))
        return True
    return built == int(redact)


def _open_refresher(
    location: Location,
    stats: RefreshStats,
    full: bool,
    warn: Callable[[str], None],
    deadline: float | None = None,
) -> tuple[Path, Refresher]:
    from agentdex.config import load_config

    config = load_config()
    archive, redact = config.archive, config.redact
    gen, first_build = _choose_generation(location, full)
    try:
        refresher = Refresher(gen, stats, Diagnostics(), archive=archive, redact=redact)
        if first_build:
            # marked as being built before readers see it: never taken for a complete index;
            # migrated: readers now see progress as it commits
            _start_first_build(refresher, location, gen)
        if not full and location.building() is None and refresher.archive.needs_text_move():
            refresher.close(False)
            warn(
                f"the archive in {gen.parent} keeps its own copy of each record's text; it now"
                " shares one copy with the index: rebuilding the index once to move it there"
            )
            raise _Rebuild
        if not _same_redaction(refresher, redact):
            refresher.close(False)
            warn(
                f"[privacy] redact is now {'true' if redact else 'false'} and the index in"
                f" {gen.parent} was built with it {'false' if redact else 'true'}; rebuilding it"
            )
            raise _Rebuild
    except (CorruptError, _Rebuild) as exc:
        if isinstance(exc, CorruptError):
            if exc.__cause__ is not None:
                raise_if_write_failure(exc.__cause__)  # could not write: not corrupt, no rebuild
            if isinstance(exc, OutdatedIndexError):
                warn(f"{exc.message}; rebuilding it in the new format")
            else:
                warn(f"{exc.message}; rebuilding the index")
        gen = location.new_generation()
        location.set_building(gen)
        stats.rebuilt = True
        refresher = Refresher(gen, stats, Diagnostics(), archive=archive, redact=redact)
        _same_redaction(refresher, redact)
    if deadline is not None and not full and location.building() == gen:
        # A command that answers by a deadline (search, usage) cannot wait for a whole
        # rebuild (20 minutes for 1 GB), and the old generation is unreadable (another
        # format, corrupt) or must not be read (another redaction setting): the new one
        # becomes a first build, current at once (newest first, committed early, stopped at
        # the deadline and finished in the background; readers see its coverage).
        stats.rebuilt = True
        _start_first_build(refresher, location, gen)
        events.emit(events.Event("rebuilt", generation=gen.name, root=str(location.root)))
    return gen, refresher


def _start_first_build(refresher: Refresher, location: Location, gen: Path) -> None:
    """Mark ``gen`` as being built before readers see it, then make it current."""
    refresher.first_build = True
    refresher.index.set_coverage(BuildCoverage())
    refresher.index.commit()
    location.set_current(gen)


def _refresh_locked(
    location: Location,
    stats: RefreshStats,
    full: bool,
    home: str | None,
    rows: list[StoreRow] | None,
    progress: Progress | None,
    warn: Callable[[str], None],
    known: manifest.Changes | None = None,
    deadline: float | None = None,
) -> None:
    limit_malloc_arenas()
    # checked before anything is written: the files an agent appended to since the last refresh
    if rows is not None or full:
        known = None
    elif known is None or not manifest.still_current(location.root, known):
        known = manifest.changed_sources(location.root, home)
    try:
        gen, refresher = _open_refresher(location, stats, full, warn, deadline)
    except (OSError, sqlite3.OperationalError, ValueError) as exc:
        raise_if_write_failure(exc)
        raise
    if location.building() == gen:
        stats.rebuilt = True
    if stats.rebuilt or usage_backfill.pending(refresher):
        known = None  # a backfill reads every file discovery finds
    stats.generation = gen.name
    manifest.discard(location.root)
    ok = rebuild_first = False
    try:
        refresher.archive.start()
        with observe.recording() as notes:
            found = _run(refresher, home, rows, progress, warn, known, deadline)
        if stats.incomplete:  # the rest (and the archive's re-import) comes next time
            refresher.index.finish(big=False)
        else:
            if rows is None and usage_backfill.pending(refresher):
                usage_backfill.backfill(refresher, found, _indexable)
            if refresher.first is not None:
                refresher.first.complete(refresher.index)
            refresher.archive.finish()
            # a new generation's build (or the end of a first build) merges its postings
            # into one tantivy segment: a term-set count costs per segment (index/merging)
            refresher.index.finish(
                big=stats.bytes_parsed >= BIG_REFRESH_BYTES,
                merge=stats.rebuilt or refresher.first is not None,
            )
        ok = True
    except _RebuildFirst:
        rebuild_first = True  # nothing written yet: the rollback leaves the index as it was
    except (OSError, sqlite3.OperationalError, ValueError) as exc:
        raise_if_write_failure(exc)
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
        events.emit(events.Event("rebuilt", generation=gen.name, root=str(location.root)))
    location.remove_stale()
    complete = not stats.incomplete and not stats.files_failed
    if rows is None and complete and not _has_unreadable(refresher.diagnostics):
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
    total, dead = text_bytes(gen)
    return dead > MIN_GARBAGE and dead > GARBAGE_RATIO * total


def _run(
    refresher: Refresher,
    home: str | None,
    rows: list[StoreRow] | None,
    progress: Progress | None,
    warn: Callable[[str], None],
    known: manifest.Changes | None = None,
    deadline: float | None = None,
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
    changed = [s for s in sources if maybe_changed(refresher, s)]
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
    if known is None and (refresher.first_build or refresher.index.coverage() is not None):
        refresher.first = FirstBuild(refresher.index, sources, changed, deadline)
        changed = refresher.first.order(changed)
    index_changed(refresher, changed, progress)
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

"""Index access for the library API: refresh it, open a read snapshot, report its status.

:func:`reader` is the one way the other API modules open the current index
generation: an :class:`~agentdex.search.engine.Engine` inside one read
transaction (a consistent WAL snapshot).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.errors import CorruptError
from agentdex.paths import ensure_private_dir, open_private

if TYPE_CHECKING:
    from agentdex.catalogue import StoreRow
    from agentdex.ingest.manifest import Changes
    from agentdex.ingest.stats import RefreshStats
    from agentdex.search.engine import Engine


def refresh(
    root: str | os.PathLike[str] | None = None,
    *,
    home: str | None = None,
    full: bool = False,
    wait: bool | float = True,
    progress: Callable[[int, int, int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
    rows: Iterable[StoreRow] | None = None,
    known: Changes | None = None,
    deadline: float | None = None,
) -> RefreshStats:
    """Bring the index up to date (``full``: rebuild from scratch).

    ``deadline``: seconds after which a big first build stops, committed, with
    ``incomplete`` set (:mod:`agentdex.ingest.firstbuild`).

    ``known``: the changed store files a check already found (it is not run
    again; the refresh still re-validates them under the writer lock).

    The index is ``home``'s own (:func:`agentdex.index.store.index_root`).
    Afterwards the set of project dirs seen is written to
    ``<data dir>/homes/<home key>/projects.json``, which discovery reads to
    find per-project stores (Aider). When that set grew, one more (cheap:
    unchanged files cost a stat) refresh picks up the stores it reveals.
    """
    fast = None
    if known is None and not full and rows is None:
        fast, known = _check(root, home)
    if fast is not None:
        return fast
    from agentdex.index.store import index_root
    from agentdex.ingest.refresh import refresh as _refresh

    root = index_root(root, home=home)
    stats = _refresh(
        root,
        home=home,
        full=full,
        wait=wait,
        progress=progress,
        warn=warn,
        rows=rows,
        known=known,
        deadline=deadline,
    )
    changed = stats.records_added or stats.records_removed or stats.rebuilt
    if rows is None and changed and not stats.incomplete and _write_known_projects(root, home):
        again = _refresh(root, home=home, wait=wait, warn=warn)
        stats.files_parsed += again.files_parsed
        stats.records_added += again.records_added
        stats.bytes_parsed += again.bytes_parsed
    return stats


def _check(
    root: str | os.PathLike[str] | None, home: str | None
) -> tuple[RefreshStats | None, Changes | None]:
    """The manifest's one pass (:mod:`agentdex.ingest.manifest`): the stats of a
    no-change refresh when the fast path applies, else the changed store files
    when they are all there is to read."""
    import time

    from agentdex.index.store import Location, index_root
    from agentdex.ingest.manifest import check
    from agentdex.ingest.stats import RefreshStats

    started = time.monotonic()
    location = Location(index_root(root, home=home))
    files, known = check(location.root, home)
    if files is None:
        return None, known
    current = location.current()
    stats = RefreshStats(
        generation=current.name if current else "",
        files_seen=files,
        files_unchanged=files,
        fast_path=True,
        seconds=round(time.monotonic() - started, 4),
    )
    return stats, None


def _write_known_projects(root: str | os.PathLike[str] | None, home: str | None) -> bool:
    """Write the indexed project dirs to ``projects.json``; True when new ones appeared."""
    import orjson

    from agentdex.paths import home_data_dir

    with reader(root, home) as engine:
        if engine is None:
            return False
        rows = engine.db.execute(
            "SELECT DISTINCT project FROM contexts WHERE project IS NOT NULL"
        ).fetchall()
    projects = sorted({p for (p,) in rows if isinstance(p, str) and os.path.isabs(p)})
    target = home_data_dir(home) / "projects.json"
    try:
        before = set(orjson.loads(target.read_bytes()))
    except (OSError, orjson.JSONDecodeError, TypeError):
        before = set()
    if set(projects) == before:
        return False
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    try:
        ensure_private_dir(target.parent)
        with open_private(tmp) as out:
            out.write(orjson.dumps(projects))
        os.replace(tmp, target)
    except OSError:
        with suppress(OSError):
            tmp.unlink()
        return False
    return bool(set(projects) - before)


@contextmanager
def reader(root: str | os.PathLike[str] | None, home: str | None = None) -> Iterator[Engine | None]:
    """An engine over ``home``'s current generation in one read snapshot (None: no index)."""
    from agentdex.index.store import Location, index_root, open_reader_db
    from agentdex.search.engine import Engine

    location = Location(index_root(root, home=home))
    gen = location.current()
    if gen is None or not (gen / "index.db").exists():
        yield None
        return
    db = open_reader_db(gen)
    engine: Engine | None = None
    try:
        db.execute("BEGIN")
        try:
            engine = Engine(db, gen)
            yield engine
        except sqlite3.DatabaseError as exc:
            raise CorruptError(
                f"index is corrupt ({exc}); run `agentdex index --full` to rebuild it"
            ) from exc
    finally:
        if engine is not None:
            engine.close()
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        db.close()


def maybe_refresh(
    do_refresh: bool,
    root: Any,
    home: str | None,
    rows: Iterable[StoreRow] | None,
    stats: dict[str, Any],
    progress: Callable[[int, int, int, int], None] | None = None,
    known: Changes | None = None,
) -> None:
    if not do_refresh:
        return
    from agentdex.ingest.stats import DiskFullError

    try:
        done = refresh(
            root,
            home=home,
            wait=False,
            rows=rows,
            progress=progress,
            known=known,
            deadline=first_answer_seconds(),
        )
    except DiskFullError as exc:
        from agentdex.index.store import Location, index_root

        if Location(index_root(root, home=home)).current() is None:
            raise  # no index to fall back on: the search cannot run
        # the refresh stopped at its last commit: search that, and say so
        stats["refresh"] = "failed: disk full"
        stats["warnings"] = [f"{exc.message}; searched the index as it is"]
        return
    if done.skipped_busy:
        stats["refresh"] = "skipped: another agentdex process is indexing"
    else:
        stats["refresh"] = {
            "seconds": done.seconds,
            "files_parsed": done.files_parsed + done.files_resumed,
            "files_removed": done.files_removed,
            "records_added": done.records_added,
        }
        if done.warnings:
            stats["warnings"] = done.warnings
        if done.incomplete:
            stats["refresh"]["incomplete"] = True
            stats["refresh"]["background_pid"] = continue_in_background(root, home)


#: a search on an index still being built answers after this many seconds of building
FIRST_ANSWER_SECONDS = 5.0


def first_answer_seconds() -> float:
    """How long a search builds a new index before it answers from the newest history
    (``AGENTDEX_FIRST_ANSWER_SECONDS``, default ``FIRST_ANSWER_SECONDS``)."""
    setting = os.environ.get("AGENTDEX_FIRST_ANSWER_SECONDS", "")
    try:
        return max(0.0, float(setting)) if setting else FIRST_ANSWER_SECONDS
    except ValueError:
        return FIRST_ANSWER_SECONDS


def continue_in_background(root: Any, home: str | None) -> int | None:
    """Finish an incomplete build in a detached process (its pid; None when
    ``AGENTDEX_BACKGROUND_BUILD=0`` or it could not start): the answer does not wait."""
    if os.environ.get("AGENTDEX_BACKGROUND_BUILD", "1") == "0":
        return None
    import subprocess
    import sys

    from agentdex.index.store import index_root

    command = [sys.executable, "-m", "agentdex.ingest.background", str(index_root(root, home=home))]
    if home is not None:
        command.append(home)
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return None
    return process.pid


def read_failures(
    root: str | os.PathLike[str] | None = None, *, home: str | None = None
) -> dict[str, dict[str, Any]]:
    """Files whose last index read failed (locked, busy, I/O): path -> {message, at}.

    Each is retried by the next index, which clears its entry when it reads.
    """
    import orjson

    from agentdex.index.files import READ_ERROR_KEY
    from agentdex.records import iso_utc

    failures: dict[str, dict[str, Any]] = {}
    with reader(root, home) as engine:
        if engine is None:
            return failures
        rows = engine.db.execute(
            "SELECT key, value FROM meta WHERE key >= ? AND key < ?",
            (READ_ERROR_KEY, READ_ERROR_KEY[:-1] + chr(ord(READ_ERROR_KEY[-1]) + 1)),
        ).fetchall()
    for key, value in rows:
        note = orjson.loads(value)
        failures[key[len(READ_ERROR_KEY) :]] = {
            "message": note.get("message"),
            "at": iso_utc(note.get("at")),
        }
    return failures


def index_status(
    root: str | os.PathLike[str] | None = None, *, home: str | None = None
) -> dict[str, Any]:
    """Counts and location of ``home``'s current index (for ``agentdex index --json``)."""
    from agentdex.index.store import Location, index_root
    from agentdex.paths import home_dir

    location = Location(index_root(root, home=home))
    gen = location.current()
    info: dict[str, Any] = {
        "path": str(location.root),
        "home": str(home_dir(home)),
        "generation": gen.name if gen else None,
    }
    if gen is None:
        return info
    with reader(location.root) as engine:
        if engine is None:
            return info
        db = engine.db
        info["files"] = db.execute("SELECT count(*) FROM files").fetchone()[0]
        info["records"] = db.execute("SELECT count(*) FROM record_rows").fetchone()[0]
        info["blocks"] = engine.n_blocks
    info["bytes"] = sum(p.stat().st_size for p in Path(gen).rglob("*") if p.is_file())
    return info

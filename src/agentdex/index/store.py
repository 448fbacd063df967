"""Where the index lives and how it is opened: generations, pragmas, corruption checks.

Layout under the index dir (one per home: :func:`index_root`)::

    writer.lock          flock'd by the one writer
    CURRENT              name of the generation readers use
    BUILDING             name of a full rebuild in progress (resumed if interrupted)
    gen-000001/index.db  SQLite (WAL): files, records, text blocks, titles (the truth)
    gen-000001/postings/ tantivy: per-record postings (:mod:`agentdex.index.postings`)
    gen-000001/vocab.txt the postings' term list (and vocab-delta.txt)

A full rebuild (``--full``, compaction, or a corrupt index) writes a new
generation and switches ``CURRENT`` atomically when it is complete; readers
of the old one keep their open files.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from agentdex.errors import CorruptError
from agentdex.index.schema import migrate

FORMAT = "agentdex-index-6"  # 3: tantivy postings replace block signatures; 4: secrets masked;
# 5: smaller record rows and postings; 6: record rows' locator and time packed
#: why an index of an older format is rebuilt, said in the rebuild's warning
FORMAT_CHANGES = {
    4: "secrets in transcripts are now masked as [REDACTED:<kind>] ([privacy] redact)",
    5: "a smaller index (records' role and kind stored as one number; record ids and times"
    " no longer in the term index)",
    6: "a smaller index (records' locators and times stored in fewer bytes)",
}


class OutdatedIndexError(CorruptError):
    """The index was written by an older agentdex; it is rebuilt, never read."""


def index_root(
    path: str | os.PathLike[str] | None = None, *, home: str | os.PathLike[str] | None = None
) -> Path:
    """The index dir of ``home`` (default ``$HOME``): one index per home.

    ``path`` wins when given. Otherwise ``<[index] path>/<home key>`` when the
    config sets ``[index] path``, else ``<data dir>/homes/<home key>/index``
    (:func:`agentdex.paths.home_key`), so ``--home`` never touches another
    home's index.
    """
    if path is not None:
        return Path(path).expanduser().absolute()
    from agentdex.config import load_config
    from agentdex.paths import home_data_dir, home_key

    configured = load_config().index_path
    if configured is not None:
        return configured.expanduser().absolute() / home_key(home)
    return home_data_dir(home) / "index"


class Location:
    """An index's folder: its generations and the pointers to them (``CURRENT``, ``BUILDING``).

    A plain class, not a frozen dataclass (~1 ms to create in every fresh search);
    equal and hashed by ``root`` all the same."""

    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Location(root={self.root!r})"

    @property
    def lock_path(self) -> Path:
        return self.root / "writer.lock"

    def _read_pointer(self, name: str) -> Path | None:
        try:
            value = (self.root / name).read_text().strip()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise CorruptError(f"cannot read {self.root / name}: {exc}") from exc
        if not value.startswith("gen-") or "/" in value:
            return None
        path = self.root / value
        return path if path.is_dir() else None

    def current(self) -> Path | None:
        return self._read_pointer("CURRENT")

    def building(self) -> Path | None:
        return self._read_pointer("BUILDING")

    def _write_pointer(self, name: str, gen: Path) -> None:
        tmp = self.root / f".{name}.tmp"
        tmp.write_text(gen.name + "\n")
        os.replace(tmp, self.root / name)

    def set_current(self, gen: Path) -> None:
        self._write_pointer("CURRENT", gen)
        (self.root / "BUILDING").unlink(missing_ok=True)

    def set_building(self, gen: Path) -> None:
        self._write_pointer("BUILDING", gen)

    def new_generation(self) -> Path:
        numbers = [int(p.name[4:]) for p in self.root.glob("gen-*") if p.name[4:].isdigit()]
        gen = self.root / f"gen-{max(numbers, default=0) + 1:06d}"
        gen.mkdir(mode=0o700)
        return gen

    def remove_stale(self) -> None:
        """Delete generations that are neither current nor being built (writer only)."""
        keep = {p for p in (self.current(), self.building()) if p is not None}
        for gen in self.root.glob("gen-*"):
            if gen not in keep:
                import shutil

                shutil.rmtree(gen, ignore_errors=True)


def connect(gen: Path, *, mmap: bool = True) -> sqlite3.Connection:
    """Open a generation's SQLite; ``mmap`` for readers (the writer's pages would count as RSS).

    Default 4 KiB pages: the text lives in ``text.blocks``, rows are small, and
    an empty index stays a few pages.
    """
    db = sqlite3.connect(gen / "index.db", timeout=30.0, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA cache_size=-16000")
    db.execute(f"PRAGMA mmap_size={268435456 if mmap else 0}")
    return db


def open_writer_db(gen: Path) -> sqlite3.Connection:
    """Open (creating and migrating) a generation for writing; CorruptError if unreadable.

    The format is checked before any migration runs, so an index written by
    another version is never changed in place (it is rebuilt in a new generation).
    """
    try:
        db = connect(gen, mmap=False)
        has_meta = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        fmt = (
            db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if has_meta
            else None
        )
        if has_meta and fmt is not None and fmt[0] != FORMAT:
            db.close()
            raise _format_error(gen, fmt[0])
        migrate(db)
        if fmt is None:
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?)", (FORMAT,))
        return db
    except sqlite3.DatabaseError as exc:
        raise CorruptError(f"index database {gen / 'index.db'} is unreadable: {exc}") from exc


def text_bytes(gen: Path) -> tuple[int, int]:
    """A generation's text bytes written, and how many of them belong to deleted records."""
    db = sqlite3.connect(gen / "index.db")
    try:
        values = dict(db.execute("SELECT key, value FROM meta").fetchall())
    finally:
        db.close()
    return int(values.get("text_bytes", 0) or 0), int(values.get("dead_bytes", 0) or 0)


REBUILD_HINT = "; run `agentdex index --full` (or any refresh) to rebuild it"


def open_reader_db(gen: Path) -> sqlite3.Connection:
    """Open a generation for reading (no migration); CorruptError if it is not an index."""
    try:
        db = connect(gen)
        db.execute("PRAGMA query_only=1")
        fmt = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if fmt is None:
            raise CorruptError(f"{gen / 'index.db'} is not an agentdex index{REBUILD_HINT}")
        if fmt[0] != FORMAT:
            raise _format_error(gen, fmt[0])
        if not (gen / "postings" / "meta.json").is_file():
            covered = db.execute("SELECT value FROM meta WHERE key = 'postings_rid'").fetchone()
            if covered is not None and int(covered[0]) > 1:
                raise CorruptError(f"{gen / 'postings'} is missing{REBUILD_HINT}")
        return db
    except CorruptError as exc:
        if REBUILD_HINT not in exc.message:
            raise CorruptError(exc.message + REBUILD_HINT) from exc
        raise
    except sqlite3.DatabaseError as exc:
        raise CorruptError(
            f"index database {gen / 'index.db'} is unreadable: {exc}{REBUILD_HINT}"
        ) from exc


def _format_version(name: str) -> int:
    prefix = "agentdex-index-"
    tail = name[len(prefix) :] if name.startswith(prefix) else ""
    return int(tail) if tail.isdigit() else -1


def _format_error(gen: Path, found: str) -> CorruptError:
    if 0 <= _format_version(found) < _format_version(FORMAT):
        changes = [
            why
            for version, why in sorted(FORMAT_CHANGES.items())
            if version > _format_version(found)
        ]
        return OutdatedIndexError(
            f"the index in {gen.parent} was written by an older agentdex ({found}, now {FORMAT}"
            + (f": {'; '.join(changes)}" if changes else "")
            + ")"
        )
    return CorruptError(f"{gen}: unknown index format {found!r}")

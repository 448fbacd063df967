"""One copy of a record's text: archive entries that point at the index's text blocks.

The index stores every record's text in its generation's ``text.blocks``
(16 KiB blocks of the original text, with a dictionary in the same file;
:mod:`agentdex.index.segments`). The archive used to compress and store the
same text again in its chunks. Now an entry whose record the index holds
points at that block instead (``entries.text_chunk`` negative: minus a
row of the archive's ``blocks`` table; ``entries.text_start``: the
record's position in the block), and only text no index block holds (an
earlier state of a record the sources no longer have) lives in the
archive's own chunks.

The archive never depends on a generation that may be rebuilt or deleted:

* it keeps its own **hard link** to the generation's ``text.blocks`` in its
  folder (:func:`link_name`), so deleting the generation leaves the bytes
  the archive uses on disk;
* it keeps its own copy of the rows of the blocks it points at (offsets,
  sizes, where each record starts), so nothing is read from the
  generation's ``index.db``.

After a rebuild the entries of records the new generation holds point at
its blocks (:meth:`agentdex.archive.writer.ArchiveWriter.offer` moves them);
the rest get their text copied into chunks and the old link goes
(:meth:`agentdex.archive.writer.ArchiveWriter.release_other_files`).
"""

from __future__ import annotations

import os
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from agentdex.errors import CorruptError
from agentdex.index import codec
from agentdex.index.segments import (
    BLOCK_FILE,
    Block,
    dictionary_ref,
    read_dictionary,
    unpack_starts,
)

if TYPE_CHECKING:
    from agentdex.archive.rewrite import Transform
    from agentdex.archive.store import ArchiveStore

#: link files in the archive folder: ``text-<generation>-<inode>.blocks``
LINK_GLOB = "text-*.blocks"
BLOCK_CACHE = 8

_BLOCK_COLUMNS = "file, offset, lower_size, original_size, count, lower_starts, original_starts"


def link_name(gen: Path) -> str | None:
    """The archive's name for a generation's text file (None: it has none yet)."""
    try:
        inode = os.stat(gen / BLOCK_FILE).st_ino
    except OSError:
        return None
    return f"text-{gen.name}-{inode}.blocks"


def link(archive_dir: Path, gen: Path) -> str | None:
    """Hard-link the generation's text file into the archive folder; its name there, or None
    when no link can be made (another file system, no hard links: the archive then keeps
    its own copy of each text, as before)."""
    name = link_name(gen)
    if name is None:
        return None
    target = archive_dir / name
    try:
        os.link(gen / BLOCK_FILE, target)
    except FileExistsError:
        try:
            same = os.stat(target).st_ino == os.stat(gen / BLOCK_FILE).st_ino
        except OSError:
            return None
        return name if same else None
    except OSError:
        return None
    return name


def earlier_names(archive_dir: Path, gen: Path, name: str) -> list[str]:
    """Links in the archive folder that are the generation's text file under an earlier
    name than ``name``: the data directory was copied or restored with its hard links
    (``cp -a``, ``rsync -aH``, a backup), which gives the file a new inode, and the name
    holds the inode. (A copy that broke the link holds other bytes on disk: not listed.)"""
    current = gen / BLOCK_FILE
    found = []
    for path in archive_dir.glob(f"text-{gen.name}-*.blocks"):
        if path.name == name:
            continue
        try:
            if os.path.samefile(path, current):
                found.append(path.name)
        except OSError:
            continue
    return sorted(found)


def referenced_end(root: Path, gen: Path) -> int:
    """How far into the generation's text file the archive's blocks reach (0: none).

    The archive commits just before the index (:mod:`agentdex.ingest.archiving`): a writer
    killed between the two commits leaves blocks the archive points at past the end the
    index committed. The next index writer keeps them (it would cut the file there)."""
    from agentdex.archive.store import DB_NAME, archive_path

    name = link_name(gen)
    path = archive_path(root) / DB_NAME
    if name is None or not path.is_file():
        return 0
    names = [name, *earlier_names(path.parent, gen, name)]
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error:
        return 0
    try:
        row = db.execute(
            "SELECT max(offset + lower_size + original_size) FROM blocks"
            f" WHERE file IN ({', '.join('?' * len(names))})",
            names,
        ).fetchone()
        return int(row[0] or 0)
    except sqlite3.Error:
        return 0  # an archive from before the blocks table: it points at none
    finally:
        db.close()


class SharedBlocks:
    """Reads the index text blocks an archive's entries point at, through its links."""

    def __init__(self, directory: Path, db: sqlite3.Connection) -> None:
        self.dir = directory
        self.db = db
        self._fds: dict[str, int] = {}
        self._cache: OrderedDict[int, Block] = OrderedDict()
        self._dictionaries: dict[str, dict[tuple[int, int], codec.Dictionary]] = {}

    def open_listed(self) -> None:
        """Open every link the database (in the caller's read snapshot) lists, so a writer
        that releases one later cannot take it from under this reader."""
        try:
            names = [str(r[0]) for r in self.db.execute("SELECT DISTINCT file FROM blocks")]
        except sqlite3.OperationalError:
            return  # not migrated yet: no shared blocks
        for name in names:
            self._fd(name)

    def _fd(self, name: str) -> int:
        fd = self._fds.get(name)
        if fd is None:
            try:
                fd = self._fds[name] = os.open(self.dir / name, os.O_RDONLY)
            except FileNotFoundError as exc:
                from agentdex.archive.store import ArchiveCorruptError

                raise ArchiveCorruptError(f"{self.dir / name} is missing") from exc
        return fd

    def block(self, block_id: int) -> Block:
        cached = self._cache.get(block_id)
        if cached is not None:
            self._cache.move_to_end(block_id)
            return cached
        from agentdex.archive.store import ArchiveCorruptError

        row = self.db.execute(
            f"SELECT {_BLOCK_COLUMNS} FROM blocks WHERE id = ?", (block_id,)
        ).fetchone()
        if row is None:
            raise ArchiveCorruptError(f"archive text block {block_id} is not listed")
        name, offset, lower_size, original_size, count, lower_raw, original_raw = row
        data = os.pread(self._fd(str(name)), lower_size + original_size, offset)
        if len(data) != lower_size + original_size:
            raise ArchiveCorruptError(f"archive text block {block_id} is cut short in {name}")
        lower_starts = unpack_starts(lower_raw, int(count))
        original_starts = unpack_starts(original_raw, int(count))
        original = data[lower_size:]
        ref = dictionary_ref(original)
        block = Block(
            block_id,
            0,
            int(count),
            data[:lower_size],
            lower_starts,
            original,
            original_starts,
            dictionary=None if ref is None else self._dictionary(str(name), *ref),
        )
        self._cache[block_id] = block
        while len(self._cache) > BLOCK_CACHE:
            self._cache.popitem(last=False)
        return block

    def _dictionary(self, name: str, offset: int, size: int) -> codec.Dictionary:
        """The dictionary a block of the link ``name`` was packed with (the index wrote it
        into the same file: :mod:`agentdex.index.segments`)."""
        from agentdex.archive.store import ArchiveCorruptError

        fd = self._fd(name)
        cache = self._dictionaries.setdefault(name, {})
        try:
            return read_dictionary(cache, lambda at, n: os.pread(fd, n, at), offset, size)
        except CorruptError as exc:
            raise ArchiveCorruptError(f"archive text dictionary is cut short in {name}") from exc

    def text(self, block_id: int, position: int) -> str:
        """The original text of the record at ``position`` in the block."""
        from agentdex.archive.store import ArchiveCorruptError

        block = self.block(block_id)
        if not 0 <= position < block.count:
            raise ArchiveCorruptError(f"archive text block {block_id} has no record {position}")
        try:
            return block.original_text(position)
        except (CorruptError, ValueError, OSError) as exc:
            raise ArchiveCorruptError(f"archive text block {block_id} is damaged") from exc
        except Exception as exc:  # zstandard.ZstdError, zlib.error
            raise ArchiveCorruptError(f"archive text block {block_id} is damaged") from exc

    def forget_cache(self) -> None:
        self._cache.clear()

    def release(self, names: set[str]) -> None:
        """Close the links ``names`` (the writer is about to delete them)."""
        for name in names:
            fd = self._fds.pop(name, None)
            if fd is not None:
                os.close(fd)
            self._dictionaries.pop(name, None)
        self._cache.clear()

    def unreferenced_links(self) -> list[Path]:
        """Link files no block row names (a release killed before it deleted them)."""
        try:
            names = {str(r[0]) for r in self.db.execute("SELECT DISTINCT file FROM blocks")}
        except sqlite3.OperationalError:
            names = set()
        return [p for p in self.dir.glob(LINK_GLOB) if p.name not in names]

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._cache.clear()
        self._dictionaries.clear()


def move_into_chunks(
    store: ArchiveStore, files: list[str], transform: Transform | None = None
) -> int:
    """Copy the texts of the entries that point into ``files`` (link names) into new text
    chunks of the archive and point the entries there; forget those files' block rows.
    Inside the caller's transaction, which must :meth:`ArchiveStore.sync` before it
    commits and then :func:`drop_links`. ``transform(kind, text)`` may change each text
    (the entries it changed are added to ``store.transformed``). How many entries moved."""
    from agentdex.archive.store import CHUNK_BYTES, TEXT

    if not files:
        return 0
    marks = ",".join("?" * len(files))
    moved = 0
    last = -1
    parts: list[bytes] = []
    placed: list[tuple[int, int, int]] = []  # (entry id, start, size) in the open chunk
    size = 0

    def seal() -> None:
        nonlocal parts, placed, size
        if parts:
            chunk_id = store.append_chunk(TEXT, b"".join(parts))
            store.db.executemany(
                "UPDATE entries SET text_chunk = ?, text_start = ?, text_size = ? WHERE id = ?",
                [(chunk_id, start, length, entry_id) for entry_id, start, length in placed],
            )
        parts, placed, size = [], [], 0

    while True:
        rows = store.db.execute(
            "SELECT id, -text_chunk, text_start FROM entries WHERE text_chunk IN"
            f" (SELECT -id FROM blocks WHERE file IN ({marks})) AND id > ?"
            " ORDER BY id LIMIT 2000",
            (*files, last),
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        for entry_id, block, position in rows:
            text = store.shared.text(int(block), int(position)).encode("utf-8", "surrogatepass")
            if transform is not None:
                changed = transform(TEXT, text)
                if changed is not None and changed != text:
                    store.transformed.add(int(entry_id))
                    text = changed
            placed.append((int(entry_id), size, len(text)))
            parts.append(text)
            size += len(text)
            moved += 1
            if size >= CHUNK_BYTES:
                seal()
    seal()
    store.db.execute(f"DELETE FROM blocks WHERE file IN ({marks})", files)
    return moved


def drop_links(store: ArchiveStore) -> None:
    """Delete the link files no block row names any more (after the commit that forgot
    them: their bytes leave the disk with the generation that wrote them)."""
    stale = store.shared.unreferenced_links()
    store.shared.release({p.name for p in stale})
    for path in stale:
        path.unlink(missing_ok=True)

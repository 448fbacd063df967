"""Text blocks decompressed beside a verification, on a helper thread.

Verifying a query's candidates (:meth:`agentdex.search.run.SearchRun._whole`)
reads them in block order, and most of its time is each block's zstd
decompression (one block a candidate, mostly: at 1 GB a query of common words
verifies 400-900 candidates in about as many blocks). zstd lets go of the
interpreter lock, so a helper thread decompresses every other block of the
list (:data:`STRIDE`) on the other core while the search thread reads the rest
itself and checks their records. The helper stays at most :data:`WINDOW`
blocks ahead of the block the search last asked for (decompressed blocks it
holds are bounded), never touches SQLite (the search thread reads the blocks'
rows up front, in one statement per 900), and stops when the verification
ends (:meth:`ReadAhead.close`, also on an exception).

What the search thread gets is what :func:`agentdex.index.segments.load_block`
would have given it, at the same moment of the search: a block the helper
could not read is read by the search thread itself, so a corrupt block
raises there, as before; a block it never asks for is dropped.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from typing import Any

from agentdex.index.segments import LOAD_ROW, Block, BlockFile, block_from_row

#: blocks decompressed ahead of the one the search thread last took (each ~20-40 KB)
WINDOW = 16
#: the helper reads one block in this many (the search thread the others)
STRIDE = 2
#: fewer blocks than this to verify are read in the search thread alone
AT_LEAST = 24

_CHUNK = 900


class ReadAhead:
    """Blocks ``block_ids`` (in the order they will be asked for) read on a helper thread."""

    def __init__(self, db: sqlite3.Connection, file: BlockFile, block_ids: Iterable[int]) -> None:
        order = list(dict.fromkeys(block_ids))
        rows: dict[int, tuple[Any, ...]] = {}
        for at in range(0, len(order), _CHUNK):
            part = order[at : at + _CHUNK]
            marks = ",".join("?" * len(part))
            for row in db.execute(f"SELECT {LOAD_ROW} FROM blocks WHERE id IN ({marks})", part):
                rows[row[0]] = row
        self._order = [block_id for block_id in order if block_id in rows]
        self._rows = rows
        self._position = {block_id: i for i, block_id in enumerate(self._order)}
        self._file = file
        #: position of the next block the search thread may ask for (those before are done)
        self._taken = 0
        self._ready: dict[int, Block] = {}
        #: positions the helper is done with (read, failed or passed)
        self._finished = 0
        self._stopped = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="agentdex-blocks", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        for position, block_id in enumerate(self._order):
            if position % STRIDE != STRIDE - 1:
                continue  # the search thread's
            with self._changed:
                while not self._stopped and position - self._taken >= WINDOW:
                    self._changed.wait()
                if self._stopped:
                    return
                if position < self._taken:
                    self._finished = position + 1
                    continue  # the search went past it without asking
            try:
                block = block_from_row(self._file, self._rows[block_id])
                block.lower_record(0)  # decompressed (and cut) here, outside the lock
            except Exception:  # the search thread reads it again and gets the error itself
                block = None
            with self._changed:
                if block is not None and position >= self._taken:
                    self._ready[block_id] = block
                self._finished = position + 1
                self._changed.notify_all()

    def take(self, block_id: int) -> Block | None:
        """Block ``block_id``: the helper's once it has it, the search thread's share read
        here from its row; None when the caller reads it itself (not in the list, already
        taken or passed, or the helper could not read it)."""
        position = self._position.get(block_id)
        if position is None:
            return None
        helpers = position % STRIDE == STRIDE - 1
        with self._changed:
            if position < self._taken:
                return None
            self._taken = position  # the blocks before it will not be asked for
            for passed in [b for b in self._ready if self._position[b] < position]:
                del self._ready[passed]
            self._changed.notify_all()
            if helpers:
                # until the helper is done with it (a block it failed on is not in ``_ready``)
                while self._finished <= position and self._thread.is_alive():
                    self._changed.wait(0.05)
                block = self._ready.pop(block_id, None)
                self._taken = position + 1
                self._changed.notify_all()
                return block
        return block_from_row(self._file, self._rows[block_id])  # outside the lock

    def close(self) -> None:
        """Stop the helper and wait for it (it may be mid-block: at most one block)."""
        with self._changed:
            self._stopped = True
            self._ready.clear()
            self._changed.notify_all()
        self._thread.join()

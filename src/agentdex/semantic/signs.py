"""The prefilter's sign bits, derived from the 4-bit vectors instead of stored.

One bit a dimension, set where the stored 4-bit value ``q`` is above 0 (a
value that rounded to 0 counts as not positive). Derived rather than stored:
they were 48 of the 300 bytes a text took on disk (issue 20's size target,
docs/performance.md), and deriving them for 470,904 vectors takes ~0.2 s,
once per store and process (:class:`SignCache`: the resident embedder and the
servers keep them between searches and derive only the rows a fill added).
On the labelled queries against the 1 GB store the prefilter's recall@10 was
0.912 with these bits and 0.905 with the stored signs of the float vectors.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def sign_bits(packed: np.ndarray) -> np.ndarray:
    """The prefilter's bits of packed 4-bit rows: one a dimension, set where ``q > 0``;
    the even dimensions' bits first, then the odd ones' (:func:`query_signs` packs a
    query the same way; Hamming distance does not care about the order)."""
    import numpy as np

    packed = np.asarray(packed)
    even = np.packbits(packed >= 0x90, axis=1)  # high nibble >= 9: q >= 1
    odd = np.packbits((packed & 15) >= 9, axis=1)
    return np.concatenate([even, odd], axis=1)


def query_signs(vector: np.ndarray) -> np.ndarray:
    """A query's sign bits in :func:`sign_bits`' order."""
    import numpy as np

    return np.concatenate([np.packbits(vector[0::2] > 0), np.packbits(vector[1::2] > 0)])


def _sign_width(q4: np.ndarray) -> int:
    """Bytes of sign bits a row of ``q4`` (two dimensions a byte) has."""
    return 2 * ((q4.shape[1] + 7) // 8)


def signs_in_chunks(q4: np.ndarray, start: int, end: int) -> np.ndarray:
    import numpy as np

    out = np.empty((end - start, _sign_width(q4)), dtype=np.uint8)
    for at in range(start, end, 65_536):
        stop = min(at + 65_536, end)
        out[at - start : stop - start] = sign_bits(q4[at:stop])
    return out


class SignCache:
    """Sign bits derived from ``q4`` files, per file (its path, device and inode): the
    rows of a file only ever grow (a compaction writes another folder), so the bits of
    its first rows stay valid and only new rows are derived. A few rows are checked
    again on each use: a file replaced under the same name and inode is derived anew."""

    KEEP = 4
    CHECK = 8

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.files: dict[tuple[str, int, int], tuple[np.ndarray, int]] = {}

    def of(self, source: Path, q4: np.ndarray, n: int) -> np.ndarray:
        import numpy as np

        st = os.stat(source)
        key = (str(source), st.st_dev, st.st_ino)
        with self.lock:
            buffer, done = self.files.pop(key, (None, 0))
            if buffer is not None and not self._still(buffer, min(done, n), q4):
                buffer, done = None, 0
            if buffer is None or len(buffer) < n:
                grown = np.empty((max(n, 2 * done), _sign_width(q4)), dtype=np.uint8)
                if buffer is not None:
                    grown[:done] = buffer[:done]
                buffer = grown
            if done < n:
                buffer[done:n] = signs_in_chunks(q4, done, n)
                done = n
            self.files[key] = (buffer, done)
            while len(self.files) > self.KEEP:
                self.files.pop(next(iter(self.files)))
            return buffer[:n]

    def _still(self, buffer: np.ndarray, done: int, q4: np.ndarray) -> bool:
        """Whether a few of the first ``done`` rows still have the bits kept for them."""
        import numpy as np

        if done == 0:
            return True
        at = np.unique(np.linspace(0, done - 1, self.CHECK).astype(np.int64))
        return bool(np.array_equal(buffer[at], sign_bits(q4[at])))


#: the process' derived bits (the resident embedder scans up to 4 stores)
SIGNS = SignCache()

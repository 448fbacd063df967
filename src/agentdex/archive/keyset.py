"""An exact set of signed 64-bit keys in about 8 bytes each (a Python set takes ~60).

The archive's writer keeps the keys it added while the entries' key index is
dropped (a first build into an empty archive): whether a key is already
archived must then be answered without SQLite. The keys are hashes, so their
low bits spread them evenly over byte strings of a few hundred keys (8 bytes
each, searched by ``bytearray.find`` in C: ~20x faster than ``in`` over an
``array``, which makes a Python int of each element); one is searched only for
a key the writer's bit filter could not rule out (a few in a hundred), so
adding (an append) is what costs, not asking.
"""

from __future__ import annotations

import struct

#: low bits of a key that choose its array (4096 arrays: ~300 keys each at 1.25 million)
BITS = 12
#: a key's 8 bytes as the arrays hold them (``int.to_bytes(8, "little", signed=True)``)
pack_key = struct.Struct("<q").pack


class KeySet:
    """Keys added, exactly; ``len`` is how many."""

    def __init__(self) -> None:
        #: the low bits that choose a key's array, and the arrays: a caller adding many keys
        #: appends ``pack_key(key)`` to ``arrays[key & mask]`` itself, then calls :meth:`grew`
        self.mask = (1 << BITS) - 1
        self.arrays = [bytearray() for _ in range(1 << BITS)]
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: int) -> bool:
        keys = self.arrays[key & self.mask]
        wanted = pack_key(key)
        at = keys.find(wanted)
        while at % 8:  # a match across two keys' bytes (-1 % 8 is 7: not found ends it too)
            if at < 0:
                return False
            at = keys.find(wanted, at + 1)
        return True

    def grew(self, count: int) -> None:
        """``count`` keys were appended to :attr:`arrays` by the caller."""
        self._size += count

    def add_all(self, keys: list[int]) -> None:
        """Add keys the set does not hold (the caller checked)."""
        arrays, mask = self.arrays, self.mask
        for key in keys:
            arrays[key & mask] += pack_key(key)
        self._size += len(keys)

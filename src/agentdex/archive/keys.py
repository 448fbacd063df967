"""What identifies an archived record.

A record's archive key depends on what it says, not where it sits: agent,
session, role, kind, time and its text (the index's 63-bit text hash plus
the length of its lower-cased UTF-8). Re-reading unchanged content, or the
same content moved to another line or file, gives the same key, so it costs
no archive space; an edit gives a new key, so both versions are kept. The
index holds every part of the key per record (``records`` view), so which
archived records a live source still holds is a query over the index, with
no text read. (How the index marks the records it keeps from the archive is
the index's own rule: :mod:`agentdex.index.files`.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdex.index.segments import Prepared


def timestamp_key(timestamp: object) -> str:
    """A record time as the key sees it (the index stores times as REAL: 5 and 5.0 agree)."""
    if timestamp is None:
        return ""
    if isinstance(timestamp, int | float) and not isinstance(timestamp, bool):
        return repr(float(timestamp))
    return str(timestamp)


def record_key(
    agent: object,
    session_id: object,
    role: object,
    kind: object,
    timestamp: object,
    thash: int,
    tlen: int,
) -> int:
    """The archive key of a record: a signed 64-bit integer (``entries.key``)."""

    parts = (str(agent), str(session_id), str(role), str(kind), timestamp_key(timestamp))
    digest = hashlib.blake2b(
        "\x00".join(parts).encode("utf-8", "surrogatepass") + b"\x00%d\x00%d" % (thash, tlen),
        digest_size=8,
    ).digest()
    return int.from_bytes(digest, "little", signed=True)


#: :func:`record_key`'s arguments, in order
KeyOf = Callable[[object, object, object, object, object, int, int], int]


def keyer() -> KeyOf:
    """:func:`record_key` for many records: the bytes hashed before the time (agent,
    session, role, kind) are the same for most of a file's records and are kept (a parse
    worker computes a key for every record of a build)."""
    heads: dict[tuple[str, str, str, str], bytes] = {}
    blake2b = hashlib.blake2b
    from_bytes = int.from_bytes

    def key(
        agent: object,
        session_id: object,
        role: object,
        kind: object,
        timestamp: object,
        thash: int,
        tlen: int,
    ) -> int:
        if not (type(agent) is type(session_id) is type(role) is type(kind) is str):
            return record_key(agent, session_id, role, kind, timestamp, thash, tlen)
        parts = (agent, session_id, role, kind)
        head = heads.get(parts)
        if head is None:
            if len(heads) >= 4096:
                heads.clear()
            head = "\x00".join((*parts, "")).encode("utf-8", "surrogatepass")
            heads[parts] = head
        stamp = repr(timestamp) if type(timestamp) is float else timestamp_key(timestamp)
        data = b"%s%s\x00%d\x00%d" % (head, stamp.encode("utf-8", "surrogatepass"), thash, tlen)
        return from_bytes(blake2b(data, digest_size=8).digest(), "little", signed=True)

    return key


def prepared_key(prepared: Prepared) -> int:
    """:func:`record_key` of a record as the writers hold it (its meta, hash and length)."""
    meta = prepared.meta
    return record_key(
        meta[0], meta[2], meta[3], meta[4], meta[5], prepared.thash, len(prepared.lower)
    )

"""What identifies an archived record, and how archived records are told apart in the index.

A record's archive key depends on what it says, not where it sits: agent,
session, role, kind, time and its text (the index's 63-bit text hash plus
the length of its lower-cased UTF-8). Re-reading unchanged content, or the
same content moved to another line or file, gives the same key, so it costs
no archive space; an edit gives a new key, so both versions are kept. The
index holds every part of the key per record (``records`` view), so which
archived records a live source still holds is a query over the index, with
no text read.

Records the index keeps only because the archive has them (their source was
deleted, truncated or rewritten without them) belong to an index ``files``
row whose path is the original path behind :data:`ARCHIVED_PREFIX` and whose
parser is :data:`ARCHIVE_PARSER`: discovery never yields such a path, so the
refresh never re-reads or removes it, and surfaces show the original path
with ``source_gone: true``.
"""

from __future__ import annotations

#: index ``files.path`` of records kept from the archive: this prefix, then the original path
ARCHIVED_PREFIX = "archived:"
#: index ``files.parser`` of those rows
ARCHIVE_PARSER = "agentdex.archive"
#: the range of ``files.path`` holding archived rows (``path >= LOW AND path < HIGH``)
ARCHIVED_LOW = ARCHIVED_PREFIX
ARCHIVED_HIGH = ARCHIVED_PREFIX[:-1] + chr(ord(ARCHIVED_PREFIX[-1]) + 1)


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
    import hashlib  # here, not at the top: search imports this module for its constants

    parts = (str(agent), str(session_id), str(role), str(kind), timestamp_key(timestamp))
    digest = hashlib.blake2b(
        "\x00".join(parts).encode("utf-8", "surrogatepass") + b"\x00%d\x00%d" % (thash, tlen),
        digest_size=8,
    ).digest()
    return int.from_bytes(digest, "little", signed=True)


def archived_path(source_path: str) -> str:
    return ARCHIVED_PREFIX + source_path


def is_archived(path: str) -> bool:
    return path.startswith(ARCHIVED_PREFIX)


def original_path(path: str) -> str:
    """The source path behind an index ``files.path`` (itself when it is not archived)."""
    return path[len(ARCHIVED_PREFIX) :] if path.startswith(ARCHIVED_PREFIX) else path

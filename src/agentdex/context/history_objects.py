"""What the context history stores, and how a snapshot is hashed into it.

A snapshot becomes content-addressed objects (keyed by the sha256 of their
raw bytes): each ``ok`` instruction or skill text is a ``body``; each
resource's JSON without its payload (``"body"``: the text's hash) is an
``entry``; the roots list is a ``roots`` object. A version is the list of
its entry hashes plus metadata; ``content_key`` (over the entry hashes and
the snapshot error) decides whether an observation is a new version.
The schema is a list of named, append-only migrations.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from agentdex.context.model import Resource, Snapshot

DIGEST_BYTES = 32

#: Resource JSON keys in the live snapshot's order (entries are stored with sorted keys).
RESOURCE_KEYS = tuple(Resource("instruction_file", "/", "workspace", "/").to_json(payload=False))


def ordered(entry: dict[str, Any]) -> dict[str, Any]:
    """A stored entry with its keys back in the live snapshot's order (extras last)."""
    out = {key: entry[key] for key in RESOURCE_KEYS if key in entry}
    out.update((key, value) for key, value in entry.items() if key not in out)
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def _migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@_migration
def m001_initial(db: sqlite3.Connection) -> None:
    # A rowid table: bodies of a few KB fit a page; WITHOUT ROWID would spill them sooner.
    db.execute(
        "CREATE TABLE IF NOT EXISTS objects (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE,"
        " kind TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS workspaces (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,"
        " fingerprint BLOB, fingerprint_version INTEGER)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS versions (id INTEGER PRIMARY KEY,"
        " workspace_id INTEGER NOT NULL REFERENCES workspaces(id),"
        " content_key TEXT NOT NULL, aggregate_hash TEXT NOT NULL, error TEXT,"
        " roots_hash TEXT NOT NULL, entries BLOB NOT NULL, resource_count INTEGER NOT NULL,"
        " first_seen REAL NOT NULL, last_seen REAL NOT NULL, recorded_by TEXT NOT NULL)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS versions_by_time ON versions(workspace_id, first_seen, id)"
    )


@dataclass(frozen=True, slots=True)
class Version:
    """One recorded version of a workspace's context (no resources loaded)."""

    id: int
    workspace: str
    ordinal: int
    content_key: str
    aggregate_hash: str
    error: str | None
    roots_hash: str
    entry_hashes: tuple[str, ...]
    first_seen: float
    last_seen: float
    recorded_by: str

    @property
    def resource_count(self) -> int:
        return len(self.entry_hashes)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What one observation did: ``recorded`` a new version or found it ``unchanged``."""

    status: str
    version_id: int


@dataclass(slots=True)
class Prepared:
    objects: dict[str, tuple[str, bytes]]
    entry_hashes: list[str]
    roots_hash: str
    content_key: str


def prepare(snap: Snapshot) -> Prepared:
    """Hash a snapshot into its objects and content key (no I/O)."""
    objects: dict[str, tuple[str, bytes]] = {}
    entry_hashes: list[str] = []
    for res in sorted(snap.resources, key=lambda r: r.id):
        body_hash: str | None = None
        if res.payload is not None:
            body = res.payload.encode("utf-8", "surrogatepass")
            body_hash = _sha(body)
            objects[body_hash] = ("body", body)
        entry = res.to_json(payload=False)
        entry.pop("payload")
        entry["body"] = body_hash
        raw = orjson.dumps(entry, option=orjson.OPT_SORT_KEYS)
        entry_hash = _sha(raw)
        objects[entry_hash] = ("entry", raw)
        entry_hashes.append(entry_hash)
    roots = orjson.dumps([root.to_json() for root in snap.roots])
    roots_hash = _sha(roots)
    objects[roots_hash] = ("roots", roots)
    content_key = _sha(orjson.dumps([entry_hashes, snap.error]))
    return Prepared(objects, entry_hashes, roots_hash, content_key)

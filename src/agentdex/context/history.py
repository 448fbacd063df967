"""Context history: every distinct snapshot of a workspace, content-addressed, in SQLite.

Layout (``<data dir>/context/history.db``, WAL)::

    objects(id, hash, kind, size, data)  zlib-compressed, keyed by sha256 of the raw bytes:
                                      "body" = instruction or skill text,
                                      "entry" = one resource's JSON (no payload; "body": hash),
                                      "roots" = the roots list of a snapshot
    workspaces(id, path, fingerprint, fingerprint_version)
    versions(id, workspace_id, content_key, aggregate_hash, error, roots_hash,
             entries, resource_count, first_seen, last_seen, recorded_by)

A version is a list of entry hashes (packed 32-byte digests, in resource-id
order) plus metadata and two times: ``first_seen`` (when this content was
first observed) and ``last_seen`` (the latest observation that still found
it). ``content_key`` (sha256 over the entry hashes and the snapshot error)
decides "changed": an observation whose key equals the version in force at
its time only moves ``last_seen``. Identical text is stored once, whatever
the workspace, path or version.

Only what a snapshot already ships is stored: resource metadata, MCP server
*names* (never values) and the text of ``ok`` instruction files and skills.

Every write is one ``BEGIN IMMEDIATE`` transaction (objects, version and
fingerprint together), so a process killed at any point leaves either the
whole version or nothing, and concurrent writers serialize on SQLite's lock.
``synchronous=NORMAL``: a power cut can lose the last versions, never half
of one.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import orjson

from agentdex.context.history_objects import (
    DIGEST_BYTES,
    MIGRATIONS,
    Prepared,
    Recorded,
    Version,
    ordered,
    prepare,
)
from agentdex.context.model import SCHEMA_VERSION, Snapshot
from agentdex.errors import AgentdexError, CorruptError
from agentdex.paths import data_dir, ensure_private_dir, private_files

DB_NAME = "history.db"
BUSY_TIMEOUT_SECONDS = 10.0


class HistoryBusy(AgentdexError):
    """Another process held the history database for longer than the busy timeout."""


def history_path(base: Path | None = None) -> Path:
    return (base or data_dir()) / "context" / DB_NAME


#: One workspace's versions, numbered in time order (the ordinal is "v1", "v2", ...).
_NUMBERED = (
    "SELECT v.id, w.path, v.content_key, v.aggregate_hash, v.error, v.roots_hash, v.entries,"
    " v.first_seen, v.last_seen, v.recorded_by,"
    " row_number() OVER (ORDER BY v.first_seen, v.id) AS ordinal"
    " FROM versions v JOIN workspaces w ON w.id = v.workspace_id WHERE w.path = ?"
)


class HistoryStore:
    """One connection to the history database (open, use, close; not shared across threads)."""

    def __init__(self, path: Path | None = None, *, create: bool = True) -> None:
        self.path = path or history_path()
        self.db: sqlite3.Connection | None = None
        if not create and not self.path.exists():
            return  # nothing recorded yet: every read answers empty, nothing is created
        ensure_private_dir(self.path.parent)
        try:
            with private_files():  # the database, its WAL and -shm: 0600
                self.db = sqlite3.connect(
                    self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
                )
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self._migrate()
        except sqlite3.OperationalError as exc:
            self.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise HistoryBusy(f"context history is busy: {exc}") from exc
            raise self._corrupt(exc) from exc
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self._corrupt(exc) from exc

    def _corrupt(self, exc: BaseException) -> CorruptError:
        return CorruptError(
            f"context history at {self.path} cannot be read ({exc}); "
            "move it away to start a new one"
        )

    def _migrate(self) -> None:
        assert self.db is not None
        with self._write():
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL)"
            )
            done = {row[0] for row in self.db.execute("SELECT name FROM migrations")}
            for name, fn in MIGRATIONS:
                if name not in done:
                    fn(self.db)
                    self.db.execute(
                        "INSERT INTO migrations VALUES (?, strftime('%s', 'now'))", (name,)
                    )

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed whole, or rolled back whole."""
        db = self.db
        assert db is not None
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise HistoryBusy(f"context history is busy: {exc}") from exc
        try:
            yield db
        except BaseException:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # -- writing ---------------------------------------------------------------

    def _workspace_id(self, db: sqlite3.Connection, workspace: str) -> int:
        row = db.execute("SELECT id FROM workspaces WHERE path = ?", (workspace,)).fetchone()
        if row is not None:
            return int(row[0])
        cursor = db.execute("INSERT INTO workspaces (path) VALUES (?)", (workspace,))
        return int(cursor.lastrowid or 0)

    def record(
        self,
        snap: Snapshot,
        *,
        at: float,
        recorded_by: str,
        fingerprint: bytes | None = None,
    ) -> Recorded:
        """Record ``snap`` as observed at ``at``: a new version only if its content differs.

        Observations may arrive out of order (two processes, or an injected
        clock): the version in force at ``at`` is compared, and a next
        version with the same content is moved earlier instead of repeated.
        """
        prepared = prepare(snap)
        with self._write() as db:
            ws_id = self._workspace_id(db, snap.workspace)
            current = self._at(db, ws_id, at)
            if current is not None and current[1] == prepared.content_key:
                db.execute(
                    "UPDATE versions SET last_seen = max(last_seen, ?) WHERE id = ?",
                    (at, current[0]),
                )
                result = Recorded("unchanged", current[0])
            else:
                nxt = db.execute(
                    "SELECT id, content_key FROM versions WHERE workspace_id = ? AND first_seen > ?"
                    " ORDER BY first_seen, id LIMIT 1",
                    (ws_id, at),
                ).fetchone()
                if nxt is not None and nxt[1] == prepared.content_key:
                    db.execute("UPDATE versions SET first_seen = ? WHERE id = ?", (at, nxt[0]))
                    result = Recorded("unchanged", int(nxt[0]))
                else:
                    version_id = self._insert(db, ws_id, snap, prepared, at, recorded_by)
                    result = Recorded("recorded", version_id)
            latest = self._latest_id(db, ws_id)
            db.execute(
                "UPDATE workspaces SET fingerprint = ?, fingerprint_version = ? WHERE id = ?",
                (fingerprint if result.version_id == latest else None, latest, ws_id),
            )
        return result

    def _insert(
        self,
        db: sqlite3.Connection,
        ws_id: int,
        snap: Snapshot,
        prepared: Prepared,
        at: float,
        recorded_by: str,
    ) -> int:
        for digest, (kind, raw) in prepared.objects.items():
            db.execute(
                "INSERT OR IGNORE INTO objects (hash, kind, size, data) VALUES (?, ?, ?, ?)",
                (digest, kind, len(raw), zlib.compress(raw, 6)),
            )
        packed = b"".join(bytes.fromhex(h) for h in prepared.entry_hashes)
        cursor = db.execute(
            "INSERT INTO versions (workspace_id, content_key, aggregate_hash, error, roots_hash,"
            " entries, resource_count, first_seen, last_seen, recorded_by)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                ws_id,
                prepared.content_key,
                snap.aggregate_hash,
                snap.error,
                prepared.roots_hash,
                packed,
                len(prepared.entry_hashes),
                at,
                at,
                recorded_by,
            ),
        )
        return int(cursor.lastrowid or 0)

    def confirm(self, workspace: str, fingerprint: bytes, *, at: float) -> int | None:
        """Extend the latest version to ``at`` if ``fingerprint`` is still the stored one.

        The caller has just checked that the filesystem still matches
        ``fingerprint``. Returns the version id, or None when the stored
        fingerprint moved on (the caller then resolves).
        """
        with self._write() as db:
            row = db.execute(
                "SELECT id, fingerprint, fingerprint_version FROM workspaces WHERE path = ?",
                (workspace,),
            ).fetchone()
            if row is None or row[1] != fingerprint or row[2] != self._latest_id(db, row[0]):
                return None
            db.execute(
                "UPDATE versions SET last_seen = max(last_seen, ?) WHERE id = ?", (at, row[2])
            )
            return int(row[2])

    def fingerprint(self, workspace: str) -> bytes | None:
        if self.db is None:
            return None
        row = self.db.execute(
            "SELECT fingerprint FROM workspaces WHERE path = ?", (workspace,)
        ).fetchone()
        return bytes(row[0]) if row is not None and row[0] is not None else None

    # -- reading ---------------------------------------------------------------

    @staticmethod
    def _latest_id(db: sqlite3.Connection, ws_id: int) -> int | None:
        row = db.execute(
            "SELECT id FROM versions WHERE workspace_id = ? ORDER BY first_seen DESC, id DESC"
            " LIMIT 1",
            (ws_id,),
        ).fetchone()
        return int(row[0]) if row is not None else None

    @staticmethod
    def _at(db: sqlite3.Connection, ws_id: int, at: float) -> tuple[int, str] | None:
        row = db.execute(
            "SELECT id, content_key FROM versions WHERE workspace_id = ? AND first_seen <= ?"
            " ORDER BY first_seen DESC, id DESC LIMIT 1",
            (ws_id, at),
        ).fetchone()
        return (int(row[0]), str(row[1])) if row is not None else None

    def _versions(self, workspace: str, where: str, params: tuple[Any, ...]) -> list[Version]:
        if self.db is None:
            return []
        try:
            rows = self.db.execute(
                f"SELECT * FROM ({_NUMBERED}) WHERE {where}", (workspace, *params)
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from exc
        return [self._version(row) for row in rows]

    @staticmethod
    def _version(row: tuple[Any, ...]) -> Version:
        packed = bytes(row[6])
        return Version(
            id=int(row[0]),
            workspace=str(row[1]),
            ordinal=int(row[10]),
            content_key=str(row[2]),
            aggregate_hash=str(row[3]),
            error=row[4],
            roots_hash=str(row[5]),
            entry_hashes=tuple(
                packed[i : i + DIGEST_BYTES].hex() for i in range(0, len(packed), DIGEST_BYTES)
            ),
            first_seen=float(row[7]),
            last_seen=float(row[8]),
            recorded_by=str(row[9]),
        )

    def versions(self, workspace: str) -> list[Version]:
        """Every version of ``workspace``, oldest first."""
        return self._versions(workspace, "1 ORDER BY ordinal", ())

    def version_numbered(self, workspace: str, ordinal: int) -> Version | None:
        """Version ``vN`` of ``workspace`` (its Nth in time order)."""
        found = self._versions(workspace, "ordinal = ?", (ordinal,))
        return found[0] if found else None

    def version_at(self, workspace: str, at: float) -> Version | None:
        """The version in force at ``at``: the last one first seen at or before it."""
        found = self._versions(workspace, "first_seen <= ? ORDER BY ordinal DESC LIMIT 1", (at,))
        return found[0] if found else None

    def first_after(self, workspace: str, at: float) -> Version | None:
        found = self._versions(workspace, "first_seen > ? ORDER BY ordinal LIMIT 1", (at,))
        return found[0] if found else None

    def has_workspace(self, workspace: str) -> bool:
        if self.db is None:
            return False
        row = self.db.execute("SELECT 1 FROM workspaces WHERE path = ?", (workspace,)).fetchone()
        return row is not None

    def _object(self, digest: str) -> bytes | None:
        assert self.db is not None
        row = self.db.execute("SELECT data FROM objects WHERE hash = ?", (digest,)).fetchone()
        if row is None:
            return None
        try:
            return zlib.decompress(row[0])
        except zlib.error as exc:
            raise self._corrupt(exc) from exc

    def _json_object(self, digest: str) -> Any:
        raw = self._object(digest)
        if raw is None:
            raise CorruptError(f"context history at {self.path} lacks object {digest}")
        return orjson.loads(raw)

    def body(self, digest: str | None) -> str | None:
        """The stored text of a body hash (None when none is stored)."""
        raw = self._object(digest) if digest and self.db is not None else None
        return raw.decode("utf-8", "surrogatepass") if raw is not None else None

    def resources(self, version: Version) -> list[dict[str, Any]]:
        """The version's resources as snapshot JSON (``body`` hash kept, no payload)."""
        return [ordered(self._json_object(h)) for h in version.entry_hashes]

    def snapshot_json(self, version: Version, *, payload: bool = False) -> dict[str, Any]:
        """The version in the live snapshot's shape (``version`` = its ordinal)."""
        resources = []
        counts: dict[str, int] = {}
        total = 0
        for entry in self.resources(version):
            body = entry.pop("body", None)
            entry["payload"] = self.body(body) if payload and body else None
            counts[entry["status"]] = counts.get(entry["status"], 0) + 1
            total += int(entry.get("payload_bytes") or 0)
            resources.append(entry)
        return {
            "schema_version": SCHEMA_VERSION,
            "version": version.ordinal,
            "workspace": version.workspace,
            "aggregate_hash": version.aggregate_hash,
            "total_payload_bytes": total,
            "resource_count": len(resources),
            "status_counts": counts,
            "payload_included": payload,
            "error": version.error,
            "roots": self._json_object(version.roots_hash),
            "resources": resources,
        }

    def stats(self) -> dict[str, Any]:
        """Size and counts of the whole store (for ``--history`` and the docs' numbers)."""
        files = [self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")]
        size = sum(p.stat().st_size for p in files if p.exists())
        if self.db is None:
            return {"path": str(self.path), "bytes": size, "workspaces": 0, "versions": 0}
        count = self.db.execute
        objects = {
            kind: {"count": n, "raw_bytes": raw, "stored_bytes": stored}
            for kind, n, raw, stored in count(
                "SELECT kind, count(*), sum(size), sum(length(data)) FROM objects GROUP BY kind"
            )
        }
        return {
            "path": str(self.path),
            "bytes": size,
            "workspaces": count("SELECT count(*) FROM workspaces").fetchone()[0],
            "versions": count("SELECT count(*) FROM versions").fetchone()[0],
            "objects": objects,
        }

"""Typed resources and snapshots, and the order-independent aggregate hash.

A resource's id is ``<kind>:<source>`` where ``source`` is the absolute
path it was discovered at, so the id never depends on whether the file
could be read (a permission flip changes the status, never the id).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

SCHEMA_VERSION = 1

#: Every kind the type knows; only the first three are emitted today.
KINDS = (
    "instruction_file",
    "skill",
    "mcp_config",
    "mcp_server",
    "plugin",
    "hook",
    "subagent",
    "command",
)
EMITTED_KINDS = ("instruction_file", "skill", "mcp_config")
STATUSES = ("ok", "oversize", "unreadable", "invalid", "excluded")


@dataclass(frozen=True, slots=True)
class Resource:
    """One thing an agent is told, with its provenance and health."""

    kind: str
    source: str
    scope: str
    root: str
    source_path: str | None = None
    status: str = "ok"
    error: str | None = None
    content_hash: str | None = None
    size: int = 0
    name: str | None = None
    description: str | None = None
    payload: str | None = None
    servers: tuple[str, ...] | None = None
    target: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.source}"

    @property
    def payload_bytes(self) -> int:
        return len(self.payload.encode("utf-8")) if self.payload is not None else 0

    def to_json(self, *, payload: bool) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "source": self.source,
            "source_path": self.source_path,
            "scope": self.scope,
            "root": self.root,
            "status": self.status,
            "error": self.error,
            "content_hash": self.content_hash,
            "size": self.size,
            "name": self.name,
            "description": self.description,
            "servers": list(self.servers) if self.servers is not None else None,
            "target": self.target,
            "aliases": list(self.aliases),
            "payload_bytes": self.payload_bytes,
            "payload": self.payload if payload else None,
        }


@dataclass(frozen=True, slots=True)
class RootInfo:
    """A scan root and what became of it (``ok``, ``missing``, ``not_a_directory`` ...)."""

    path: str
    scope: str
    status: str
    source_path: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "scope": self.scope,
            "status": self.status,
            "source_path": self.source_path,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A published view of a workspace's context; ``version`` grows on each change."""

    workspace: str
    resources: tuple[Resource, ...]
    roots: tuple[RootInfo, ...] = ()
    error: str | None = None
    version: int = 1
    aggregate_hash: str = field(default="")

    def __post_init__(self) -> None:
        if not self.aggregate_hash:
            object.__setattr__(self, "aggregate_hash", aggregate_hash(self.resources))

    @property
    def total_payload_bytes(self) -> int:
        return sum(r.payload_bytes for r in self.resources)

    def same_content(self, other: Snapshot | None) -> bool:
        """True when publishing ``self`` after ``other`` would change nothing visible."""
        return (
            other is not None
            and other.aggregate_hash == self.aggregate_hash
            and other.error == self.error
        )

    def with_version(self, version: int) -> Snapshot:
        return replace(self, version=version)

    def to_json(self, *, payload: bool = False) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for res in self.resources:
            counts[res.status] = counts.get(res.status, 0) + 1
        return {
            "schema_version": SCHEMA_VERSION,
            "version": self.version,
            "workspace": self.workspace,
            "aggregate_hash": self.aggregate_hash,
            "total_payload_bytes": self.total_payload_bytes,
            "resource_count": len(self.resources),
            "status_counts": counts,
            "payload_included": payload,
            "error": self.error,
            "roots": [root.to_json() for root in self.roots],
            "resources": [res.to_json(payload=payload) for res in self.resources],
        }


def _field(value: str | None) -> bytes:
    data = (value or "").encode("utf-8", "surrogatepass")
    return len(data).to_bytes(8, "big") + data


def aggregate_hash(resources: tuple[Resource, ...] | list[Resource]) -> str:
    """sha256 over every resource sorted by id, each field length-prefixed.

    Sorting by id makes the hash independent of discovery order; length
    prefixes (8-byte big-endian) make field boundaries unambiguous, so
    ``("ab", "c")`` and ``("a", "bc")`` never collide.
    """
    digest = hashlib.sha256()
    ordered = sorted(resources, key=lambda r: r.id)
    digest.update(len(ordered).to_bytes(8, "big"))
    for res in ordered:
        for value in (
            res.id,
            res.status,
            res.content_hash,
            res.error,
            str(res.size),
            res.target,
            "\0".join(res.aliases),
            "\0".join(res.servers or ()),
        ):
            digest.update(_field(value))
    return digest.hexdigest()

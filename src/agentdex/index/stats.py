"""What a refresh did (and how it can fail), importable without the refresh machinery."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentdex.errors import AgentdexError


class DiskFullError(AgentdexError):
    """The disk filled up while indexing; the index keeps its last committed state."""


@dataclass(slots=True)
class RefreshStats:
    generation: str = ""
    files_seen: int = 0
    files_unchanged: int = 0
    files_parsed: int = 0
    files_resumed: int = 0
    files_removed: int = 0
    files_failed: int = 0
    records_added: int = 0
    records_removed: int = 0
    #: records new to the archive, and records re-imported from it (their source lost them)
    records_archived: int = 0
    records_restored: int = 0
    bytes_parsed: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    skipped_busy: bool = False
    diagnostics: int = 0
    workers: int = 0
    #: the no-change fast path answered (index/manifest.py): nothing was opened or parsed
    fast_path: bool = False
    #: new records were left in the tail (a small refresh: no tantivy writer opened)
    deferred: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

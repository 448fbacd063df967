"""What a refresh did (and how it can fail), importable without the refresh machinery."""

from __future__ import annotations

import errno
import sqlite3
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
    #: model calls' usage read (docs/usage.md)
    usage_added: int = 0
    bytes_parsed: int = 0
    seconds: float = 0.0
    rebuilt: bool = False
    skipped_busy: bool = False
    diagnostics: int = 0
    workers: int = 0
    #: the no-change fast path answered (ingest/manifest.py): nothing was opened or parsed
    fast_path: bool = False
    #: new records were left in the tail (a small refresh: no tantivy writer opened)
    deferred: bool = False
    #: a first build stopped at its caller's deadline: the index covers only part of the
    #: stores (``coverage``), and the next refresh goes on where it stopped
    incomplete: bool = False
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


#: errno -> what stopped the writes (``ulimit -f`` gives EFBIG: Python ignores SIGXFSZ)
_WRITE_LIMITS = {
    errno.ENOSPC: "disk full",
    errno.EFBIG: "file size limit reached (ulimit -f)",
    errno.EDQUOT: "disk quota exceeded",
}


def raise_if_write_failure(exc: BaseException) -> None:
    what = write_failure(exc)
    if what is not None:
        raise DiskFullError(
            f"{what} while indexing; the index keeps its last committed state "
            "(free space and run `agentdex index` again)"
        ) from exc


def write_failure(exc: BaseException) -> str | None:
    """What stopped the index being written (full disk, size limit, quota, write I/O), if so."""
    if isinstance(exc, OSError):
        return _WRITE_LIMITS.get(exc.errno or 0)
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError):
        # SQLite reports ENOSPC as SQLITE_FULL and EFBIG/EDQUOT as a write I/O error
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name == "SQLITE_FULL" or "full" in text:
            return "disk full"
        if name.startswith("SQLITE_IOERR"):
            return (
                f"cannot write the index ({exc}: a full disk, a file size limit or a failing disk)"
            )
        return None
    # tantivy reports I/O errors as ValueError with the OS message inside
    if isinstance(exc, ValueError):
        if "file too large" in text:
            return _WRITE_LIMITS[errno.EFBIG]
        if "no space left" in text or "disk full" in text:
            return "disk full"
        if "quota" in text:
            return _WRITE_LIMITS[errno.EDQUOT]
    return None

"""How much of the history a generation covers while its first build is still running.

A first build is visible to readers as it commits (it is the only
generation there is), newest files first. Until it completes, every commit
also writes ``meta.coverage``: the bytes and files of the stores indexed so
far against all that discovery found, and the modification time of the
oldest file indexed (everything newer is in). A complete build deletes the
key, so a generation without it covers everything discovery found.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

KEY = "coverage"


class BuildCoverage:
    """What an incomplete generation holds (all sizes are of the agents' files).

    A plain class, not a dataclass: every search imports this module, and creating a
    dataclass costs every fresh process ~0.5 ms."""

    __slots__ = ("bytes", "bytes_total", "files", "files_total", "back_to")  # noqa: RUF023 - JSON order

    def __init__(
        self,
        bytes: int = 0,
        bytes_total: int = 0,
        files: int = 0,
        files_total: int = 0,
        back_to: float | None = None,
    ) -> None:
        self.bytes = bytes
        self.bytes_total = bytes_total
        self.files = files
        self.files_total = files_total
        #: the modification time of the oldest file indexed so far (None: none yet)
        self.back_to = back_to

    @property
    def fraction(self) -> float:
        return round(self.bytes / self.bytes_total, 4) if self.bytes_total else 0.0

    def fields(self) -> dict[str, Any]:
        """The stored fields, in order (what ``meta.coverage`` holds)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def to_json(self) -> dict[str, Any]:
        return {"complete": False, "fraction": self.fraction, **self.fields()}


def write(db: sqlite3.Connection, coverage: BuildCoverage | None) -> None:
    """Record ``coverage`` (None: the generation is complete) in the open transaction."""
    if coverage is None:
        db.execute("DELETE FROM meta WHERE key = ?", (KEY,))
    else:
        db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (KEY, orjson.dumps(coverage.fields()).decode()),
        )


def read(db: sqlite3.Connection) -> BuildCoverage | None:
    """The coverage of an incomplete generation, or None when it is complete."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    if row is None or not row[0]:
        return None
    try:
        data = orjson.loads(row[0])
        return BuildCoverage(**{k: data[k] for k in BuildCoverage.__slots__ if k in data})
    except (orjson.JSONDecodeError, TypeError):
        return BuildCoverage()

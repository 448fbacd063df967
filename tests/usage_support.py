"""Checks of the index's usage tables shared by the usage tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentdex.index.store import Location, index_root
from agentdex.index.usage import COUNT_COLUMNS, SIZE_SQL

_SUMS = ", ".join(f"sum({c})" for c in COUNT_COLUMNS)


def index_db(home: Path) -> Path:
    """The current generation's database of the index of ``home``."""
    gen = Location(index_root(None, home=str(home))).current()
    assert gen is not None
    return gen / "index.db"


def assert_usage_level(home: Path) -> dict[tuple[int, int], tuple[int, ...]]:
    """``usage_contexts`` holds, per context and prompt size, exactly the sums of the
    15-minute rollup and of the counted calls (no row of 0 calls); returns its rows."""
    db = sqlite3.connect(f"file:{index_db(home)}?mode=ro", uri=True)
    try:
        kept = {
            (row[0], row[1]): tuple(row[2:])
            for row in db.execute(
                f"SELECT context_id, size, calls, {', '.join(COUNT_COLUMNS)} FROM usage_contexts"
            )
        }
        rollup = {
            (row[0], row[1]): tuple(row[2:])
            for row in db.execute(
                f"SELECT context_id, size, sum(calls), {_SUMS} FROM usage_rollup"
                " GROUP BY context_id, size"
            )
        }
        calls = {
            (row[0], row[1]): tuple(row[2:])
            for row in db.execute(
                f"SELECT context_id, {SIZE_SQL}, count(*), {_SUMS} FROM usage_calls"
                " WHERE counted = 1 GROUP BY 1, 2"
            )
        }
    finally:
        db.close()
    assert kept == calls, "usage_contexts is not the sum of the counted calls"
    assert rollup == calls, "usage_rollup is not the sum of the counted calls"
    assert all(row[0] > 0 for row in kept.values())
    return kept

"""The per-context usage sums (``usage_contexts``) that ``usage --by session`` and the other
views without a date range read: kept level with the counted calls by the writer through
copies, a truncated or deleted source, ``forget``, a rebuild and the migration of an
older generation; a view reads the same rows from them as from the 15-minute rollup."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.api.usage import usage
from agentdex.index.store import Location, index_root
from agentdex.ingest import manifest
from test_usage_index import _archive_off, _claude, _transcript
from usage_support import assert_usage_level, index_db

pytestmark = pytest.mark.deferred_postings

#: a date range that holds every call of these tests: the view then reads the slot rollup
EVERY_DAY = "2000-01-01"
TIMELESS = ("session", "model", "agent", "project", "branch")


def _rows(by: str, home: Path, **kw: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    result = usage(by, home=str(home), refresh_first=False, **kw)
    return result["rows"], result["totals"]


def _sessions(home: Path) -> dict[str, int]:
    return {r["session_id"]: r["calls"] for r in _rows("session", home)[0]}


def _same_from_both_rollups(home: Path) -> None:
    """Each view without a date range reads the same rows and totals from ``usage_contexts``
    as with a range that holds every call (which reads the 15-minute rollup)."""
    for by in TIMELESS:
        rows, totals = _rows(by, home)
        by_slots, slot_totals = _rows(by, home, since=EVERY_DAY)
        assert rows == by_slots, by
        assert totals == slot_totals, by
        for split in ("model", "agent"):  # the web page's stacked parts
            assert _rows(by, home, split=split) == _rows(by, home, split=split, since=EVERY_DAY)


def test_a_copied_history_counts_once_in_its_first_conversation(home: Path) -> None:
    _archive_off()
    original = [_claude("s1", f"m{i}", f"2026-03-01T10:0{i}:00Z", (i, 10, 0, 2)) for i in range(3)]
    first = _transcript(home, "s1", original)
    api.refresh(home=str(home))
    assert_usage_level(home)
    # resumed: the history copied into a new file, re-stamped, then one new call
    copied = [{**x, "sessionId": "s2", "timestamp": "2026-03-05T09:00:00Z"} for x in original]
    _transcript(home, "s2", [*copied, _claude("s2", "m9", "2026-03-05T09:01:00Z", (1, 0, 0, 1))])
    api.refresh(home=str(home))
    assert_usage_level(home)
    assert _sessions(home) == {"s1": 3, "s2": 1}
    _same_from_both_rollups(home)
    first.unlink()  # the original goes (no archive): its calls now count in the copy
    api.refresh(home=str(home))
    assert_usage_level(home)
    assert _sessions(home) == {"s2": 4}
    _same_from_both_rollups(home)


def test_a_truncated_source_leaves_only_what_it_still_holds(home: Path) -> None:
    _archive_off()
    lines = [_claude("s1", f"m{i}", "2026-03-01T10:00:00Z", (1, 0, 0, 1)) for i in range(4)]
    path = _transcript(home, "s1", lines)
    _transcript(home, "s2", [_claude("s2", "x", "2026-03-02T10:00:00Z", (7, 0, 0, 7))])
    api.refresh(home=str(home))
    assert _sessions(home) == {"s1": 4, "s2": 1}
    path.write_text(json.dumps(lines[0]) + "\n", encoding="utf-8")
    api.refresh(home=str(home))
    contexts = assert_usage_level(home)
    assert _sessions(home) == {"s1": 1, "s2": 1}
    assert sum(row[0] for row in contexts.values()) == 2
    _same_from_both_rollups(home)
    path.unlink()
    api.refresh(home=str(home))
    assert_usage_level(home)
    assert _sessions(home) == {"s2": 1}


def test_with_the_archive_a_deleted_source_stays_in_its_conversation(home: Path) -> None:
    path = _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 6, 7, 8))])
    api.refresh(home=str(home))
    before = _rows("session", home)
    path.unlink()
    assert api.refresh(home=str(home)).files_removed == 1
    assert_usage_level(home)
    assert _rows("session", home) == before


def test_forget_takes_a_conversation_out_of_the_per_context_sums(home: Path, run_cli: Any) -> None:
    _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5)),
        _claude("s1", "m2", "2026-03-01T11:00:00Z", (5, 0, 0, 5), model="claude-sonnet-4-5"),
    ])  # fmt: skip
    _transcript(home, "s2", [_claude("s2", "m3", "2026-03-01T10:00:00Z", (1, 0, 0, 1))])
    api.refresh(home=str(home))
    assert len(assert_usage_level(home)) == 3  # s1 has two contexts (two models)
    done = run_cli("forget", "--yes", "--session", "s1")
    assert done.returncode == 0, done.stderr
    assert len(assert_usage_level(home)) == 1
    rows, totals = _rows("session", home)
    assert [r["session_id"] for r in rows] == ["s2"] and totals["calls"] == 1
    _same_from_both_rollups(home)


def test_a_rebuild_sums_the_same_rows(home: Path) -> None:
    for n in range(3):
        _transcript(home, f"s{n}", [
            _claude(f"s{n}", f"a{n}", "2026-03-01T10:00:00Z", (n + 1, 10, 0, 3)),
            _claude(f"s{n}", f"b{n}", "2026-03-02T23:59:00Z", (2, 0, 300_000, 1), cwd="/w/lib"),
        ], slug=f"-w-p{n}")  # fmt: skip
    api.refresh(home=str(home))
    before = {by: _rows(by, home) for by in TIMELESS}
    api.refresh(home=str(home), full=True)
    assert_usage_level(home)
    assert {by: _rows(by, home) for by in TIMELESS} == before
    _same_from_both_rollups(home)


def test_an_older_generation_is_summed_once_by_its_next_writer(home: Path) -> None:
    for n in range(3):
        call = _claude(f"s{n}", f"m{n}", "2026-03-01T10:00:00Z", (n, 1, 0, 1))
        _transcript(home, f"s{n}", [call])
    api.refresh(home=str(home))
    want = {by: _rows(by, home) for by in TIMELESS}
    db = sqlite3.connect(index_db(home))  # as a generation written before m007_usage_contexts
    db.executescript(
        "DROP TABLE usage_contexts; DELETE FROM migrations WHERE name = 'm007_usage_contexts';"
    )
    db.close()
    # a reader of that generation reads the slot rollup instead: the same answer
    assert {by: _rows(by, home) for by in TIMELESS} == want
    manifest.discard(Location(index_root(None, home=str(home))).root)
    api.refresh(home=str(home))  # the writer migrates: the table is back, summed
    assert len(assert_usage_level(home)) == 3
    assert {by: _rows(by, home) for by in TIMELESS} == want


def test_views_without_a_date_range_read_the_per_context_sums(home: Path) -> None:
    """Which table answers: a row changed in ``usage_contexts`` alone shows in the views
    without a range and not in those with one (the slot rollup)."""
    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5))])
    api.refresh(home=str(home))
    with sqlite3.connect(index_db(home)) as db:
        db.execute("UPDATE usage_contexts SET calls = calls + 1")
    db.close()
    for by in TIMELESS:
        assert _rows(by, home)[1]["calls"] == 2, by
        assert _rows(by, home, since=EVERY_DAY)[1]["calls"] == 1, by
    assert _rows("day", home)[1]["calls"] == 1


def test_a_view_leaves_the_cycle_collector_as_it_found_it(home: Path) -> None:
    import gc

    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5))])
    api.refresh(home=str(home))
    assert gc.isenabled()
    assert _rows("session", home)[1]["calls"] == 1 and gc.isenabled()
    gc.disable()
    try:
        assert _rows("day", home)[1]["calls"] == 1 and not gc.isenabled()
    finally:
        gc.enable()


def test_a_conversation_over_two_projects_and_an_unpriced_model(home: Path) -> None:
    """The session view's own row builder (one conversation, several contexts): the largest
    project, both models, the priced part and the unpriced call, as the generic rows give."""
    _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5), cwd="/w/app"),
        _claude("s1", "m2", "2026-03-01T11:00:00Z", (7, 0, 0, 3), "nobody-knows", "/w/lib"),
        _claude("s1", "m3", "2026-03-01T12:00:00Z", (1, 2, 0, 1), cwd="/w/app"),
    ])  # fmt: skip
    _transcript(home, "s2", [_claude("s2", "m4", "2026-03-02T10:00:00Z", (1, 0, 0, 1))])
    api.refresh(home=str(home))
    rows, totals = _rows("session", home)
    assert [r["session_id"] for r in rows] == ["s1", "s2"]
    s1 = rows[0]
    assert s1["project"] == "/w/lib" and s1["models"] == ["claude-opus-4-6", "nobody-knows"]
    assert (s1["calls"], s1["total_tokens"], s1["unpriced_calls"], s1["unpriced_tokens"]) == (
        3, 24, 1, 10)  # fmt: skip
    assert s1["cost_usd"] is None and s1["priced_cost_usd"] > 0
    assert (totals["calls"], totals["unpriced_calls"], totals["cost_usd"]) == (4, 1, None)
    _same_from_both_rollups(home)
    assert _rows("session", home, limit=1)[0] == _rows("session", home, limit=1, since=EVERY_DAY)[0]

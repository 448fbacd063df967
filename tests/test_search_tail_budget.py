"""A first page while much of the index is tail: the tail gets a share of the budget, and a
page out of time returns the rows it verified, never nothing.

Mid-build the tail (records the postings or the term list do not cover yet) can be a
hundred thousand records; session 16 saw a search spend its whole 5 s budget verifying
them and answer 0 results (``stopped: time-budget``) where the searches around it
answered 100. Here the tail is a real one (a deferred refresh, ~30 records a text block),
and time is a fake clock that advances one second per record checked (alone or in a
block's scan), so when the budget runs out is decided by the work done, not by the
machine's speed. The searches run in a thread of their own:
there the budget has no real-time alarm (only in the main thread), just its checks.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.ingest import parallel as parallel_mod
from agentdex.search import budget as budget_mod
from agentdex.search import run as run_mod
from agentdex.search.budget import Budget
from agentdex.search.matchers import TermMatcher
from test_index_fixtures import ROWS, register, store_dir, write_file

pytestmark = pytest.mark.deferred_postings

NOW = 1_795_000_000.0
DAY = 86_400.0
INDEXED, TAIL = 40, 300
#: ~500 bytes a record: ~30 records a 16 KiB text block
FILLER = " filler" * 70


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def rec(text: str, ts: float) -> dict[str, object]:
    return {"session": text, "role": "user", "kind": "prompt", "text": text + FILLER, "ts": ts}


@pytest.fixture
def tailed(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """INDEXED records in the postings (the newest), then TAIL older ones left as tail."""
    path = store_dir(home) / "a.jsonl"
    write_file(path, [rec(f"needle indexed {i}", NOW - DAY - i) for i in range(INDEXED)])
    with monkeypatch.context() as patch:
        patch.setattr(parallel_mod, "DEFER_BYTES", 0)
        assert not api.refresh(home=str(home), rows=ROWS).deferred
    old = NOW - 300 * DAY
    write_file(path, [rec(f"needle tail {i}", old - i) for i in range(TAIL)], mode="ab")
    assert api.refresh(home=str(home), rows=ROWS).deferred
    # a first page even for these few candidates
    monkeypatch.setattr(run_mod, "FULL_EXACT", 10)
    monkeypatch.setattr(run_mod, "FULL_VERIFIED", 10)
    return home


def search(budget: Budget) -> Any:
    options = {"refresh_first": False, "limit": 20, "now": NOW, "mode": "lexical"}
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(api.search, "needle", budget=budget, **options).result()


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The budget's clock: one second more per record checked."""
    clock = [0.0]
    monkeypatch.setattr(budget_mod, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    one, block = TermMatcher.matches_record, TermMatcher.scan

    def matches_record(self: TermMatcher, data: Any, index: int) -> bool:
        clock[0] += 1.0
        return one(self, data, index)

    def scan(self: TermMatcher, data: Any, local: list[int] | None = None) -> list[int]:
        clock[0] += data.count if local is None else len(local)
        return block(self, data, local)

    monkeypatch.setattr(TermMatcher, "matches_record", matches_record)
    monkeypatch.setattr(TermMatcher, "scan", scan)
    return clock


def texts(result: Any) -> list[str]:
    return [r["text"].removesuffix(FILLER) for r in result.results]


def test_the_tails_share_leaves_the_postings_their_time(tailed: Path, ticking: list) -> None:
    whole = search(Budget(None))  # no deadline: every tail record verified
    assert whole.status == "ok" and whole.stats["mode"] == "first-page"
    assert texts(whole) == [f"needle indexed {i}" for i in range(20)]
    # verifying the whole tail takes 300 s of a 100 s budget: the base spent it all there
    # and answered nothing; now the tail stops at half of it and the postings are read
    ticking[0] = 0.0
    got = search(Budget(100))
    assert got.status == "partial" and got.stats["stopped"] == "time-budget"
    assert texts(got) == texts(whole)  # the newest are indexed: the page is the same
    assert not got.stats["total_exact"] and got.stats["matched_records"] is None
    assert any("records the index does not cover yet" in note for note in got.stats["notes"])
    assert ticking[0] < 100  # no record was verified past the budget


def test_a_page_out_of_time_keeps_the_tail_rows_it_verified(
    tailed: Path, ticking: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_mod, "TAIL_SHARE", 1.0, raising=False)  # the tail may take it all
    whole = texts(search(Budget(None)))
    got = search(Budget(100))
    assert got.status == "partial" and got.stats["stopped"] == "time-budget"
    # the merge ran out at once: what it returns are the tail rows verified before, best
    # first (every one a real match; the better indexed ones it did not reach are missed)
    found = texts(got)
    assert len(found) == 20 and all(text.startswith("needle tail ") for text in found)
    assert found == sorted(found, key=lambda t: int(t.split()[-1]))  # newest first
    assert not set(found) & set(whole)  # (the complete page holds none of them)


def test_a_block_scanned_whole_or_record_by_record_decides_the_same(tailed: Path) -> None:
    from agentdex.api.index import reader
    from agentdex.search.engine import ID
    from agentdex.search.query import parse_query

    with reader(None, None) as engine:
        assert engine is not None
        rows = engine.tail_rows()
        assert len(rows) == TAIL
        for query in ("needle", "tail 1", "needle -2", "kind:prompt tail 3"):
            node = parse_query(query, now=NOW, regex=False)
            assert node is not None
            engine.prepare(node, regex=False, word=False, case="smart")
            whole, decided = engine.matching(node, rows)  # every block scanned whole
            assert decided == TAIL
            few = rows[::9]  # one in nine of a block: checked one by one
            one_by_one, _ = engine.matching(node, few)
            expected = [row for row in few if engine.matches(node, row)]
            assert one_by_one == expected == [row for row in whole if row[ID] % 9 == few[0][ID] % 9]
            assert 0 < len(whole) < TAIL or query == "needle"

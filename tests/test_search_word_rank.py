"""Whole words and phrases rank above matches inside a word (issue 26 item 5).

``race`` still matches ``gracefully`` (substring semantics, the oracle tests), but
every record where ``race`` is a whole word comes first, on the whole-answer
path and on the first-page path (which must give the same page), even when the
in-word matches are newer prompts and the whole-word ones old tool output.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.search import run as search_run
from agentdex.search.query import parse_query
from agentdex.search.ranking import whole_words
from test_index_fixtures import ROWS, register, store_dir, write_file

WORDS = ["gracefully", "traces", "embrace", "racetrack", "terrace"]


def _corpus(seed: int) -> list[dict[str, object]]:
    """In-word matches as new prompts (high cheap score), whole words as old tool output."""
    pick = random.Random(seed)
    recs = []
    for i in range(160):
        whole = i % 4 == 0
        word = "race" if whole else pick.choice(WORDS)
        text = f"note {i}: the {word} here" + (" condition" if i % 8 == 0 else "")
        recs.append(
            {
                "session": f"s{i % 7}",
                "role": "tool" if whole else "user",
                "kind": "tool_result" if whole else "prompt",
                "text": text + " pad" * pick.randrange(0, 300 if whole else 3),
                "ts": (1_700_000_000 if whole else 1_790_000_000) + i,
                "cwd": "/w",
                "model": None,
                "branch": None,
            }
        )
    return recs


def _refs(root: Path, query: str, limit: int, **options: object) -> list[str]:
    result = api.search(query, root=root, refresh_first=False, limit=limit, dedup=False, **options)  # type: ignore[arg-type]
    return [r["ref"] for r in result.results]


@pytest.fixture
def indexed(home: Path) -> tuple[Path, list[dict[str, object]]]:
    register()
    recs = _corpus(7)
    write_file(store_dir(home) / "corpus.jsonl", recs)
    root = home / "index"
    api.refresh(root, home=str(home), rows=ROWS)
    return root, recs


def _whole(text: str, term: str) -> bool:
    return re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", text, re.I) is not None


def test_whole_words_come_first_and_matching_stays_substring(
    indexed: tuple[Path, list[dict[str, object]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, recs = indexed
    texts = {f"{r['session']}@line:{i + 1}": str(r["text"]) for i, r in enumerate(recs)}
    everything = _refs(root, "race", 10_000)
    assert len(everything) == sum("race" in t for t in texts.values())  # substring: all 160
    tiers = [_whole(texts[ref], "race") for ref in everything]
    assert tiers == sorted(tiers, reverse=True)  # every whole word before every in-word
    assert sum(tiers) == 40
    node = parse_query("race")
    assert [whole_words(node, texts[ref]) for ref in everything] == tiers  # the team's twin
    page = _refs(root, "race", 25)
    assert page == everything[:25] and all(_whole(texts[ref], "race") for ref in page)
    by_time = _refs(root, "race", 5, sort="time")  # time order is time order
    assert not any(_whole(texts[ref], "race") for ref in by_time)

    monkeypatch.setattr(search_run, "FULL_EXACT", 0)
    monkeypatch.setattr(search_run, "FULL_VERIFIED", 0)
    monkeypatch.setattr(search_run, "PAGE", 2)
    for limit in (1, 10, 45, 200):
        first_page = _refs(root, "race", limit)
        assert first_page == everything[:limit], limit  # the same page, the same order
    monkeypatch.setattr(search_run, "LAZY_WORDS", 0)  # the in-word tier read on demand
    for limit in (1, 45, 200):
        assert _refs(root, "race", limit) == everything[:limit], limit


def test_a_phrase_ranks_above_its_words_inside_others(
    indexed: tuple[Path, list[dict[str, object]]],
) -> None:
    root, recs = indexed
    texts = {f"{r['session']}@line:{i + 1}": str(r["text"]) for i, r in enumerate(recs)}
    found = _refs(root, '"race here condition"', 100)
    assert found and all("race here condition" in texts[ref] for ref in found)
    two = _refs(root, "race condition", 100)
    whole = [all(_whole(texts[ref], w) for w in ("race", "condition")) for ref in two]
    assert whole == sorted(whole, reverse=True) and whole[0]
    assert len(two) == sum("race" in t and "condition" in t for t in texts.values())


@pytest.mark.parametrize(
    "query",
    ["race", "race -role:tool", "race role:tool", "race condition", "race -condition", "race here"],
)
def test_word_streams_give_the_page_the_plan_and_words_give(
    indexed: tuple[Path, list[dict[str, object]]], monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    """A first page reads its whole-word streams from ``Planner.word_streams`` (the words
    and the other children's plans, not the text terms' unions): the same page as from the
    plan's query AND the words, also where the plan is exact and nothing is verified (a
    NOT of a field: a whole-word record the NOT excludes must not come back)."""
    from agentdex.search.plan import Planner

    root, recs = indexed
    texts = {f"{r['session']}@line:{i + 1}": r for i, r in enumerate(recs)}
    monkeypatch.setattr(search_run, "FULL_EXACT", 0)
    monkeypatch.setattr(search_run, "FULL_VERIFIED", 0)
    monkeypatch.setattr(search_run, "PAGE", 3)
    pages = {}
    for how in ("word streams", "plan and words"):
        if how == "plan and words":
            monkeypatch.setattr(Planner, "word_streams", lambda self, node, words: None)
        pages[how] = {limit: _refs(root, query, limit) for limit in (1, 7, 30, 200)}
    assert pages["word streams"] == pages["plan and words"]
    everything = pages["word streams"][200]
    assert everything  # every query here matches some records
    if "-role:tool" in query:
        assert all(texts[ref]["role"] != "tool" for ref in everything)
    if " role:tool" in query:
        assert all(texts[ref]["role"] == "tool" for ref in everything)


def test_a_first_page_read_while_counting_is_dropped_when_the_candidates_are_few(
    indexed: tuple[Path, list[dict[str, object]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With many whole-word candidates, the page is read while another thread counts every
    candidate; when they are few after all (160 here), every candidate is read instead, and
    nothing of the dropped page shows: same results, same statistics (blocks read
    included) as the path that never read a page. (A corpus where that happens needs
    more whole-word candidates than the whole-answer threshold and fewer candidates: the
    run is told so here.)"""
    root, _recs = indexed

    def answer() -> tuple[list[str], dict[str, object]]:
        result = api.search("race", root=root, refresh_first=False, limit=30, dedup=False)
        stats = {k: v for k, v in result.stats.items() if k not in ("seconds", "refresh")}
        return [r["ref"] for r in result.results], stats

    plain = answer()  # 40 whole words < LAZY_WORDS x 100: no page read ahead
    assert plain[1]["mode"] == "whole" and plain[1]["blocks_scanned"]
    dropped: list[int] = []
    real = search_run.SearchRun._first_page

    def first_page(self: search_run.SearchRun, *args: object, **kw: object) -> object:
        dropped.append(1)
        return real(self, *args, **kw)  # type: ignore[arg-type]

    real_pages = search_run.SearchRun._first_pages

    def first_pages(self: search_run.SearchRun, *args: object) -> object:
        pages = real_pages(self, *args)  # type: ignore[arg-type]
        self.whole_words = 10**9  # "many": a page is read while counting
        return pages

    monkeypatch.setattr(search_run.SearchRun, "_first_page", first_page)
    monkeypatch.setattr(search_run.SearchRun, "_first_pages", first_pages)
    monkeypatch.setattr(search_run, "LAZY_WORDS", 0)  # whole words always "enough"
    assert answer() == plain
    assert dropped  # a page was read ahead, and dropped

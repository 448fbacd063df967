"""An AND is planned rarest child first and stops at a child nothing can match.

Each text term of a plan costs a scan of the term list (a few milliseconds per
ten megabytes of terms); a many-word query with one word no record holds used
to scan for every word. Now the planner looks the words up rarest first (no
whole term, longer, then the short common-looking ones) and stops at the first
one no term contains: the AND is empty. When only short words are left and
the words planned leave few candidates, the short words are not looked up at
all: verification checks them on those records. Long words too, once the rarer
words planned leave few candidates (the estimate says when to count them): the
count collects those candidates' ids, and the run verifies them without
evaluating the plan again. The answers are the same (the
oracle tests compare every plan with a brute-force scan); these tests pin the
cost and the edges (OR, NOT, phrases, a short word a record lacks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.api.index import reader
from agentdex.index.postings import Vocabulary
from agentdex.search import plan as search_plan
from agentdex.search.engine import Engine
from agentdex.search.query import parse_query
from test_index_fixtures import ROWS, register, store_dir, write_file

TEXTS = [
    "the retry loop backs off exponentially",
    "retry with backoff and jitter on the upstream",
    "the migration locked the orders table",
    "unrelated note about photos",
    "retry again later",  # no "the" in it
]


@pytest.fixture
def indexed(home: Path) -> Path:
    register()
    recs = [
        {
            "session": f"s{i}",
            "role": "user",
            "kind": "prompt",
            "text": text,
            "ts": 1_790_000_000 + i,
            "cwd": "/w",
            "model": None,
            "branch": None,
        }
        for i, text in enumerate(TEXTS)
    ]
    write_file(store_dir(home) / "corpus.jsonl", recs)
    root = home / "index"
    api.refresh(root, home=str(home), rows=ROWS)
    return root


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every token the planner looks up in the term list, in order."""
    seen: list[str] = []
    original = Vocabulary.expand

    def counting(self: Vocabulary, token: str, **kwargs: Any) -> Any:
        seen.append(token)
        return original(self, token, **kwargs)

    monkeypatch.setattr(Vocabulary, "expand", counting)
    return seen


def _plan(root: Path, home: Path, query: str) -> Any:
    with reader(root, str(home)) as engine:
        assert engine is not None
        planner = engine.planner(sensitive=False, word=False, regex=False)
        node = parse_query(query)
        assert node is not None
        return planner.plan(node)


def _texts(root: Path, query: str) -> list[str]:
    result = api.search(query, root=root, refresh_first=False, limit=None, dedup=False)
    return sorted(r["text"] for r in result.results)


def test_a_word_no_record_holds_empties_the_and_after_one_lookup(
    indexed: Path, home: Path, lookups: list[str]
) -> None:
    plan = _plan(indexed, home, "the retry upstream zzqqxxw backoff")
    assert plan.empty
    # the absent word (no whole term, the longest) is looked up first, and alone
    assert lookups == ["zzqqxxw"]
    result = api.search("the retry upstream zzqqxxw backoff", root=indexed, refresh_first=False)
    assert result.results == [] and result.stats["total"] == 0
    assert result.stats["total_exact"] is True


def test_words_are_looked_up_rarest_first(
    indexed: Path, home: Path, lookups: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_plan, "FEW", 0)  # never few: every word is looked up
    plan = _plan(indexed, home, "the retry jitter")
    assert not plan.empty and plan.exact
    # the planned words were counted before the short word (their ids collected): the
    # last word is then counted with them for less than the whole AND, once more
    assert plan.count == 1 and plan.ids == [2]
    # "jitter" is a whole term of one record, "retry" of three, "the" short: last
    assert lookups == ["jitter", "retry", "the"]
    assert _texts(indexed, "the retry jitter") == [TEXTS[1]]


def test_short_words_are_verified_when_the_rest_leaves_few_candidates(
    indexed: Path, home: Path, lookups: list[str]
) -> None:
    plan = _plan(indexed, home, "the retry")
    # "retry" leaves three candidates: "the" is not looked up, verification checks it
    assert lookups == ["retry"]
    assert not plan.exact and plan.count == 3
    assert _texts(indexed, "the retry") == sorted([TEXTS[0], TEXTS[1]])
    lookups.clear()
    assert _texts(indexed, "retry zq") == []  # a short word no record holds
    assert "zq" not in lookups
    result = api.search("the retry", root=indexed, refresh_first=False)
    assert result.stats["total"] == 2 and result.stats["total_exact"] is True
    assert result.stats["candidates"] == 3 and result.stats["mode"] == "whole"
    assert all(r["why"]["terms"] == ["the", "retry"] for r in result.results)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("retry OR zzqqxx", [TEXTS[0], TEXTS[1], TEXTS[4]]),  # an empty branch drops out
        ("zzqqxx OR qqzzyy", []),  # every branch empty: the OR is empty
        ("retry -zzqqxx", [TEXTS[0], TEXTS[1], TEXTS[4]]),  # NOT of nothing: nothing out
        ("retry -the", [TEXTS[4]]),
        ('"retry loop" zzqqxx', []),
        ('"retry loop" the', [TEXTS[0]]),
        ("etr the", [TEXTS[0], TEXTS[1]]),  # substrings inside words still match
        ("agent:claude-code zzqqxx", []),
        ("agent:claude-code retry", [TEXTS[0], TEXTS[1], TEXTS[4]]),
        ("agent:claude-code retry the", [TEXTS[0], TEXTS[1]]),
    ],
)
def test_answers_with_absent_words_match_a_scan(
    indexed: Path, query: str, expected: list[str]
) -> None:
    assert _texts(indexed, query) == sorted(expected)


def test_long_words_are_verified_once_the_rarer_ones_leave_few(
    indexed: Path, home: Path, lookups: list[str]
) -> None:
    # "upstream" (and "jitter") is a whole term of one record, the longer goes first: it
    # alone leaves one candidate, so "jitter", "backoff" and "retry" are never looked up
    plan = _plan(indexed, home, "retry backoff upstream jitter")
    assert lookups == ["upstream"]
    assert not plan.exact and plan.count == 1 and plan.ids is not None and len(plan.ids) == 1
    assert _texts(indexed, "retry backoff upstream jitter") == [TEXTS[1]]
    lookups.clear()
    # a long word the candidate lacks ("loop", a whole term elsewhere, shorter than
    # "jitter"): verification drops the candidate, "loop" is never looked up
    assert _texts(indexed, "loop jitter") == []
    assert lookups == ["jitter"]
    assert _texts(indexed, "loop backs") == [TEXTS[0]]
    result = api.search("retry backoff upstream jitter", root=indexed, refresh_first=False)
    assert result.stats["total"] == 1 and result.stats["total_exact"] is True
    assert result.stats["candidates"] == 1 and result.stats["mode"] == "whole"
    assert result.results[0]["why"]["terms"] == ["retry", "backoff", "upstream", "jitter"]


def test_collected_candidates_are_not_searched_again(
    indexed: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched: list[Any] = []
    original = Engine.candidate_ids

    def recording(self: Engine, query: Any, at_most: int | None = None) -> list[int]:
        searched.append(query)
        return original(self, query, at_most)

    monkeypatch.setattr(Engine, "candidate_ids", recording)
    # "backoff" whole in TEXTS[1] only, "back" inside TEXTS[0]: one whole-word record
    plan = _plan(indexed, home, "retry back the")
    assert plan.ids is not None and len(plan.ids) == 2  # "back" (no whole term) first: 2
    result = api.search("retry back the", root=indexed, refresh_first=False, dedup=False)
    assert [r["text"] for r in result.results] == [TEXTS[0], TEXTS[1]]
    # the candidates came from the plan; only the whole-word query (alone) was searched
    assert len(searched) == 1
    assert str(searched[0]) != str(plan.query)


def test_whole_words_rank_first_among_collected_candidates(indexed: Path) -> None:
    # "off" is a whole word of TEXTS[0] ("backs off") and inside "backoff" of TEXTS[1];
    # "retry" whole in both: TEXTS[0] matches every term as a whole word and comes first
    # whatever the cheap score says
    result = api.search("retry off", root=indexed, refresh_first=False, dedup=False)
    assert [r["text"] for r in result.results] == [TEXTS[0], TEXTS[1]]
    assert result.stats["mode"] == "whole"
    result = api.search("retry backoff", root=indexed, refresh_first=False, dedup=False)
    assert [r["text"] for r in result.results] == [TEXTS[1]]


def test_a_word_that_pays_is_looked_up_and_intersected_with_the_cheapest_counted(
    indexed: Path, home: Path, lookups: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once counted, the next word is looked up when the cost model says the candidates
    it drops cost more to verify; it is then counted with the cheapest counted word alone
    (ids intersected), not with the whole AND again."""
    counts: list[Any] = []
    original = search_plan.Planner._counted

    def counting(self: search_plan.Planner, plan: Any) -> Any:
        counts.append(plan.query)
        return original(self, plan)

    monkeypatch.setattr(search_plan.Planner, "_counted", counting)
    # no word counted with the first count (test_words_that_pay_are_counted_with_the_first)
    monkeypatch.setattr(search_plan, "BITS", 0)
    # "retry" leaves 3 candidates; "the" is verified on them at the measured costs
    plan = _plan(indexed, home, "the retry")
    assert lookups == ["retry"] and not plan.exact and plan.count == 3
    lookups.clear()
    counts.clear()
    monkeypatch.setattr(search_plan, "VERIFY_US", 1e12)  # every dropped candidate pays
    # "the" is a whole term of 3 of the 5 records: taken as independent of "retry" it
    # drops some candidates (3x as likely together, as measured, it would drop none)
    monkeypatch.setattr(search_plan, "TOGETHER", 1.0)
    plan = _plan(indexed, home, "the retry")
    assert lookups == ["retry", "the"]
    # exact now: "the" was looked up; 2 of the 3 hold it; one evaluation of the AND only
    assert plan.exact and plan.count == 2 and plan.ids is not None and len(plan.ids) == 2
    assert len(counts) == 1
    assert _texts(indexed, "the retry") == sorted([TEXTS[0], TEXTS[1]])
    result = api.search("the retry", root=indexed, refresh_first=False)
    assert result.stats["total"] == 2 and result.stats["candidates"] == 2
    # a pair that may hold more records than it collects: the whole AND is counted
    lookups.clear()
    counts.clear()
    monkeypatch.setattr(search_plan, "PAIRED", 1)
    plan = _plan(indexed, home, "the retry")
    assert lookups == ["retry", "the"] and plan.exact and plan.count == 2
    assert len(counts) == 2


def test_words_that_pay_are_counted_with_the_first_count(
    indexed: Path, home: Path, lookups: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Words weighed before the first count are evaluated in it, each a bit of a
    candidate's score: the candidates come out narrowed by all of them, with no pair
    searched afterwards (one evaluation of every term set)."""
    searches: list[Any] = []
    original = search_plan.Planner._counted_with

    def counting(self: search_plan.Planner, plan: Any, further: list[Any]) -> Any:
        searches.append(len(further))
        return original(self, plan, further)

    monkeypatch.setattr(search_plan.Planner, "_counted_with", counting)
    paired: list[Any] = []
    pairing = search_plan.Planner._narrowed

    def narrowing(self: search_plan.Planner, *args: Any) -> Any:
        paired.append(args)
        return pairing(self, *args)

    monkeypatch.setattr(search_plan.Planner, "_narrowed", narrowing)
    monkeypatch.setattr(search_plan, "VERIFY_US", 1e12)  # every dropped candidate pays
    monkeypatch.setattr(search_plan, "TOGETHER", 1.0)  # words as independent
    # "upstream" (one record) first; "jitter", "backoff", "retry" each counted with it
    plan = _plan(indexed, home, "retry backoff upstream jitter the")
    assert lookups[0] == "upstream" and sorted(lookups[1:]) == ["backoff", "jitter", "retry", "the"]
    assert searches == [4] and not paired
    assert plan.exact and plan.count == 1 and plan.ids is not None and len(plan.ids) == 1
    # a word some candidates lack: they are dropped by its bit, the others kept
    searches.clear()
    lookups.clear()
    plan = _plan(indexed, home, "retry the loop")
    assert searches == [2] and not paired and plan.exact and plan.count == 1
    assert _texts(indexed, "retry the loop") == [TEXTS[0]]
    assert _texts(indexed, "retry the") == sorted([TEXTS[0], TEXTS[1]])
    # more candidates than expected, too many to collect: the words taken are in the plan
    # (not narrowed by their bits), the AND counted whole afterwards (the root's count)
    monkeypatch.setattr(search_plan, "COLLECT", 2)
    monkeypatch.setattr(search_plan, "TOGETHER", 0.5)
    searches.clear()
    plan = _plan(indexed, home, "retry the")
    assert searches == [1] and plan.exact and plan.count == 2
    assert _texts(indexed, "retry the") == sorted([TEXTS[0], TEXTS[1]])

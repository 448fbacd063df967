"""Phrases whose words are inside many terms: planned as regex phrases, never a scan."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.search import phrase
from test_index_fixtures import ROWS, register, store_dir, write_file

#: more terms end with ``retry`` / start with ``backoff`` than one alternation takes
BROAD = 3 * phrase.PHRASE_TERMS


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def rec(text: str) -> dict[str, object]:
    return {"session": "s1", "role": "user", "kind": "prompt", "text": text}


def _home(home: Path) -> list[str]:
    long = "x" * 30  # long terms: one position's terms need several alternations
    texts = [f"{long}{i:03d}retry and later backoff{i:03d}q" for i in range(BROAD)]  # apart
    texts += [f"w{i}retry backoffz{i} adjacent" for i in range(0, BROAD, 7)]
    texts += ["retry backoff", "no retry, backoff", "retry\nbackoff", "autoretry backoffs"]
    write_file(store_dir(home) / "a.jsonl", [rec(t) for t in texts])
    api.refresh(home=str(home), rows=ROWS)
    return texts


def _answer(query: str) -> tuple[list[str], dict[str, object]]:
    result = api.search(query, refresh_first=False, limit=None, dedup=False)
    return sorted(r["text"] for r in result.results), result.stats


def test_a_phrase_of_two_broad_words_reads_only_its_candidates(home: Path) -> None:
    texts = _home(home)
    expected = sorted(t for t in texts if "retry backoff" in t.lower())
    got, stats = _answer('"retry backoff"')
    assert got == expected and stats["total"] == len(expected) and stats["total_exact"]
    # the positions (suffixes of retry, prefixes of backoff) as regex phrases: the records
    # holding both words apart are not candidates (those with the words' terms adjacent but
    # other characters between them are: "no retry, backoff", "retry\nbackoff")
    assert stats["mode"] != "scan"
    assert stats["candidates"] == len(expected) + 2
    three, _ = _answer('"retry backoffz7 adj"')
    assert three == [t for t in texts if "retry backoffz7 adj" in t]


def test_a_phrase_too_broad_for_regex_phrases_is_still_exact(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _home(home)
    monkeypatch.setattr(phrase, "PHRASE_CHUNKS", 1)  # the long terms need more than one
    expected = sorted(t for t in texts if "retry backoff" in t.lower())
    got, stats = _answer('"retry backoff"')
    assert got == expected and stats["total_exact"]
    assert stats["mode"] != "scan"  # one position's terms still constrain
    assert stats["candidates"] > len(expected)  # ... without the phrase


def test_alternations_stay_under_tantivys_regex_size() -> None:
    terms = sorted(f"{'ab' * 20}{i:04d}retry" for i in range(500))
    chunks = phrase._alternations(terms)
    assert chunks is not None and len(chunks) > 1
    # the shared start and end are written once; each chunk keeps under the budget
    assert all(c.startswith("abab") and c.endswith("retry") for c in chunks)
    assert all(len(c) <= phrase.PHRASE_CHARS + 60 for c in chunks)
    assert phrase._alternations(["a" * (phrase.PHRASE_CHARS + 1), "b"]) is None


def test_a_phrase_with_a_rare_word_verifies_the_records_holding_its_words(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phrase whose words come together in few records takes those as its candidates
    (no positions read, no regex phrase built) and verifies each: the same answer as the
    regex phrase, which leaves fewer candidates."""
    from agentdex.search import plan

    texts = [f"alpha beta gamma {i}" for i in range(300)]
    texts += ["zorblat alpha beta", "alpha zorblat", "zorblat and then alphabet", "zorblat"]
    write_file(store_dir(home) / "a.jsonl", [rec(t) for t in texts])
    api.refresh(home=str(home), rows=ROWS)
    built: list[object] = []
    real = phrase.phrase_query
    monkeypatch.setattr(plan, "phrase_query", lambda *a: built.append(a) or real(*a))
    got, stats = _answer('"zorblat alpha"')
    assert got == ["zorblat alpha beta"] and stats["total_exact"]
    assert stats["candidates"] == 3 and not built  # the records holding both words
    monkeypatch.setattr(plan, "PHRASE_VERIFY", 0)  # the regex phrase, as before
    again, stats = _answer('"zorblat alpha"')
    assert again == got and stats["candidates"] == 1 and built

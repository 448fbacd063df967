"""The labelled set for search by meaning (bench/semantic_set.py) is what issue 20 asks:
at least 40 queries, each in other words than its conversation, over target
conversations and distractors; exact phrases that are in their conversation; a
title for every conversation (bench/semantic_eval.py --titles). Data checks only:
the recall numbers come from bench/semantic_eval.py (docs/search.md)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from semantic_set import CONVERSATIONS, PHRASES, QUERIES, TITLES


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _text(cid: str) -> str:
    return " ".join(text for _, text in CONVERSATIONS[cid][2])


def test_forty_queries_or_more_over_targets_and_distractors() -> None:
    assert len(QUERIES) >= 40
    targets = {cid for cid in CONVERSATIONS if cid.startswith("c")}
    distractors = {cid for cid in CONVERSATIONS if cid.startswith("d")}
    assert len(distractors) >= 20
    assert {target for _, target in QUERIES} == targets  # every target is sought
    assert len({query for query, _ in QUERIES}) == len(QUERIES)


def test_every_query_is_in_other_words_than_its_conversation() -> None:
    for query, target in QUERIES:
        missing = _words(query) - _words(_text(target))
        assert missing, (query, target)  # a bag of its words cannot be matched exactly


def test_phrases_are_in_their_conversation_and_titles_cover_every_one() -> None:
    for phrase, target in PHRASES:
        assert phrase.strip('"').lower() in _text(target).lower(), phrase
    assert set(TITLES) == set(CONVERSATIONS)
    assert all(0 < len(title) <= 80 for title in TITLES.values())

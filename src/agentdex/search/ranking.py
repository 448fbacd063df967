"""Relevance: text match quality x who wrote it x how recent x where it was.

``score = text * prior(kind, role) * recency * here``. A cheap score (record
length, prior, recency, here) orders every match from metadata alone; the
best ``REFINE`` are then rescored on their text (more, and whole-word,
occurrences of the query terms score higher). The prior ranks what a person
typed above assistant prose above tool output; recency halves the weight of
very old records at most.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from agentdex.search.engine import Hit

#: kind -> prior weight (what a person typed > assistant prose > tool output)
KIND_PRIOR: dict[str, float] = {
    "prompt": 1.0,
    "summary": 0.7,
    "message": 0.65,
    "reasoning": 0.45,
    "tool_call": 0.35,
    "tool_result": 0.3,
}
ROLE_PRIOR: dict[str, float] = {"user": 1.0, "assistant": 0.9, "system": 0.6, "tool": 0.8}
RECENCY_DAYS = 30.0
REFINE = 200
HERE_BOOST = 2.0


def base_score(
    kind: str, role: str, timestamp: float | None, tlen: int, now: float, here: bool = False
) -> float:
    prior = KIND_PRIOR.get(kind, 0.5) * ROLE_PRIOR.get(role, 0.8)
    if timestamp is None:
        recency = 0.5
    else:
        recency = 0.5 + 0.5 * math.exp(-max(0.0, now - timestamp) / 86400.0 / RECENCY_DAYS)
    length = 1.0 / (1.0 + math.log2(1.0 + tlen / 400.0))
    return length * prior * recency * (HERE_BOOST if here else 1.0)


def score_rows(
    rows: list[tuple[Any, ...]], now: float, here: Callable[[tuple[Any, ...]], bool] | None
) -> list[tuple[float, tuple[Any, ...]]]:
    """(cheap score, row) for light rows, best first (ties: newer first, then id)."""
    scored = [
        (base_score(r[1], r[2], r[3], r[4], now, here is not None and here(r)), r) for r in rows
    ]
    scored.sort(key=lambda item: (-item[0], -(item[1][3] or 0.0), item[1][0]))
    return scored


def occurrence_score(text: str, needles: list[str], sensitive: bool) -> float:
    """More, and whole-word, occurrences score higher (dampened)."""
    haystack = text if sensitive else text.lower()
    total = 0.0
    for needle in needles:
        target = needle if sensitive else needle.lower()
        if not target:
            continue
        count = min(haystack.count(target), 50)
        if not count:
            continue
        word = re.search(rf"(?<!\w){re.escape(target)}(?!\w)", haystack) is not None
        total += (1.0 + math.log1p(count)) * (1.5 if word else 1.0)
    return total or 1.0


def refine(hits: list[Hit], needles: list[str], sensitive: bool) -> list[Hit]:
    """Rescore hits (text already loaded) on their occurrences; best first."""
    if needles:
        for hit in hits:
            hit.score *= occurrence_score(hit.text, needles, sensitive)
    hits.sort(key=lambda h: (-h.score, -(h.timestamp or 0.0), h.id))
    for hit in hits:
        hit.score = round(hit.score, 6)
    return hits


def time_order(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Newest first; records without a timestamp last."""
    rows.sort(key=lambda r: (r[3] is None, -(r[3] or 0.0), -r[0]))
    return rows

"""Relevance: text match quality x who wrote it x how recent x where it was.

``score = text * prior(kind, role) * recency * here``. ``text`` favours short
records and, for the best candidates, more and whole-word occurrences of the
query terms; the prior ranks what a person typed above assistant prose above
tool output; recency halves the weight of very old records at most.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable

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


def prior(hit: Hit) -> float:
    return KIND_PRIOR.get(hit.kind, 0.5) * ROLE_PRIOR.get(hit.role, 0.8)


def recency(hit: Hit, now: float) -> float:
    if hit.timestamp is None:
        return 0.5
    age_days = max(0.0, now - hit.timestamp) / 86400.0
    return 0.5 + 0.5 * math.exp(-age_days / RECENCY_DAYS)


def length_norm(tlen: int) -> float:
    return 1.0 / (1.0 + math.log2(1.0 + tlen / 400.0))


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


def rank(
    hits: list[Hit],
    *,
    needles: list[str],
    sensitive: bool,
    text_of: Callable[[Hit], str],
    here: Callable[[Hit], bool] | None = None,
    now: float | None = None,
    limit: int | None = None,
) -> list[Hit]:
    """Order by relevance; the best ``REFINE`` candidates are rescored on their text."""
    now = time.time() if now is None else now
    for hit in hits:
        boost = 2.0 if here is not None and here(hit) else 1.0
        hit.score = length_norm(hit.tlen) * prior(hit) * recency(hit, now) * boost
    hits.sort(key=lambda h: (-h.score, -(h.timestamp or 0.0), h.id))
    head = hits[: max(REFINE, limit or 0)]
    if needles:
        for hit in head:
            hit.text = text_of(hit)
            hit.score *= occurrence_score(hit.text, needles, sensitive)
        head.sort(key=lambda h: (-h.score, -(h.timestamp or 0.0), h.id))
        hits[: len(head)] = head
    for hit in hits:
        hit.score = round(hit.score, 6)
    return hits


def sort_by_time(hits: list[Hit]) -> list[Hit]:
    """Newest first; records without a timestamp last."""
    hits.sort(key=lambda h: (h.timestamp is None, -(h.timestamp or 0.0), -h.id))
    return hits

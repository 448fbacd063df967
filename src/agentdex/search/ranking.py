"""Relevance: text match quality x who wrote it x how recent x where it was.

``score = text * prior(kind, role) * length * recency * here``. The cheap
score (everything but ``text``, :mod:`agentdex.index.scores`) orders the
matches; the run reads them best first without scoring every match
(:mod:`agentdex.search.run`). The best ``REFINE`` are then rescored on their
text (more, and whole-word, occurrences of the query terms score higher). The
prior ranks what a person typed above assistant prose above tool output;
recency halves the weight of very old records at most.
"""

from __future__ import annotations

import math
import re

from agentdex.index.scores import HERE_BOOST, recency, static_score
from agentdex.search.engine import Hit

REFINE = 100


def base_score(
    kind: str, role: str, timestamp: float | None, tlen: int, now: float, here: bool = False
) -> float:
    """The cheap score of one record."""
    boost = HERE_BOOST if here else 1.0
    return static_score(kind, role, tlen) * recency(timestamp, now) * boost


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

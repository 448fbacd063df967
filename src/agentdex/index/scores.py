"""The cheap relevance score's parts, shared by the indexer (levels) and the ranker.

``cheap score = prior(kind, role) x length(tlen) x recency(timestamp) x here``.
The first two do not depend on the query or the clock, so the indexer stores
them per record as a *level*: the static part quantized on a log scale.
Within one level a newer record always scores higher, so the ranker can read
each level's candidates newest first and stop early (a threshold algorithm)
instead of scoring every match.
"""

from __future__ import annotations

import math

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
HERE_BOOST = 2.0
#: each level spans this factor of the static score (narrow: the first page stops sooner when
#: a level's records are close to its ceiling); LEVELS of them cover 1.0 down to ~0.01
LEVEL_STEP = 1.1
LEVELS = 48


def static_score(kind: str, role: str, tlen: int) -> float:
    """The clock- and query-independent part: who wrote it and how focused (short) it is."""
    prior = KIND_PRIOR.get(kind, 0.5) * ROLE_PRIOR.get(role, 0.8)
    length = 1.0 / (1.0 + math.log2(1.0 + tlen / 400.0))
    return prior * length


def recency(timestamp: float | None, now: float) -> float:
    """1.0 for now, halving the weight of very old records at most; 0.5 when unknown."""
    if timestamp is None:
        return 0.5
    return 0.5 + 0.5 * math.exp(-max(0.0, now - timestamp) / 86400.0 / RECENCY_DAYS)


#: :func:`level_of` by (kind, role, length) for the records a build met (most texts are short:
#: the same few thousand keys come back); cleared when it grows past ``_LEVELS_KEPT``
_LEVELS: dict[tuple[str, str, int], int] = {}
_LEVELS_KEPT = 1 << 14


def level_of(kind: str, role: str, tlen: int) -> int:
    """0 for the best static scores; ``LEVELS - 1`` for the rest."""
    key = (kind, role, tlen)
    level = _LEVELS.get(key)
    if level is None:
        if len(_LEVELS) >= _LEVELS_KEPT:
            _LEVELS.clear()
        level = _LEVELS[key] = _level_of(kind, role, tlen)
    return level


def _level_of(kind: str, role: str, tlen: int) -> int:
    score = static_score(kind, role, tlen)
    if score <= 0.0:
        return LEVELS - 1
    return min(LEVELS - 1, max(0, int(-math.log(score) / math.log(LEVEL_STEP))))


def level_ceiling(level: int) -> float:
    """The highest static score a record of ``level`` can have."""
    return float(LEVEL_STEP ** (-level))

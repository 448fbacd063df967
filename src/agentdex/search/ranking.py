"""Relevance: text match quality x who wrote it x how recent x where it was.

``score = text * prior(kind, role) * length * recency * here``. The cheap
score (everything but ``text``, :mod:`agentdex.index.scores`) orders the
matches; the run reads them best first without scoring every match
(:mod:`agentdex.search.run`). Records whose terms match as whole words or
phrases come first, then those matching only inside a word (``race`` in
``gracefully``): matching itself stays substring. The best ``REFINE`` are
then rescored on their text (more, and whole-word, occurrences of the query
terms score higher) within those two tiers. The
prior ranks what a person typed above assistant prose above tool output;
recency halves the weight of very old records at most.
"""

from __future__ import annotations

import math
import re

from agentdex.index.scores import HERE_BOOST, recency, static_score
from agentdex.search.engine import Hit
from agentdex.search.query import And, Node, Or, Term

#: a token as the postings' tokenizer cuts them: a run of letters and digits
_TOKEN = re.compile(r"[^\W_]+")

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
        word = _whole_occurrence(haystack, target)
        total += (1.0 + math.log1p(count)) * (1.5 if word else 1.0)
    return total or 1.0


def _whole_occurrence(haystack: str, target: str) -> bool:
    r"""``re.search(rf"(?<!\w){re.escape(target)}(?!\w)", haystack)``, by ``str.find``: the
    regex, opening with a lookbehind, tried every position of a text that holds the target
    only inside words (a tool output of tens of kilobytes: a millisecond); this tries the
    target's occurrences. A word character is what ``\w`` matches: alphanumeric or ``_``."""
    size, end = len(target), len(haystack)
    at = haystack.find(target)
    while at != -1:
        before = at == 0 or not _word_char(haystack[at - 1])
        if before and (at + size >= end or not _word_char(haystack[at + size])):
            return True
        at = haystack.find(target, at + 1)
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def refine(
    hits: list[Hit], needles: list[str], sensitive: bool, words: set[int] | None = None
) -> list[Hit]:
    """Rescore hits (text already loaded) on their occurrences; best first, the hits whose
    terms match as whole words (``words``, their ids) before the others."""
    if needles:
        for hit in hits:
            hit.score *= occurrence_score(hit.text, needles, sensitive)
    whole = words or set()
    hits.sort(key=lambda h: (h.id not in whole, -h.score, -(h.timestamp or 0.0), h.id))
    for hit in hits:
        hit.score = round(hit.score, 6)
    return hits


def whole_words(node: Node | None, text: str) -> bool:
    """Do the query's text terms match ``text`` as whole words (or phrases of them)?

    The Python twin of :meth:`agentdex.search.plan.Planner.whole_words` (which asks the
    postings), for runs whose rows carry their text (the team database): a term's
    tokens must be consecutive whole tokens of the lower-cased text.
    """
    return _whole(node, _TOKEN.findall(text.lower())) is True


def _whole(node: Node | None, tokens: list[str]) -> bool | None:
    """True/False, or None where the node says nothing about words (as the planner's None)."""
    if isinstance(node, Term):
        wanted = _TOKEN.findall(node.text.lower())
        if not wanted:
            return None
        size = len(wanted)
        return any(tokens[i : i + size] == wanted for i in range(len(tokens) - size + 1))
    if isinstance(node, And | Or):
        parts = [_whole(child, tokens) for child in node.children]
        if isinstance(node, Or) and any(part is None for part in parts):
            return None
        kept = [part for part in parts if part is not None]
        if not kept:
            return None
        return all(kept) if isinstance(node, And) else any(kept)
    return None

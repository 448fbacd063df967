"""Phrase candidates: a multi-token literal as tantivy regex phrases over the term list's terms.

A literal of several tokens (``"retry backoff"``, ``foo.bar``) matches records where
its tokens are adjacent terms: the first must *end* a term, the last *start* one, the
ones between are whole terms (:mod:`agentdex.search.plan`). Each position's terms come
from the term list; a regex phrase over them is a superset of the records holding the
literal (verification decides).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

#: phrase positions expand to at most this many terms in one alternation regex
PHRASE_TERMS = 64
#: a phrase position of more terms (a word that ends many terms: ``retry`` of
#: ``"retry backoff"`` in ``checkretry``...) is split into alternations of at most
#: PHRASE_CHARS characters (tantivy's regexes compile to at most 1000 states), one
#: regex phrase each, at most PHRASE_CHUNKS of them; a position that must start a term
#: is the prefix regex ``word.*`` (tantivy walks only that part of its dictionary)
PHRASE_CHARS = 800
PHRASE_CHUNKS = 16
#: the most terms a phrase position is looked up for
PHRASE_LIMIT = PHRASE_TERMS * PHRASE_CHUNKS


def phrase_query(
    tantivy: Any,
    schema: Any,
    positions: list[tuple[int, list[str] | None]],
    prefixes: dict[int, str],
) -> Any:
    """A regex phrase over the positions that constrain (their terms as alternations,
    a broad prefix as ``word.*``), an OR of a few when one position's terms need several
    alternations; None when fewer than two positions constrain.

    Without it a phrase of two broad words (``"retry backoff"``: ~1,000 terms end
    with ``retry``, ~800 start with ``backoff`` at 1 GB) constrained nothing and every
    record was read.
    """
    words: list[tuple[int, list[str]]] = []
    for position, terms in positions:
        if not terms:
            continue
        if len(terms) > PHRASE_TERMS and position in prefixes:
            words.append((position, [re.escape(prefixes[position]) + ".*"]))
            continue
        chunks = _alternations(terms)
        if chunks is not None:
            words.append((position, chunks))
    # the split positions, fewest alternations first, while their product stays small
    kept = [w for w in words if len(w[1]) == 1]
    product = 1
    for word in sorted((w for w in words if len(w[1]) > 1), key=lambda w: len(w[1])):
        if product * len(word[1]) <= PHRASE_CHUNKS:
            kept.append(word)
            product *= len(word[1])
    if len(kept) < 2:
        return None
    kept.sort()
    base = min(position for position, _ in kept)
    q = tantivy.Query
    phrases = [
        q.regex_phrase_query(schema, "text", list(combination))
        for combination in itertools.product(
            *[[(position - base, regex) for regex in chunks] for position, chunks in kept]
        )
    ]
    if len(phrases) == 1:
        return phrases[0]
    should = tantivy.Occur.Should
    return q.boolean_query([(should, phrase) for phrase in phrases])


def _alternations(terms: list[str]) -> list[str] | None:
    """``terms`` as regexes of at most :data:`PHRASE_CHARS` characters of alternatives each,
    the part all of them share at the start and at the end written once (a phrase's first
    word ends every term of its position); None when that takes more than
    :data:`PHRASE_CHUNKS` regexes, or a term alone is longer."""
    head = _shared_start(terms)
    shortest = min(len(term) for term in terms)
    tail = _shared_start([term[::-1] for term in terms])[: shortest - len(head)][::-1]
    around = len(re.escape(head)) + len(re.escape(tail))
    chunks: list[str] = []
    chunk: list[str] = []
    chars = 0
    for term in terms:
        escaped = re.escape(term[len(head) : len(term) - len(tail)])
        if around + len(escaped) > PHRASE_CHARS:
            return None
        if chunk and (around + chars + len(escaped) > PHRASE_CHARS or len(chunk) >= PHRASE_TERMS):
            chunks.append(f"{re.escape(head)}(?:{'|'.join(chunk)}){re.escape(tail)}")
            chunk, chars = [], 0
        chunk.append(escaped)
        chars += len(escaped) + 1
    if chunk:
        chunks.append(f"{re.escape(head)}(?:{'|'.join(chunk)}){re.escape(tail)}")
    return chunks if len(chunks) <= PHRASE_CHUNKS else None


def _shared_start(words: list[str]) -> str:
    """The longest string every one of ``words`` starts with."""
    first, last = min(words), max(words)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]

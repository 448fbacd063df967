"""One search, from a parsed query to the ranked page: the part whose cost must track matches.

Three ways to answer, chosen per query:

* **everything** (few candidates, ``limit=None`` or an exact count asked
  for): every candidate is verified (unless the plan is exact), scored and
  deduplicated; the total is exact.
* **first page** (many candidates): candidates are read in the order of
  their best possible score and verified one by one until the page is
  certain. For relevance, each ``level`` (the static part of the cheap
  score, :mod:`agentdex.index.scores`) is read newest first; a candidate is
  taken once its score beats every level's ceiling for what is still unread
  (a threshold algorithm), so the page is the exact top of the cheap score
  without touching most matches. For time order, one stream newest first.
  The total is then a lower bound (the exact number of matching records
  when the plan is exact).

For relevance, the records whose text terms match as whole words or phrases
(``words``, :meth:`~agentdex.search.plan.Planner.whole_words`) come before the
ones that match only inside a word: their streams are read as if their scores
were :data:`WORD_TIER` times higher, so the threshold algorithm takes them
first and the page stays the exact top of (tier, cheap score).
* **scan** (nothing to look up: only NOT, a regex without literals,
  punctuation-only text): every block, in order, within the time budget.

The *tail* (records the postings or the term list do not cover yet: a few after
a small refresh, up to every record a build has not indexed yet mid-build) is
verified first, within :data:`TAIL_SHARE` of the budget, so the postings'
candidates are always read too. A first page out of time ends with the rows
already known to match (verified tail rows, an exact plan's candidates) in the
same order: what it returns is right, and the answer says it stopped.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from agentdex.index.scores import (
    HERE_BOOST,
    LEVELS,
    level_ceiling,
    recency,
    static_score,
)
from agentdex.search.budget import TIME_BUDGET, Budget
from agentdex.search.engine import (
    AGENT,
    BLOCK,
    ID,
    KIND,
    ROLE,
    SESSION,
    THASH,
    TLEN,
    TS,
    Engine,
)
from agentdex.search.plan import Candidates
from agentdex.search.query import Node

#: exact plans with at most this many candidates are answered whole (exact total)
FULL_EXACT = 20_000
#: plans that need verification are answered whole up to this many candidates
FULL_VERIFIED = 3_000
#: a whole-word match outranks any match inside a word (cheap scores span < 10^4)
WORD_TIER = 1e6
#: whole-word candidates that many times the page make reading the other tier lazy
LAZY_WORDS = 4
#: the whole-word records among candidates the planner collected are read from the words'
#: own postings (no evaluation of the plan again) when these are at most this many
WORDS_ALONE = 20_000
#: at most this share of the time budget goes to verifying the tail (mid-build it can be
#: a hundred thousand records: all of a 5 s budget on a busy machine, and none left for
#: the postings)
TAIL_SHARE = 0.5
#: candidates read per page from one stream (grows as a stream is drained); the first
#: page of every level comes from one aggregation, and 100 is what a page of results needs
PAGE = 100

Row = tuple[Any, ...]
#: a stream of candidates: (level, here, whole words); None where not split that way
StreamKey = tuple[int | None, bool | None, bool | None]
HerePredicate = Callable[[Row], bool]


@dataclass(slots=True)
class Outcome:
    """What a run found: ``rows`` best first with their cheap scores (deduplicated if asked)."""

    rows: list[tuple[float, Row]]
    total: int
    total_exact: bool
    candidates: int
    #: exact number of matching records before deduplication, when known
    matched: int | None
    mode: str
    stopped: str | None = None
    notes: list[str] = field(default_factory=list)
    #: ids of the rows whose terms match as whole words (ranked first)
    word_ids: set[int] = field(default_factory=set)


def dedup_key(row: Row) -> tuple[Any, ...]:
    return (row[AGENT], row[SESSION], row[ROLE], row[THASH])


def cheap_score(row: Row, now: float, here: HerePredicate | None) -> float:
    """:func:`agentdex.search.ranking.base_score` of a light row."""
    boost = HERE_BOOST if here is not None and here(row) else 1.0
    return static_score(row[KIND], row[ROLE], row[TLEN]) * recency(row[TS], now) * boost


def _order_key(sort: str, word_ids: set[int]) -> Callable[[tuple[float, Row]], Any]:
    if sort == "time":
        return lambda item: (item[1][TS] is None, -(item[1][TS] or 0.0), -item[1][ID])
    return lambda item: (item[1][ID] not in word_ids, -item[0], -(item[1][TS] or 0.0), item[1][ID])


class SearchRun:
    """Answers one parsed query against one :class:`Engine` (see the module docstring)."""

    def __init__(
        self,
        engine: Engine,
        node: Node,
        plan: Candidates,
        *,
        now: float,
        here: HerePredicate | None,
        here_query: Any,
        only_here: bool,
        dedup: bool,
        budget: Any = None,
        words: Any = None,
        word_streams: Callable[[], Any] | None = None,
        one_word: bool = False,
        words_at_most: int | None = None,
    ) -> None:
        self.engine = engine
        #: the whole-word query (relevance only), and the candidates known to match it
        self.words = words
        #: makes what a first page reads whole-word candidates from (None: the plan's query
        #: AND ``words``): a query holding exactly the records that match the query and
        #: ``words`` among those that match the query, and only records of the plan
        #: (:meth:`~agentdex.search.plan.Planner.word_streams`), cheaper to evaluate
        self.word_streams: Callable[[], Any] | None = word_streams
        #: the whole words are one word (a single term's postings): its streams are read
        #: level by level when reached instead of aggregated first
        self.one_word = one_word and words is not None
        self._word_query: Any = None
        #: at most how many records ``words`` matches (None: unknown)
        self.words_at_most = words_at_most
        self.word_ids: set[int] = set()
        #: whole-word candidates the first pages counted (see _first_pages)
        self.whole_words = 0
        #: (here, word) parts whose streams are read only when reached, level by level
        #: (see _first_pages)
        self.lazy: list[tuple[bool | None, bool | None]] = []
        self.node = node
        self.plan = plan
        self.now = now
        self.here = here
        self.here_query = here_query
        self.only_here = only_here
        self.dedup = dedup
        self.budget = budget
        self.stopped: str | None = None
        self.tail: set[int] = set()
        #: tail records that match (checked once, up front)
        self.tail_matches: list[Row] = []
        #: why the tail's verification stopped before its end (None: every record checked)
        self.tail_stopped: str | None = None
        #: what the answer's ``notes`` say about this run
        self.notes: list[str] = []

    # -- budget ------------------------------------------------------------------------------
    def out_of_time(self) -> bool:
        if self.budget is not None and self.budget.expired():
            self.stopped = getattr(self.budget, "reason", None) or "time-budget"
            return True
        return False

    # -- the candidate query with --only-here -----------------------------------------------
    def _query(self) -> Any:
        if self.only_here and self.here_query is not None:
            return self.engine.both(self.plan.query, self.here_query)
        return self.plan.query

    def _admits(self, row: Row) -> bool:
        """Is a postings candidate checked at all? (Tail records are decided in :meth:`run`.)"""
        if row[ID] in self.tail:
            return False  # a stale posting of a tail record: the tail answers for it
        return not (self.only_here and self.here is not None and not self.here(row))

    def _accept(self, row: Row) -> bool:
        """Does a postings candidate match?"""
        return self._admits(row) and (self.plan.exact or self.engine.matches(self.node, row))

    def _check_tail(self, tail: list[Row]) -> None:
        """Verify the records the postings do not cover yet, within :data:`TAIL_SHARE` of
        the budget; past it the rest stay unverified (missed) and the answer is stopped."""
        self.tail = {row[ID] for row in tail}
        if self.only_here and self.here is not None:
            tail = [row for row in tail if self.here(row)]
        part = self.budget.share(TAIL_SHARE) if isinstance(self.budget, Budget) else None

        def stop() -> bool:
            return self.out_of_time() or (part is not None and part.expired())

        self.tail_matches, decided = self.engine.matching(self.node, tail, stop)
        if decided < len(tail):
            budget_reason = getattr(self.budget, "reason", None)
            self.stopped = (
                self.stopped or (part.reason if part else None) or budget_reason or TIME_BUDGET
            )
            self.tail_stopped = self.stopped
            self.notes.append(
                f"verified {decided:,} of {len(tail):,} records the index does not cover yet"
                " (the rest: after the time budget's share for them)"
            )

    # -- entry --------------------------------------------------------------------------------
    def run(self, *, want: int | None, sort: str, exact_total: bool) -> Outcome:
        if self.plan.query is None:
            return self._scan(sort)
        tail = self.engine.tail_rows()
        self._check_tail(tail)
        query = self._query()
        exact = self.plan.exact
        known = self.plan.count if query is self.plan.query else None
        if want is None or exact_total:
            count = self.engine.count(query) if known is None else known
            return self._whole(query, sort, count + len(tail), known=count)
        if known is not None and known + len(tail) <= (FULL_EXACT if exact else FULL_VERIFIED):
            # the planner counted them (few): no pages to read first
            return self._whole(query, sort, known + len(tail), known=known)
        # one pass gives the count and the first pages (per level, or by time); with whole
        # words first, the count of every candidate is likely needed apart (the other tier
        # is read lazily): it is counted on another thread meanwhile (tantivy lets go of
        # the GIL), and waited for either way
        counting = self.engine.count_aside(query) if self.words is not None else None
        if counting is not None and known is not None:
            counting = partial(int, known)  # the planner counted them already
        try:
            pages = self._first_pages(query, sort, want)
            many = self.whole_words > (FULL_EXACT if exact else FULL_VERIFIED)
            if counting is not None and many and any(word is not True for _, word in self.lazy):
                # the count decides between a first page and every candidate: with this many
                # whole-word candidates a page is likely, so it is read meanwhile (and
                # dropped in the rare case of few candidates after all)
                return self._page_or_whole(query, pages, sort, want, tail, counting)
        finally:
            counted = counting() if counting is not None else None
        count = sum(total for (_, _, word), (total, _) in pages.items() if word is not True)
        if any(word is not True for _, word in self.lazy):  # the other tier: read if needed
            count = self.engine.count(query) if counted is None else counted
        candidates = count + len(tail)
        if candidates <= (FULL_EXACT if exact else FULL_VERIFIED):
            return self._whole(query, sort, candidates, known=count)
        matched = count + len(self.tail_matches) if exact and not self.tail_stopped else None
        return self._first_page(query, pages, sort, want, candidates, matched)

    def _page_or_whole(
        self,
        query: Any,
        pages: dict[StreamKey, tuple[int, list[int]]],
        sort: str,
        want: int,
        tail: list[Row],
        counting: Callable[[], int],
    ) -> Outcome:
        """The first page, read while ``counting`` counts the candidates on its thread; if
        they are few after all, the answer is every candidate, as if no page had been read
        (the blocks it read are forgotten: the statistics are the same too)."""
        mark = self.engine.block_mark()
        page = self._first_page(query, pages, sort, want, 0, None)
        count = counting()
        candidates = count + len(tail)
        exact = self.plan.exact
        if candidates <= (FULL_EXACT if exact else FULL_VERIFIED):
            self.engine.back_to(mark)
            self.word_ids = set()
            self.stopped = self.tail_stopped
            return self._whole(query, sort, candidates, known=count)
        page.candidates = candidates
        page.matched = count + len(self.tail_matches) if exact and not self.tail_stopped else None
        return page

    def _first_pages(
        self, query: Any, sort: str, want: int
    ) -> dict[StreamKey, tuple[int, list[int]]]:
        """(level, here, word) -> (candidates, first ids): every stream's first page."""
        size = PAGE
        if sort == "time":
            count, ids = self.engine.newest_first(query, max(PAGE, want))
            return {(None, None, None): (count, ids)}
        pages: dict[StreamKey, tuple[int, list[int]]] = {}
        here_parts: list[bool | None] = [None]
        if self.here_query is not None and not self.only_here:
            here_parts = [True, False]
        word_parts: list[bool | None] = [None] if self.words is None else [True, False]
        words = 0  # whole-word candidates (or a superset: see word_streams)
        for word_flag in word_parts:
            if word_flag is True and self.one_word:
                # one word's postings, read level by level when reached, cost less than an
                # aggregation over all of them; their count is one more read of them
                for here_flag in here_parts:
                    words += self.engine.count(self._part(query, here_flag, True))
                self.lazy.extend((here, True) for here in here_parts)
                continue
            if word_flag is False and words >= LAZY_WORDS * want:
                # whole-word candidates enough to fill the page, most likely: the other
                # tier's streams are read only if the whole words run out
                self.lazy.extend((here, False) for here in here_parts)
                break
            for here_flag in here_parts:
                part = self._part(query, here_flag, word_flag)
                for level, page in self.engine.level_pages(part, size).items():
                    pages[(level, here_flag, word_flag)] = page
                    if word_flag:
                        words += page[0]
        self.whole_words = words
        return pages

    # -- everything ---------------------------------------------------------------------------
    def _whole(self, query: Any, sort: str, candidates: int, known: int | None = None) -> Outcome:
        """Every candidate verified; ``known``: the postings' count of ``query`` when the
        caller has it (each evaluation of a query of many terms costs milliseconds)."""
        collected = self.plan.ids if query is self.plan.query else None
        ids = collected if collected is not None else self.engine.candidate_ids(query, known)
        rows = self.engine.light(ids)
        rows.sort(key=lambda r: r[BLOCK])  # by block: each block is decompressed once
        matched: list[Row] = list(self.tail_matches)
        admitted = [row for row in rows if self._admits(row)]
        # the blocks verification reads are decompressed ahead on another thread
        reads = [] if self.plan.exact else [row[BLOCK] for row in admitted]
        with self.engine.reading_ahead(reads):
            for i, row in enumerate(admitted):
                if not i % 64 and self.out_of_time():  # a clock read costs microseconds here
                    break
                if self.plan.exact or self.engine.matches(self.node, row):
                    matched.append(row)
        if matched and self.words is not None and sort != "time":
            self.word_ids = self._whole_word_ids(query, known, collected)
        return self._finish(matched, sort, candidates, "whole")

    def _whole_word_ids(
        self, query: Any, known: int | None, collected: list[int] | None
    ) -> set[int]:
        """Ids of the candidates whose terms match as whole words."""
        at_most = self.words_at_most
        if collected is not None and at_most is not None and at_most > WORDS_ALONE:
            # the words' own count (whole terms: cheap) is often far below their rarest's
            at_most = min(at_most, self.engine.count(self.words))
        if collected is not None and at_most is not None and at_most <= WORDS_ALONE:
            # the words' own postings (whole terms, intersected: cheap) among the collected
            # candidates, instead of another evaluation of the plan's term sets
            return set(self.engine.candidate_ids(self.words, at_most)).intersection(collected)
        whole_words = self.engine.both(query, self.words)  # a subset: ``known`` bounds it
        return set(self.engine.candidate_ids(whole_words, known))

    def _scan(self, sort: str) -> Outcome:
        ids = self.engine.scan(self.node, stop=self.out_of_time)
        rows = self.engine.light(ids)
        if self.only_here and self.here is not None:
            rows = [r for r in rows if self.here(r)]
        outcome = self._finish(rows, sort, self.engine.count(None), "scan")
        outcome.notes.append("nothing to look up in the index: scanned every record")
        return outcome

    def _finish(self, matched: list[Row], sort: str, candidates: int, mode: str) -> Outcome:
        scored = [(cheap_score(r, self.now, self.here), r) for r in matched]
        scored.sort(key=_order_key(sort, self.word_ids))
        before = len(scored)
        if self.dedup:
            scored = _dedup(scored)
        return Outcome(
            rows=scored,
            total=len(scored),
            total_exact=self.stopped is None,
            candidates=candidates,
            matched=before if self.stopped is None else None,
            mode=mode,
            stopped=self.stopped,
            notes=list(self.notes),
            word_ids={r[ID] for _, r in scored if r[ID] in self.word_ids},
        )

    # -- first page ---------------------------------------------------------------------------
    def _first_page(
        self,
        query: Any,
        pages: dict[StreamKey, tuple[int, list[int]]],
        sort: str,
        want: int,
        candidates: int,
        matched: int | None,
    ) -> Outcome:
        streams = []
        parts: dict[tuple[bool | None, bool | None], Any] = {}  # one query per (here, word)

        def part(here: bool | None, word: bool | None) -> Any:
            if (here, word) not in parts:
                parts[(here, word)] = self._part(query, here, word)
            return parts[(here, word)]

        for (level, here, word), (count, ids) in sorted(
            pages.items(),
            key=lambda item: (item[0][2] is False, item[0][0] or 0, item[0][1] is False),
        ):
            stream = _Stream(self, part(here, word), level, here, count, ids)
            stream.word = bool(word)
            streams.append(stream)
        for here, word in self.lazy:  # read on demand, level by level (count unknown)
            for level in range(LEVELS):
                stream = _Stream(self, part(here, word), level, here)
                stream.word = bool(word)
                streams.append(stream)
        accepted = self._merge(streams, sort, want)
        return Outcome(
            rows=accepted,
            total=len(accepted),
            total_exact=False,
            candidates=candidates,
            matched=matched,
            mode="first-page",
            stopped=self.stopped,
            notes=list(self.notes),
            word_ids={r[ID] for _, r in accepted if r[ID] in self.word_ids},
        )

    def _part(self, query: Any, here: bool | None, word: bool | None) -> Any:
        """A first page's stream query: ``query`` (here/elsewhere) or, for the whole-word
        streams, :attr:`word_streams` when given (every candidate is verified either way,
        and a matching record is in the one exactly when it is in the other)."""
        if word is True and self.words is not None and self.word_streams is not None:
            if self._word_query is None:
                self._word_query = self.word_streams()
            base = self._word_query
            if base is None:  # nothing cheaper: the plan's query AND the words
                return self._word_part(self._here_part(query, here), word)
            if self.only_here and self.here_query is not None:
                base = self.engine.both(base, self.here_query)
            return self._here_part(base, here)
        return self._word_part(self._here_part(query, here), word)

    def _word_part(self, query: Any, word: bool | None) -> Any:
        """The candidates matching as whole words (True), or all of them (False, None).

        The "all" streams hold the whole-word candidates too (cheaper than a NOT): one
        read there first is pushed at its plain score, but none is taken before every
        whole-word stream (ranked WORD_TIER higher) is read past it, and then the same
        record has come through its own stream and is taken there; :meth:`_merge` skips
        the second copy.
        """
        if word is True and self.words is not None:
            return self.engine.both(query, self.words)
        return query

    def _here_part(self, query: Any, here: bool | None) -> Any:
        if here is None:
            return query
        if here:
            return self.engine.both(query, self.here_query)
        tantivy = self.engine._tantivy()
        return tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, self.engine._query(query)),
                (tantivy.Occur.MustNot, self.here_query),
            ]
        )

    def _merge(self, streams: list[_Stream], sort: str, want: int) -> list[tuple[float, Row]]:
        """Take candidates best first until ``want`` are verified (the threshold algorithm)."""
        heap: list[tuple[float, float, int, Row]] = []
        for row in self.tail_matches:
            self._push(heap, row, sort)
        accepted: list[tuple[float, Row]] = []
        seen: set[tuple[Any, ...]] = set()
        taken: set[int] = set()
        # a stream's bound and exhaustion change only when it fetches: recomputed then
        live = [s for s in streams if not s.exhausted]
        bound = max((s.bound() for s in live), default=float("-inf"))

        def take(key: float, row: Row) -> None:
            taken.add(row[ID])
            if self.dedup:
                dkey = dedup_key(row)
                if dkey in seen:
                    return
                seen.add(dkey)
            accepted.append((-key if sort != "time" else 0.0, row))

        while len(accepted) < want:
            if self.out_of_time():
                # what is known to match without reading a block follows, in the same
                # order: tail rows (checked in run()) and an exact plan's candidates
                while heap and len(accepted) < want:
                    key, _, _, row = heapq.heappop(heap)
                    known = row[ID] in self.tail or (self.plan.exact and self._admits(row))
                    if known and row[ID] not in taken:
                        take(key, row)
                break
            if heap and -heap[0][0] >= bound:
                key, _, _, row = heapq.heappop(heap)
                if row[ID] in taken:
                    continue  # a whole-word record read through an "all" stream too
                if row[ID] not in self.tail and not self._accept(row):
                    continue  # (tail rows in the heap were checked in run())
                take(key, row)
                continue
            if not live:
                break
            best = max(live, key=lambda s: s.bound())
            for row in best.fetch():
                if row[ID] not in self.tail:  # a stale posting: the tail answers for it
                    if best.word:
                        self.word_ids.add(row[ID])
                    self._push(heap, row, sort)
            live = [s for s in streams if not s.exhausted]
            bound = max((s.bound() for s in live), default=float("-inf"))
        if sort != "time":
            accepted = [(cheap_score(r, self.now, self.here), r) for _, r in accepted]
        return accepted

    def _push(self, heap: list[tuple[float, float, int, Row]], row: Row, sort: str) -> None:
        if sort == "time":
            key = row[TS] if row[TS] is not None else -1.0
        else:
            key = cheap_score(row, self.now, self.here)
            if row[ID] in self.word_ids:
                key *= WORD_TIER
        heapq.heappush(heap, (-key, -(row[TS] or 0.0), row[ID], row))


class _Stream:
    """One ordered source of candidates: a level (and here/elsewhere), newest first.

    ``count`` and ``first`` come from :meth:`Engine.level_pages` (every level's
    first page in one pass); later pages are read with offsets.
    """

    def __init__(
        self,
        run: SearchRun,
        query: Any,
        level: int | None,
        here: bool | None,
        count: int | None = None,
        first: list[int] | None = None,
    ) -> None:
        self.run = run
        #: the stream's own query (with its level) is built only when a page past the first
        #: is read: building a boolean query copies its parts (a field's thousands of ids)
        self.base = query
        self._query: Any = None
        self.level = level
        self.here = here
        self.count = count
        self.prefetched = first
        self.offset = 0
        self.page = PAGE
        self.exhausted = count == 0
        #: its candidates match as whole words (ranked first; set by the run)
        self.word = False
        #: newest time not yet read (None before the first read: no bound on time)
        self.next_ts: float | None = None
        self.started = False

    @property
    def query(self) -> Any:
        if self._query is None:
            engine = self.run.engine
            level = self.level
            base = self.base
            self._query = base if level is None else engine.both(base, engine.level_query(level))
        return self._query

    def bound(self) -> float:
        """The best key any unread candidate of this stream can have."""
        if self.level is None:  # time order: the key is the timestamp
            return float("inf") if not self.started else (self.next_ts or -1.0)
        ceiling = level_ceiling(self.level) * (WORD_TIER if self.word else 1.0)
        if self.here is True or (self.here is None and self.run.only_here and self.run.here):
            ceiling *= HERE_BOOST
        if not self.started:
            return ceiling
        known = self.next_ts if self.next_ts is not None and self.next_ts >= 0 else None
        return ceiling * recency(known, self.run.now)

    def fetch(self) -> list[Row]:
        engine = self.run.engine
        if self.prefetched is not None:
            ids, self.prefetched = self.prefetched, None
        else:
            ids = engine.newest_page(self.query, self.offset, self.page)
            self.page = min(self.page * 2, 4096)
        self.started = True
        self.offset += len(ids)
        if not ids or (self.count is not None and self.offset >= self.count):
            self.exhausted = True
        rows = engine.light(ids)
        if rows:
            oldest = min((r[TS] if r[TS] is not None else -1.0) for r in rows)
            # the postings order by whole seconds: unread records may be up to 1 s newer
            self.next_ts = math.floor(oldest) + 1.0 if oldest >= 0 else -1.0
        return rows


def _dedup(ordered: list[tuple[float, Row]]) -> list[tuple[float, Row]]:
    """Drop repeats of the same text by the same role in the same session (first wins)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for item in ordered:
        key = dedup_key(item[1])
        if key in seen:
            continue
        seen.add(key)
        out.append(item)
    return out

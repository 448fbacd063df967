"""From a parsed query to the records worth verifying: a tantivy query over the postings.

A plan is a :class:`Candidates`: a tantivy query whose matches are a
*superset* of the records that match the query (never a miss), or ``None``
for "every record", and whether it is *exact* (its matches are exactly the
answer, so they need no verification and their count is the total).

Text terms (grep semantics: a term is any substring of the lower-cased
text) map onto the word postings like this. The substring ``s`` is split by
the very tokenizer that split the text (:func:`agentdex.index.postings.analyzer`);
a token with a non-token character before it in ``s`` must *start* a term
of the text, one with a non-token character after it must *end* one, and
one with both is a whole term; tokens are adjacent in ``s`` exactly when
their terms are adjacent in the text. Partial tokens expand through the
term list (:class:`~agentdex.index.postings.Vocabulary`); a multi-token
substring becomes a phrase over the selective positions. Only a single
token that is the whole lower-cased literal is exact.

* case-sensitive literals use their ASCII runs, lower-cased (ASCII case
  mapping is one-to-one and context-free; ``Σ``/``ς`` or ``İ`` are not);
* ``-w`` uses the literal's plan, verified (word characters differ between
  Python's ``\\w`` and the tokenizer);
* regexes use their required literals (:mod:`agentdex.search.regex_literals`):
  sequences and alternations of literals become AND/OR of literal plans;
* fields are exact queries on the ``meta``/``file``/``ts`` fields;
* ``NOT x`` excludes ``x``'s candidates only when they are exact, else it
  constrains nothing (verification decides).

The children of an AND are planned rarest first (fields, then text terms whose
tokens are not common words, longest first) and planning stops at the first
child that nothing can match (a token no term of the list contains): the AND
is then empty, and the other children's term lookups (each a scan of the term
list) are never made. A many-word query with one word the history never holds
costs one lookup instead of one per word. When only short words are left (under
four characters: ``the``, ``out``, ``we``, each inside thousands of terms, whose
union costs more to evaluate than the rest of the query) and the children
planned so far already leave at most :data:`FEW` candidates, the short words
are not looked up: the plan is no longer exact, and verification checks them
on those few records (the answer is the same).
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass, replace
from typing import Any

from agentdex.search.fields import FIELD_COLUMNS, field_matches_value, path_file_ids
from agentdex.search.phrase import PHRASE_LIMIT, phrase_query
from agentdex.search.query import And, Field, Node, Not, Or, Term

#: a partial token matching more terms than this constrains nothing
MAX_EXPANSION = 100_000
#: a partial token whose most common term is in this share of all records, and that
#: expands to more terms than this (a union that costs milliseconds per evaluation), is
#: "dense": its records are read in score order and verified instead
DENSE_SHARE = 0.2
DENSE_TERMS = 2048
#: a phrase whose positions' terms likely come together in at most this many records has
#: those as its candidates, each verified (at most ~26 ms at 1 GB, :data:`VERIFY_US`),
#: instead of a regex phrase over every position (~45-70 ms for the bench's phrase at 1 GB);
#: a position of more than PHRASE_AND_TERMS terms is left to verification there
PHRASE_VERIFY = 200
PHRASE_AND_TERMS = 16
#: a partial token's terms are looked up one by one (a union) up to this many, else as a
#: term set (:meth:`Planner.text_set`)
UNION_TERMS = 2048
#: an AND whose planned children leave at most this many candidates verifies its
#: short words (under four characters) instead of looking them up
FEW = 1_000
SHORT = 4
#: an AND whose planned children are estimated to leave at most ``FEW * SLACK``
#: candidates counts them before looking up its next child (estimates assume words are
#: independent; in histories they come together, 2-6x as often as that on the generated
#: corpus, but each word's estimate divides by 10-50: at face value, 32 queries of common
#: words looked up the same words with 26% fewer counts than with 8x slack, each count an
#: evaluation of every term set planned so far, while a lookup of the split term list is a
#: few milliseconds)
SLACK = 1
#: a count of candidates also collects their record ids when there are at most this many
#: (the run then verifies them without evaluating the query again)
COLLECT = 3_000
#: What looking up one more word of an AND costs and saves once its planned words are
#: counted, in microseconds of one core on the machine it was measured on (only their
#: ratios decide; s9-plan in docs/performance.md): verifying a candidate (its block read,
#: decompressed and checked: 0.10-0.19 ms a candidate at 1 GB), a term-list lookup (at
#: least; 3-35 ms at 1 GB, growing with the terms it finds), and an evaluation of a term
#: set (tantivy reads every posting of every term into a bitset): a fixed part, per term
#: and per record holding one.
VERIFY_US = 130.0
LOOKUP_US = 3_000.0
LOOKUP_TERM_US = 3.5
SET_US = 500.0
TERM_US = 4.0
RECORD_US = 0.015
#: words of a query come together: a candidate of the words counted holds the next word
#: this many times as often as the word's share of all records says (2-3x measured on the
#: generated corpus, s9-plan)
TOGETHER = 3.0
#: a word looked up after the others were counted (with their ids) is intersected with
#: the cheapest of them alone, its records collected, when they are at most this many
PAIRED = 50_000
#: at most this many words are counted with an AND's first count (a bit of a candidate's
#: score each: :meth:`Planner._counted_with`)
BITS = 16
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")


@dataclass(frozen=True, slots=True)
class Candidates:
    """``query`` None means every record; ``exact``: the matches need no verification;
    ``empty``: no record can match (an AND holding it matches nothing either);
    ``count``: how many records ``query`` matches, when planning counted them;
    ``ids``: their record ids, when planning collected them (at most :data:`COLLECT`);
    ``size``: an estimate of how many records ``query`` matches (None: unknown);
    ``cost``: what an evaluation of ``query`` costs, in the units of :data:`VERIFY_US`
    (None: unknown)."""

    query: Any
    exact: bool
    empty: bool = False
    count: int | None = None
    ids: list[int] | None = None
    size: float | None = None
    cost: float | None = None


EVERYTHING = Candidates(None, False)


class Planner:
    """Builds candidate queries against one open postings index."""

    def __init__(
        self,
        searcher: Any,
        schema: Any,
        vocabulary: Any,
        db: sqlite3.Connection,
        *,
        sensitive: bool,
        word: bool,
        regex: bool,
    ) -> None:
        import tantivy

        from agentdex.index.postings import LONG_TOKEN, analyzer

        self.tantivy = tantivy
        self.searcher = searcher
        self.schema = schema
        self.vocabulary = vocabulary
        self.db = db
        self.sensitive = sensitive
        self.word = word
        self.regex = regex
        self.analyzer = analyzer()
        #: every node planned so far (a query's subtrees are planned once per planner)
        self._plans: dict[Node, Candidates] = {}
        #: while a weighed word is looked up: the most terms it may expand to
        self._most: int | None = None
        #: records holding a token too long for tantivy: candidates of every text term
        long_tokens = tantivy.Query.term_query(schema, "flags", LONG_TOKEN)
        self.long_tokens = long_tokens if searcher.search(long_tokens, 1).count else None

    # -- combinators -----------------------------------------------------------------------
    def _and(self, parts: list[Candidates]) -> Candidates:
        for part in parts:
            if part.empty:
                return part
        constrained = [p for p in parts if p.query is not None]
        if not constrained:
            return EVERYTHING
        exact = all(p.exact for p in parts)
        costs = [p.cost for p in constrained]
        cost = None if None in costs else sum(c for c in costs if c is not None)
        if len(constrained) == 1:
            return Candidates(constrained[0].query, exact, cost=cost)
        occur = self.tantivy.Occur.Must
        return Candidates(
            self.tantivy.Query.boolean_query([(occur, p.query) for p in constrained]),
            exact,
            cost=cost,
        )

    def _or(self, parts: list[Candidates]) -> Candidates:
        if parts and all(p.empty for p in parts):
            return parts[0]
        if any(p.query is None for p in parts):
            return EVERYTHING
        if len(parts) == 1:
            return parts[0]
        occur = self.tantivy.Occur.Should
        return Candidates(
            self.tantivy.Query.boolean_query([(occur, p.query) for p in parts]),
            all(p.exact for p in parts),
        )

    def _not(self, child: Candidates) -> Candidates:
        if child.query is None or not child.exact:
            return EVERYTHING
        q = self.tantivy.Query
        occur = self.tantivy.Occur
        return Candidates(
            q.boolean_query([(occur.Must, q.all_query()), (occur.MustNot, child.query)]), True
        )

    def _with_long_tokens(self, plan: Candidates) -> Candidates:
        if plan.query is None or self.long_tokens is None:
            return plan
        should = self.tantivy.Occur.Should
        query = self.tantivy.Query.boolean_query([(should, plan.query), (should, self.long_tokens)])
        return Candidates(query, False, size=plan.size)  # cost unknown: a record list more

    # -- the tree ------------------------------------------------------------------------------
    def plan(self, node: Node) -> Candidates:
        """The candidates of ``node``, the query's root; an AND likely to leave few of them
        is counted here, with their ids (the run then evaluates it no more)."""
        plan = self._planned(node)
        if plan.query is None or plan.count is not None:
            return plan
        if (isinstance(node, And) and plan.size is not None and plan.size <= FEW * SLACK) or (
            self._phrase(node) and not plan.exact
        ):
            # a phrase's regex phrases cost the most to evaluate: counted once, with its ids,
            # the run needs no other evaluation of them
            plan = self._plans[node] = self._counted(plan)
        return plan

    def _phrase(self, node: Node) -> bool:
        """Is ``node`` a text term of several tokens (a phrase), not a regex?"""
        if self.regex or not isinstance(node, Term):
            return False
        return len(self.analyzer.pre_tokenize(node.text.lower()).tokens) > 1

    def _planned(self, node: Node, most: int | None = None) -> Candidates:
        """The candidates of a node of the query (each planned once per planner);
        ``most``: a text term of one token expanding to more terms than this is not worth
        its lookup (the lookup stops there and the node constrains nothing)."""
        known = self._plans.get(node)
        if known is not None:
            return known
        if most is not None:
            self._most = most
            try:
                plan = self._plan(node)
            finally:
                self._most = None
            if plan.query is None or plan.cost is None:
                return plan  # cut short: not remembered
            self._plans[node] = plan
            return plan
        known = self._plans[node] = self._plan(node)
        return known

    def _plan(self, node: Node) -> Candidates:
        if isinstance(node, Term):
            return self.term(node)
        if isinstance(node, Field):
            return self.field(node)
        if isinstance(node, Not):
            return self._not(self._planned(node.child))
        if isinstance(node, And):
            return self._plan_and(node)
        assert isinstance(node, Or)
        return self._or([self._planned(child) for child in node.children])

    def _plan_and(self, node: And) -> Candidates:
        """The children rarest first, until what the planned ones leave is few enough that
        verifying the rest costs less than looking them up.

        Before the planned children are counted, every child is looked up. They are
        counted (one evaluation of the planned part, which also collects their ids) when
        only short words are left, or when the estimate says they may leave at most
        :data:`FEW` (:data:`SLACK`). Once counted, the next child is looked up only while
        that pays (:meth:`_worth`): the candidates it would drop, each a block to verify,
        against a lookup and one more evaluation of every planned term set. A child not
        looked up is verified on the candidates (the plan is no longer exact); the
        children after it are still weighed (a short word is sorted last, yet may be rarer).
        The first count also narrows by the words weighed ahead of it (:meth:`_ahead`).
        """
        parts: list[Candidates] = []
        everyone = max(1, int(self.searcher.num_docs))
        estimate = float(everyone)
        counted: Candidates | None = None  # the last count of planned children
        covered = 0  # how many of ``parts`` it counted
        verified = False  # a child is left to verification
        children = sorted(node.children, key=self._rarity)
        ahead: set[int] = set()  # children weighed before their turn (:meth:`_ahead`)
        for at, child in enumerate(children):
            if at in ahead:
                continue
            if (
                parts
                and covered < len(parts)
                and (self._rarity(child)[:2] == (1, 1) or estimate <= FEW * SLACK)
            ):
                if counted is None:  # the first count narrows by the words that pay too
                    further, skipped, empty = self._ahead(children, at, ahead, estimate, everyone)
                    if empty is not None:
                        return empty
                    counted, narrowed = self._counted_with(self._and(parts), further)
                    if narrowed:
                        verified = verified or bool(skipped)
                    else:  # too many to collect: a word not taken is weighed in its turn
                        ahead.difference_update(skipped)
                    parts.extend(further)
                    covered = len(parts) if narrowed else len(parts) - len(further)
                    estimate = float(counted.count or 0)
                    for part in further if not narrowed else ():
                        estimate *= min(1.0, (part.size or 0.0) / everyone)
                    if at in ahead:
                        continue
                else:
                    counted, covered = self._narrowed(counted, covered, parts, everyone), len(parts)
                    estimate = float(counted.count or 0)
            few = counted is not None and covered == len(parts) and (counted.count or 0) <= FEW
            again = self._again(counted, parts) if few and counted is not None else None
            most: int | None = None
            if few and counted is not None:
                most = self._most_terms(child, counted, again, everyone)
                if most is not None and most <= 0:
                    verified = True  # cannot pay: checked on the candidates instead
                    continue
            part = self._planned(child, most)
            if part.empty:
                return part  # nothing holds this child: the others need no lookup
            if few and counted is not None and not self._pays(part, counted, again, everyone):
                verified = True
                continue
            parts.append(part)
            if part.size is not None:
                estimate *= min(1.0, part.size / everyone)
            if few:
                counted, covered = self._narrowed(counted, covered, parts, everyone), len(parts)
                estimate = float(counted.count or 0)
        if counted is not None and counted.ids is not None and covered < len(parts):
            # collected ids narrow with the rest for less than the root's count of them all
            counted, covered = self._narrowed(counted, covered, parts, everyone), len(parts)
        if counted is not None and covered == len(parts):
            return replace(counted, exact=counted.exact and not verified)
        plan = self._and(parts)
        return replace(plan, exact=plan.exact and not verified, size=estimate)

    def _narrowed(
        self, counted: Candidates | None, covered: int, parts: list[Candidates], everyone: int
    ) -> Candidates:
        """The count (and ids) of ``parts``, of which ``counted`` counted the first
        ``covered``.

        When ``counted`` collected its ids, each part after those is evaluated with the
        cheapest counted part only (their records, at most :data:`PAIRED`, collected) and
        the ids are intersected here: the other term sets are not read again. Else (or
        when a pair may hold too many records to collect) the whole AND is evaluated."""
        plan = self._and(parts)
        if counted is None or counted.ids is None:
            return self._counted(plan)
        known = [p for p in parts[:covered] if p.cost is not None and p.size is not None]
        added = parts[covered:]
        if not known or any(p.size is None or p.query is None for p in added):
            return self._counted(plan)
        cheapest = min(known, key=lambda p: p.cost or 0.0)
        ids = counted.ids
        for part in added:
            paired = TOGETHER * (cheapest.size or 0.0) * (part.size or 0.0) / everyone
            if paired > PAIRED / 2:
                return self._counted(plan)
            found = self.searcher.search(self._and([cheapest, part]).query, PAIRED, count=True)
            if int(found.count) > PAIRED:
                return self._counted(plan)
            addresses = [address for _, address in found.hits]
            holding = set(self.searcher.fast_field_values("rid", addresses))
            ids = [rid for rid in ids if rid in holding]
        return replace(plan, count=len(ids), ids=ids)

    def _ahead(
        self, children: list[Node], start: int, ahead: set[int], estimate: float, everyone: int
    ) -> tuple[list[Candidates], set[int], Candidates | None]:
        """Before the first count of an AND: which of its words from ``children[start]`` on
        (single tokens) are looked up to be counted with it.

        Counted with the planned children, a word costs its own term set once (one bit of
        each candidate's score, :meth:`_counted_with`), where narrowing the counted
        candidates by it afterwards re-read the cheapest counted term set too, once per
        word (:meth:`_narrowed`). A word is weighed as after a count (:meth:`_most_terms`,
        :meth:`_pays`, nothing to read again) on the candidates expected: ``estimate``
        (independent words) times :data:`TOGETHER`, narrowed by each word taken (none when
        that is more than :data:`COLLECT`: the count would not collect them). Returns
        the words taken, the children not taken (left to verification when the count
        collects its candidates) and the AND's plan when a word is in no record (the AND
        is empty). Each child weighed joins ``ahead``.
        """
        further: list[Candidates] = []
        skipped: set[int] = set()
        expected = estimate * TOGETHER
        if expected > COLLECT:
            return further, skipped, None  # likely too many to collect: nothing to narrow
        for at in range(start, len(children)):
            child = children[at]
            token = self._single_token(child)
            if token is None or self.sensitive or len(further) >= BITS:
                continue  # weighed in its turn, after the count
            ahead.add(at)
            share = min(1.0, TOGETHER * self.searcher.doc_freq("text", token) / everyone)
            spare = VERIFY_US * expected * (1.0 - share) - LOOKUP_US - SET_US
            most = max(0, int(spare / (TERM_US + LOOKUP_TERM_US)))
            part = self._planned(child, most) if most > 0 else None
            if part is not None and part.empty:
                return [], skipped, part
            if part is None or part.query is None or part.cost is None or part.size is None:
                skipped.add(at)
                continue
            share = min(1.0, TOGETHER * part.size / everyone)
            if VERIFY_US * expected * (1.0 - share) <= part.cost:
                skipped.add(at)
                continue
            further.append(part)
            expected *= share
        return further, skipped, None

    def _counted_with(self, plan: Candidates, further: list[Candidates]) -> tuple[Candidates, bool]:
        """``plan`` counted (:meth:`_counted`), in the same evaluation narrowed by each of
        ``further``: the candidates holding all of them, with their ids, and True; or, when
        ``plan`` leaves more than :data:`COLLECT` (too many to collect), its count alone and
        False.

        Each further part scores ``2**i`` on a candidate holding it (``plan`` scores 0,
        tantivy sums a boolean query's scores: exact in its 32-bit floats for up to
        :data:`BITS` parts); a candidate holding them all scores ``2**k - 1``."""
        if not further or plan.query is None:
            return self._counted(plan), False
        q, occur = self.tantivy.Query, self.tantivy.Occur
        clauses = [(occur.Must, q.const_score_query(plan.query, 0.0))]
        clauses.extend(
            (occur.Should, q.const_score_query(part.query, float(1 << i)))
            for i, part in enumerate(further)
        )
        found = self.searcher.search(q.boolean_query(clauses), limit=COLLECT, count=True)
        count = int(found.count)
        if count > COLLECT:
            return replace(plan, count=count, ids=None), False
        every = float((1 << len(further)) - 1)
        addresses = [address for score, address in found.hits if score == every]
        ids = list(self.searcher.fast_field_values("rid", addresses))
        narrowed = self._and([plan, *further])
        return replace(narrowed, count=len(ids), ids=ids), True

    @staticmethod
    def _again(counted: Candidates, parts: list[Candidates]) -> float | None:
        """What counting ``counted`` (of ``parts``) with one more part costs besides that
        part's own term set (:meth:`_narrowed`): its cheapest part when it collected its
        ids, else every part (None: unknown)."""
        costs = [p.cost for p in parts]
        if None in costs:
            return None
        known = [c for c in costs if c is not None]
        return min(known, default=0.0) if counted.ids is not None else sum(known)

    def _most_terms(
        self, child: Node, counted: Candidates, again: float | None, everyone: int
    ) -> int | None:
        """Before its lookup: at most how many terms ``child`` may expand to and still pay
        for its lookup and evaluation with the others on ``counted``'s candidates (0: it
        cannot pay; None: no bound known, looked up only while the candidates are many).

        ``again``: what counting them with one more part costs besides its own term set.
        A text term of one token holds at least the records that have its token as a whole
        term (one term-dictionary lookup): the fewest it can drop."""
        count = counted.count or 0
        token = self._single_token(child)
        if token is None or again is None:
            return None if count > FEW else 0
        share = min(1.0, TOGETHER * self.searcher.doc_freq("text", token) / everyone)
        spare = VERIFY_US * count * (1.0 - share) - LOOKUP_US - SET_US - again
        return max(0, int(spare / (TERM_US + LOOKUP_TERM_US)))

    def _pays(
        self, part: Candidates, counted: Candidates, again: float | None, everyone: int
    ) -> bool:
        """After its lookup: does counting ``part`` with the planned children cost less
        than verifying the candidates it would drop?"""
        count = counted.count or 0
        if part.query is None or part.cost is None or part.size is None or again is None:
            return part.query is not None and count > FEW
        share = min(1.0, TOGETHER * part.size / everyone)
        return VERIFY_US * count * (1.0 - share) > again + part.cost

    def _single_token(self, node: Node) -> str | None:
        """The one token of a plain text term (not a regex), else None."""
        if self.regex or not isinstance(node, Term):
            return None
        from agentdex.index.postings import rust_safe

        tokens = self.analyzer.pre_tokenize(rust_safe(node.text.lower())).tokens
        return tokens[0].text if len(tokens) == 1 else None

    def _counted(self, plan: Candidates) -> Candidates:
        """``plan`` with its count, and its candidates' ids when at most :data:`COLLECT`:
        one evaluation of its query."""
        if plan.query is None:
            return plan
        found = self.searcher.search(plan.query, limit=COLLECT, count=True)
        count = int(found.count)
        ids = None
        if count <= COLLECT:
            addresses = [address for _, address in found.hits]
            ids = list(self.searcher.fast_field_values("rid", addresses))
        return replace(plan, count=count, ids=ids)

    def _rarity(self, node: Node) -> tuple[int, int, int, int]:
        """Sort key of an AND's children: the likeliest to match nothing first.

        Fields need no term lookup; a text term goes by its least common token: one
        that is a whole term in fewer records (a token that is no term at all: 0)
        and longer comes first, and a token under four characters (a common word's
        length, that many terms contain) last. Regex terms keep their order.
        """
        if isinstance(node, Field):
            return (0, 0, 0, 0)
        if not isinstance(node, Term) or self.regex:
            return (2, 0, 0, 0)
        from agentdex.index.postings import rust_safe

        text = rust_safe(node.text.lower())
        tokens = [t.text for t in self.analyzer.pre_tokenize(text).tokens]
        if not tokens:
            return (1, 1, 0, 0)
        df = self.searcher.doc_freq
        rarest = min((int(len(t) < SHORT), df("text", t), -len(t)) for t in tokens)
        return (1, *rarest)

    def term(self, term: Term) -> Candidates:
        if self.regex:
            from agentdex.search.regex_literals import Alternatives, required_literals

            requirement, ignore_case = required_literals(term.text, self.sensitive)
            if requirement is None:
                return EVERYTHING
            plan = self._requirement(requirement, ignore_case, Alternatives)
            return self._with_long_tokens(Candidates(plan.query, False, plan.empty))
        if self.sensitive:
            runs = [run.lower() for run in _ASCII_RUN.findall(term.text)]
            literals = [self.literal(run) for run in runs if run.strip()]
            plan = self._and(literals)
            size = min((p.size for p in literals if p.size is not None), default=None)
            return self._with_long_tokens(Candidates(plan.query, False, plan.empty, size=size))
        plan = self.literal(term.text.lower())
        exact = plan.exact and not self.word
        return self._with_long_tokens(replace(plan, exact=exact))

    def _requirement(self, item: Any, ignore_case: bool, alternatives: Any) -> Candidates:
        """A regex requirement tree: a literal string, an AND list or an OR set."""
        if isinstance(item, str):
            pieces = _case_pieces(item, ignore_case)
            # a piece of one or two characters is in most records: it constrains nothing
            return self._and([self.literal(p) for p in pieces if len(p.strip()) >= 3])
        if isinstance(item, alternatives):
            return self._or([self._requirement(i, ignore_case, alternatives) for i in item])
        return self._and([self._requirement(i, ignore_case, alternatives) for i in item])

    def literal(self, text: str) -> Candidates:
        """Candidates for records whose lower-cased text contains ``text`` (lower-cased)."""
        from agentdex.index.postings import MAX_TERM_BYTES, rust_safe

        text = rust_safe(text)
        tokens = self.analyzer.pre_tokenize(text).tokens
        if not tokens:
            return EVERYTHING
        length = len(text)
        #: per token: its terms, or None (constrains nothing); and whether it is in most records
        positions: list[tuple[int, list[str] | None]] = []
        #: per constraining token: how many records hold one of its terms at most (estimate)
        sizes: dict[int, int] = {}
        #: tokens that must start a term, not end one (a phrase's last): position -> token
        prefixes: dict[int, str] = {}
        dense = False
        for token in tokens:
            starts = token.char_offset_from > 0
            ends = token.char_offset_to < length
            if len(token.text.encode("utf-8")) > MAX_TERM_BYTES:
                positions.append((token.position, None))
                continue
            if starts and ends:
                positions.append((token.position, [token.text]))
                sizes[token.position] = self.searcher.doc_freq("text", token.text)
                continue
            common = DENSE_SHARE * self.searcher.num_docs
            # a token that is itself a term in most records (`the`) only needs to know
            # whether its expansion is small (an exact union) or not (dense)
            frequent = self.searcher.doc_freq("text", token.text) >= common
            single_limit = DENSE_TERMS if frequent else MAX_EXPANSION
            limit = PHRASE_LIMIT if len(tokens) > 1 else single_limit
            if self._most is not None and len(tokens) == 1:
                limit = min(limit, self._most)
            if starts:
                prefixes[token.position] = token.text
            found = self.vocabulary.expand(token.text, starts=starts, ends=ends, limit=limit)
            if found.terms is None and (frequent or found.most >= common):
                # in most records anyway: reading them in score order and verifying
                # each is cheaper than the union of thousands of posting lists
                dense = True
            positions.append((token.position, found.terms))
            if found.terms is not None:
                sizes[token.position] = found.total
        q = self.tantivy.Query
        unconstrained = Candidates(q.all_query(), False) if dense else EVERYTHING
        if any(terms == [] for _, terms in positions):
            return Candidates(q.empty_query(), False, empty=True, size=0)
        size = min(sizes.values(), default=None)
        if len(positions) == 1:
            terms = positions[0][1]
            if terms is None:
                return unconstrained
            whole = tokens[0].char_offset_from == 0 and tokens[0].char_offset_to == length
            cost = _set_cost(len(terms), size)
            if len(terms) == 1:
                query = q.term_query(self.schema, "text", terms[0])
                return Candidates(query, whole, size=size, cost=cost)
            return Candidates(self.text_set(terms), whole, size=size, cost=cost)
        few = self._few_together(positions, sizes)
        if few is not None:
            return few
        phrase = phrase_query(self.tantivy, self.schema, positions, prefixes)
        if phrase is not None:
            return Candidates(phrase, False, size=size)
        sets = [(len(terms), p, terms) for p, terms in positions if terms is not None and terms]
        if not sets:
            return unconstrained
        # one selective position: its terms
        _, position, terms = min(sets, key=lambda item: item[0])
        return Candidates(self.text_set(terms), False, size=sizes.get(position))

    def _few_together(
        self, positions: list[tuple[int, list[str] | None]], sizes: dict[int, int]
    ) -> Candidates | None:
        """A phrase's candidates as the records holding its rarest position's terms and
        every other position's few terms, anywhere (no positions read), when they are
        likely at most :data:`PHRASE_VERIFY` (each is verified); else None (a regex
        phrase). The bench's phrase at 1 GB: ``sedistimel`` (5 terms, 352 records) and
        ``commit`` leave 89 candidates in 0.2 ms, where its regex phrase took ~40 ms to
        evaluate and ~5-25 to build."""
        known = sorted(
            (sizes[p], len(terms), terms) for p, terms in positions if terms and p in sizes
        )
        if len(known) < 2:
            return None
        everyone = max(1, int(self.searcher.num_docs))
        estimate = float(known[0][0])
        parts = [known[0][2]]
        for size, count, terms in known[1:]:
            if count <= PHRASE_AND_TERMS:
                parts.append(terms)
                estimate *= min(1.0, TOGETHER * size / everyone)
        if estimate > PHRASE_VERIFY:
            return None
        must = self.tantivy.Occur.Must
        query = self.tantivy.Query.boolean_query([(must, self.text_set(t)) for t in parts])
        return Candidates(query, False, size=max(1, round(estimate)))

    def text_set(self, terms: list[str]) -> Any:
        """The records holding any of ``terms`` (each scoring 1, as a term set does).

        A term set (``TermSetQuery``) finds its terms in each segment's term dictionary
        by walking it with the set as an automaton: every transition out of each node on
        the way is tried, ~2.7 us a term per segment at 1 GB, where a term query looks
        its one term up directly. A partial token's terms are mostly rare compounds
        (``buffer``: 1,229 terms at 1 GB, three of them in 94% of its records), so a
        union of term queries, unscored, costs less up to :data:`UNION_TERMS` terms."""
        q = self.tantivy.Query
        if len(terms) == 1:
            return q.term_query(self.schema, "text", terms[0])
        if len(terms) > UNION_TERMS:
            return q.term_set_query(self.schema, "text", terms)
        should = self.tantivy.Occur.Should
        union = q.boolean_query([(should, q.term_query(self.schema, "text", t)) for t in terms])
        return q.const_score_query(union, 1.0)

    # -- ranking: whole words first ---------------------------------------------------------------
    def whole_words(self, node: Node) -> Any:
        """A query for the records where the text terms match as whole words (or phrases of
        them), or None when that splits nothing (no text term, a regex).

        Ranking only (:mod:`agentdex.search.ranking`): ``race`` in ``a race`` ranks above
        ``race`` in ``gracefully``; which records match is the plan's business. Whole
        means a whole token of the postings' tokenizer (runs of letters and digits).
        """
        if self.regex:
            return None
        q = self.tantivy.Query
        if isinstance(node, Term):
            tokens = [t.text for t in self.analyzer.pre_tokenize(node.text.lower()).tokens]
            if not tokens:
                return None
            if len(tokens) == 1:
                return q.term_query(self.schema, "text", tokens[0])
            return q.phrase_query(self.schema, "text", tokens)
        if isinstance(node, And | Or):
            parts = [self.whole_words(child) for child in node.children]
            if isinstance(node, Or) and any(part is None for part in parts):
                return None
            kept = [part for part in parts if part is not None]
            if not kept:
                return None
            if len(kept) == 1:
                return kept[0]
            occur = self.tantivy.Occur.Must if isinstance(node, And) else self.tantivy.Occur.Should
            return q.boolean_query([(occur, part) for part in kept])
        return None  # a field or a NOT: the plan has it; it does not make a word whole

    def word_streams(self, node: Node, words: Any) -> Any:
        """What a first page reads its whole-word candidates from, cheaper than the plan's
        query AND ``words``: a top-level text term's plan (the union of every term that
        holds its word) is replaced by its whole word; the other children keep their plans
        (and their whole words, if any). None when ``words`` is None.

        A record matching the query is in every child's plan, so it is in this query exactly
        when it is in ``words``. Every record this query holds is in the plan: a term's
        whole word is one of the terms its plan unites (an exact plan's word is a single
        token); a plan that is not exact gets every candidate verified anyway.
        """
        if words is None:
            return None
        children = node.children if isinstance(node, And) else (node,)
        parts = []
        for child in children:
            whole = self.whole_words(child)
            if isinstance(child, Term) and whole is not None:
                parts.append(whole)
                continue
            planned = self._planned(child).query  # planned already: read back, not again
            parts.extend(q for q in (planned, whole) if q is not None)
        if len(parts) == 1:
            return parts[0]
        occur = self.tantivy.Occur.Must
        return self.tantivy.Query.boolean_query([(occur, q) for q in parts])

    def one_word(self, node: Node) -> bool:
        """Is the query one text term of one token (its whole words one term's postings)?"""
        if self.regex or not isinstance(node, Term):
            return False
        return len(self.analyzer.pre_tokenize(node.text.lower()).tokens) == 1

    def whole_words_bound(self, node: Node) -> int | None:
        """At most how many records :meth:`whole_words` matches (its terms' record counts;
        None when unknown or nothing is split)."""
        if self.regex:
            return None
        if isinstance(node, Term):
            tokens = [t.text for t in self.analyzer.pre_tokenize(node.text.lower()).tokens]
            if not tokens:
                return None
            return min(int(self.searcher.doc_freq("text", t)) for t in tokens)
        if isinstance(node, And | Or):
            bounds = [self.whole_words_bound(child) for child in node.children]
            known = [b for b in bounds if b is not None]
            if not known:
                return None
            if isinstance(node, And):
                return min(known)
            return sum(known) if len(known) == len(bounds) else None
        return None

    # -- fields ------------------------------------------------------------------------------
    def field(self, field: Field) -> Candidates:
        from agentdex.index.postings import role_kinds

        q = self.tantivy.Query
        name, value = field.name, field.value
        if name in ("role", "kind"):
            codes = role_kinds(**{name: value})
            return Candidates(q.term_set_query(self.schema, "rk", codes), True)
        if name in ("since", "until"):
            assert field.time is not None
            # ``ts`` holds whole seconds (floor): a superset, exact for ``since`` at a whole second
            integer = self.tantivy.FieldType.Integer
            bound = max(0, math.floor(field.time))
            if name == "since":
                query = q.range_query(self.schema, "ts", integer, bound, 2**62, True, True)
                return Candidates(query, bound == field.time)
            query = q.range_query(self.schema, "ts", integer, 0, bound, True, True)
            return Candidates(query, False)
        if name == "path":
            ids = path_file_ids(self.db, value)
            return Candidates(q.term_set_query(self.schema, "file", ids), True)
        ids = context_ids(self.db, field)
        return Candidates(q.term_set_query(self.schema, "ctx", ids), True)


def _set_cost(terms: int, records: int | None) -> float | None:
    """What evaluating a term set costs (:data:`SET_US`, :data:`TERM_US`, :data:`RECORD_US`)."""
    if records is None:
        return None
    return SET_US + TERM_US * terms + RECORD_US * records


def context_ids(db: sqlite3.Connection, field: Field) -> list[int]:
    """Ids of the ``contexts`` rows (agent, session, paths, model) a field filter keeps."""
    column = FIELD_COLUMNS[field.name]
    if field.name == "agent":
        rows = db.execute("SELECT id FROM contexts WHERE agent = ?", (field.value,))
        return [cid for (cid,) in rows]
    rows = db.execute(f"SELECT id, {column} FROM contexts WHERE {column} IS NOT NULL")
    return [cid for cid, value in rows if field_matches_value(field, value)]


def _case_pieces(literal: str, ignore_case: bool) -> list[str]:
    """What of a regex literal must appear in the lower-cased text.

    Ignoring case, Python's ``re`` matches ``i`` to ``ı`` and ``İ``, and ``s`` to
    ``ſ``, which lower-case to ``ı``, ``i̇`` (``i`` and a combining dot) and
    ``ſ``: split there. (It matches ``k`` to the Kelvin sign too, which lower-cases
    to ``k``: no split; ``tests/test_regex_literals.py`` checks every character.)
    Matching case, only ASCII runs are sure to survive lower-casing unchanged.
    """
    pieces = []
    for run in _ASCII_RUN.findall(literal):
        lowered = run.lower()
        pieces.extend(re.split("[is]", lowered) if ignore_case else [lowered])
    return pieces

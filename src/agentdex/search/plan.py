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
_ASCII_RUN = re.compile(r"[\x00-\x7f]+")


@dataclass(frozen=True, slots=True)
class Candidates:
    """``query`` None means every record; ``exact``: the matches need no verification;
    ``empty``: no record can match (an AND holding it matches nothing either);
    ``count``: how many records ``query`` matches, when planning counted them;
    ``ids``: their record ids, when planning collected them (at most :data:`COLLECT`);
    ``size``: an estimate of how many records ``query`` matches (None: unknown)."""

    query: Any
    exact: bool
    empty: bool = False
    count: int | None = None
    ids: list[int] | None = None
    size: float | None = None


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
        if len(constrained) == 1:
            return Candidates(constrained[0].query, exact)
        occur = self.tantivy.Occur.Must
        return Candidates(
            self.tantivy.Query.boolean_query([(occur, p.query) for p in constrained]), exact
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
        return Candidates(query, False, size=plan.size)

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

    def _planned(self, node: Node) -> Candidates:
        """The candidates of a node of the query (each planned once per planner)."""
        known = self._plans.get(node)
        if known is None:
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
        """The children rarest first; once those planned leave at most :data:`FEW`
        candidates, the rest are verified on them instead of looked up (each lookup
        scans the term list, and each looked-up word's records are read on every
        evaluation). Whether they are few is counted when only short words are left,
        or when the estimate says they may be (:data:`SLACK`)."""
        parts: list[Candidates] = []
        everyone = max(1, int(self.searcher.num_docs))
        estimate = float(everyone)
        for child in sorted(node.children, key=self._rarity):
            if parts and (self._rarity(child)[:2] == (1, 1) or estimate <= FEW * SLACK):
                counted = self._counted(self._and(parts))
                if counted.count is not None and counted.count <= FEW:
                    # the rest are verified there: the plan is no longer exact
                    return replace(counted, exact=False)
                if counted.count is not None:
                    estimate = counted.count
            part = self._planned(child)
            if part.empty:
                return part  # nothing holds this child: the others need no lookup
            parts.append(part)
            if part.size is not None:
                estimate *= min(1.0, part.size / everyone)
        return replace(self._and(parts), size=estimate)

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
        return self._with_long_tokens(Candidates(plan.query, exact, plan.empty, size=plan.size))

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
            if len(terms) == 1:
                return Candidates(q.term_query(self.schema, "text", terms[0]), whole, size=size)
            return Candidates(q.term_set_query(self.schema, "text", terms), whole, size=size)
        phrase = phrase_query(self.tantivy, self.schema, positions, prefixes)
        if phrase is not None:
            return Candidates(phrase, False, size=size)
        sets = [(len(terms), p, terms) for p, terms in positions if terms is not None and terms]
        if not sets:
            return unconstrained
        # one selective position: its terms
        _, position, terms = min(sets, key=lambda item: item[0])
        query = q.term_set_query(self.schema, "text", terms)
        return Candidates(query, False, size=sizes.get(position))

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

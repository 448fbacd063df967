"""Evaluate a parsed query against one index generation.

Plan: each text term maps to the blocks whose trigram signature may hold it
(:mod:`agentdex.index.signatures`); AND/OR combine those bitmaps. Evaluation
is set algebra over record ids, each step restricted to what earlier steps
left (``a b`` scans ``b`` only in records that hold ``a``); candidates are
verified by real substring/regex matching, so results are exact. Field
filters run as SQL. Records of deleted files have no metadata row any more,
so the final metadata fetch drops them (tombstones). Everything runs inside
one read transaction: a consistent WAL snapshot.

Time budget (``self.budget``, :mod:`agentdex.search.budget`): every block
loop checks it and, once it has expired, stops *without* adding the block
it was in; a ``NOT`` whose child ran past the budget excludes everything.
So a stopped evaluation returns a subset of the true answer, never a record
that does not match.
"""

from __future__ import annotations

import re
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdex.index.segments import Block, load_block
from agentdex.index.signatures import SignatureReader
from agentdex.search.budget import Budget, unlimited
from agentdex.search.fields import field_sql, register_functions
from agentdex.search.matchers import TermMatcher
from agentdex.search.query import And, Field, Node, Not, Or, Term, terms

IdMap = dict[int, int]  # record id -> block id
SQL_CHUNK = 900
BLOCK_CACHE = 48

META_COLUMNS = (
    "r.id, r.block_id, r.agent, r.store, r.session_id, r.role, r.kind, r.timestamp, r.model,"
    " r.cwd, r.project, r.branch, r.worktree, r.host, r.locator, r.offset, r.tlen, r.thash, f.path"
)


#: (id, kind, role, timestamp, tlen, agent, session_id, thash, cwd, project, worktree)
LIGHT_COLUMNS = (
    "r.id, r.kind, r.role, r.timestamp, r.tlen, r.agent, r.session_id, r.thash,"
    " r.cwd, r.project, r.worktree"
)


@dataclass(slots=True)
class Hit:
    id: int
    block_id: int
    agent: str
    store: str
    session_id: str
    role: str
    kind: str
    timestamp: float | None
    model: str | None
    cwd: str | None
    project: str | None
    branch: str | None
    worktree: str | None
    host: str | None
    locator: str
    offset: int
    tlen: int
    thash: int
    source_path: str
    score: float = 0.0
    text: str = ""
    snippet: str = ""
    highlights: list[tuple[int, int]] = field(default_factory=list)


def _chunks(items: list[int], size: int = SQL_CHUNK) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _regex_case_signal(text: str) -> str:
    return re.sub(r"\\.", "", text)


class Engine:
    """One query run over one generation (open it, search, close it)."""

    def __init__(self, db: sqlite3.Connection, gen: Path) -> None:
        self.db = db
        register_functions(db)
        row = db.execute("SELECT max(id) FROM blocks").fetchone()
        self.n_blocks = (row[0] + 1) if row and row[0] is not None else 0
        self.signatures = SignatureReader(gen, self.n_blocks)
        self._blocks: OrderedDict[int, Block] = OrderedDict()
        self.blocks_scanned = 0
        self.matchers: dict[Term, TermMatcher] = {}
        self.budget: Budget = unlimited()  # budget: set by the caller before prepare()

    def close(self) -> None:
        self.signatures.close()

    # -- setup -------------------------------------------------------------------
    def prepare(self, node: Node | None, *, regex: bool, word: bool, case: str) -> bool:
        """Build a matcher per term; returns whether matching is case-sensitive."""
        all_terms = terms(node)
        if case == "sensitive":
            sensitive = True
        elif case == "insensitive":
            sensitive = False
        else:
            texts = [_regex_case_signal(t.text) if regex else t.text for t in all_terms]
            sensitive = any(text != text.lower() for text in texts)
        for term in all_terms:
            if term not in self.matchers:
                self.matchers[term] = TermMatcher(
                    term.text,
                    case_sensitive=sensitive,
                    word=word,
                    regex=regex,
                    budget=self.budget,  # budget
                )
        return sensitive

    # -- blocks ----------------------------------------------------------------------
    def block(self, block_id: int) -> Block | None:
        cached = self._blocks.get(block_id)
        if cached is not None:
            self._blocks.move_to_end(block_id)
            return cached
        block = load_block(self.db, block_id)
        if block is None:
            return None
        self.blocks_scanned += 1
        self._blocks[block_id] = block
        if len(self._blocks) > BLOCK_CACHE:
            self._blocks.popitem(last=False)
        return block

    def plan(self, node: Node) -> int:
        """Bitmap of blocks that may hold a match of ``node``."""
        everything = self.signatures.all_blocks()
        if isinstance(node, Term):
            rows = self.matchers[node].rows
            return self.signatures.candidates(rows) if rows else everything
        if isinstance(node, And):
            acc = everything
            for child in node.children:
                acc &= self.plan(child)
            return acc
        if isinstance(node, Or):
            acc = 0
            for child in node.children:
                acc |= self.plan(child)
            return acc
        return everything

    # -- evaluation --------------------------------------------------------------
    def evaluate(self, node: Node, within: IdMap | None = None) -> IdMap:
        if isinstance(node, Term):
            return self._term(node, within)
        if isinstance(node, Field):
            return self._fields([node], within)
        if isinstance(node, Not):
            universe = within if within is not None else self._all_ids()
            excluded = self.evaluate(node.child, universe)
            if self.budget.expired():  # budget: a partial exclusion would let non-matches in
                return {}
            return {rid: bid for rid, bid in universe.items() if rid not in excluded}
        if isinstance(node, Or):
            result: IdMap = {}
            for child in node.children:
                result.update(self.evaluate(child, within))
            return result
        return self._and(node, within)

    def _and(self, node: And, within: IdMap | None) -> IdMap:
        if (
            within is None
            and all(
                isinstance(c, Term) or (isinstance(c, Not) and isinstance(c.child, Term))
                for c in node.children
            )
            and any(isinstance(c, Term) for c in node.children)
        ):
            return self._and_terms_by_block(node)
        return self._and_general(node, within)

    def _and_terms_by_block(self, node: And) -> IdMap:
        """Text-only conjunction: each candidate block is loaded once and all terms checked."""
        positives = [c for c in node.children if isinstance(c, Term)]
        positives.sort(key=lambda t: self.plan(t).bit_count())
        negatives = [
            c.child for c in node.children if isinstance(c, Not) and isinstance(c.child, Term)
        ]
        result: IdMap = {}
        for block_id in _bits(self.plan(node)):
            if self.budget.expired():  # budget
                break
            block = self.block(block_id)
            if block is None:
                continue
            local: list[int] | None = None
            for term in positives:
                local = self.matchers[term].scan(block, local)
                if not local:
                    break
            if not local:
                continue
            for negative in negatives:
                excluded = set(self.matchers[negative].scan(block, local))
                local = [i for i in local if i not in excluded]
            if self.budget.expired():  # budget: this block may be half-scanned
                break
            for i in local:
                result[block.first_id + i] = block_id
        return result

    def _and_general(self, node: And, within: IdMap | None) -> IdMap:
        fields = [c for c in node.children if isinstance(c, Field)]
        text_terms = [c for c in node.children if isinstance(c, Term)]
        text_terms.sort(key=lambda t: self.plan(t).bit_count())
        others = [c for c in node.children if isinstance(c, And | Or)]
        negated = [c for c in node.children if isinstance(c, Not)]
        current = within
        plan = self.plan(node)
        ordered: list[Node] = []
        if text_terms and self.matchers[text_terms[0]].rows:
            # a selective term first (a few blocks); else the SQL filters narrow the blocks
            selective = self.plan(text_terms[0]).bit_count() <= max(8, self.n_blocks // 20)
            if selective or not fields:
                ordered.append(text_terms.pop(0))
        if fields:
            ordered.append(And(tuple(fields)))
        ordered.extend(text_terms)
        ordered.extend(others)
        ordered.extend(negated)
        for child in ordered:
            if current is not None and not current:
                return {}
            if isinstance(child, And) and all(isinstance(c, Field) for c in child.children):
                current = self._fields(list(child.children), current)  # type: ignore[arg-type]
            elif isinstance(child, Term) and current is None:
                current = self._term(child, None, plan)
            else:
                current = self.evaluate(child, current)
        return current if current is not None else {}

    def _all_ids(self) -> IdMap:
        return dict(self.db.execute("SELECT id, block_id FROM records"))

    def _fields(self, fields: list[Field], within: IdMap | None) -> IdMap:
        clauses: list[str] = []
        params: list[object] = []
        for item in fields:
            sql, args = field_sql(item)
            clauses.append(sql)
            params.extend(args)
        where = " AND ".join(clauses)
        if within is None or len(within) > 200_000:
            found = dict(self.db.execute(f"SELECT id, block_id FROM records WHERE {where}", params))
            return found if within is None else {k: v for k, v in found.items() if k in within}
        result: IdMap = {}
        for chunk in _chunks(sorted(within)):
            marks = ",".join("?" * len(chunk))
            result.update(
                self.db.execute(
                    f"SELECT id, block_id FROM records WHERE id IN ({marks}) AND {where}",
                    [*chunk, *params],
                )
            )
        return result

    def _term(self, term: Term, within: IdMap | None, plan: int | None = None) -> IdMap:
        matcher = self.matchers[term]
        candidates = self.plan(term) if plan is None else plan & self.plan(term)
        result: IdMap = {}
        if within is None:
            for block_id in _bits(candidates):
                block = self.block(block_id)
                if block is None:
                    continue
                found = matcher.scan(block)
                if self.budget.expired():  # budget
                    break
                for i in found:
                    result[block.first_id + i] = block_id
            return result
        by_block: dict[int, list[int]] = {}
        for rid, bid in within.items():
            if (candidates >> bid) & 1:
                by_block.setdefault(bid, []).append(rid)
        for block_id in sorted(by_block):
            block = self.block(block_id)
            if block is None:
                continue
            local = sorted(
                rid - block.first_id
                for rid in by_block[block_id]
                if 0 <= rid - block.first_id < block.count
            )
            found = matcher.scan(block, local)
            if self.budget.expired():  # budget
                break
            for i in found:
                result[block.first_id + i] = block_id
        return result

    # -- metadata --------------------------------------------------------------------
    def hits(self, ids: Iterable[int]) -> list[Hit]:
        """Metadata for live records among ``ids`` (deleted ones are gone from ``records``)."""
        out: list[Hit] = []
        for chunk in _chunks(sorted(ids)):
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(
                f"SELECT {META_COLUMNS} FROM records r JOIN files f ON f.id = r.file_id"
                f" WHERE r.id IN ({marks})",
                chunk,
            ):
                out.append(Hit(*row))
        return out

    def light(self, ids: Iterable[int]) -> list[tuple[Any, ...]]:
        """``LIGHT_COLUMNS`` of live records among ``ids``: what ranking and dedup need."""
        out: list[tuple[Any, ...]] = []
        for chunk in _chunks(sorted(ids), 5000):
            marks = ",".join("?" * len(chunk))
            out.extend(
                self.db.execute(
                    f"SELECT {LIGHT_COLUMNS} FROM records r WHERE r.id IN ({marks})", chunk
                )
            )
        return out

    def all_light(self) -> list[tuple[Any, ...]]:
        return list(self.db.execute(f"SELECT {LIGHT_COLUMNS} FROM records r"))

    def all_hits(self, where: str = "1", params: Iterable[object] = ()) -> list[Hit]:
        return [
            Hit(*row)
            for row in self.db.execute(
                f"SELECT {META_COLUMNS} FROM records r JOIN files f ON f.id = r.file_id"
                f" WHERE {where}",
                list(params),
            )
        ]

    def original_text(self, hit: Hit) -> str:
        block = self.block(hit.block_id)
        if block is None:
            return ""
        return block.original_text(hit.id - block.first_id)


def _bits(bitmap: int) -> Iterator[int]:
    """Indices of set bits, ascending."""
    index = 0
    while bitmap:
        low = bitmap & -bitmap
        position = low.bit_length() - 1
        yield position
        bitmap ^= low
        index += 1

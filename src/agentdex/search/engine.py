"""One index generation opened for reading: postings, text blocks and record metadata.

Everything a query run needs, inside one SQLite read transaction (a
consistent WAL snapshot) and one tantivy searcher:

* candidates: counts, record ids, and pages of record ids in a fast-field
  order (``ts`` newest first) from the postings; plus the *tail*, records
  SQLite has but the postings or the term list do not cover yet (a writer
  died between its commits, or is mid-build), which every query verifies;
* verification of one record against the query tree, on its text block
  (decompressed once, cached) and its metadata;
* a sequential scan of every block, for queries with nothing to look up
  (only NOT, regexes without literals, punctuation-only text);
* metadata rows (``LIGHT_COLUMNS`` for ranking, ``Hit`` for results) and
  original text.

Time budget (``self.budget``, :mod:`agentdex.search.budget`): a regex
interrupted by the budget's alarm raises ``BudgetInterrupt`` out of the
matcher; :meth:`Engine.matches` then rejects that record and
:meth:`Engine.scan` stops before adding that block, so a stopped search
keeps only records it fully checked (``interrupted`` says it happened).
"""

from __future__ import annotations

import re
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.index.segments import Block, BlockFile, load_block
from agentdex.search.budget import Budget, BudgetInterrupt, unlimited
from agentdex.search.fields import field_matches, register_functions
from agentdex.search.matchers import TermMatcher
from agentdex.search.query import And, Field, Node, Not, Or, Term, terms

if TYPE_CHECKING:
    from agentdex.search.readahead import ReadAhead

SQL_CHUNK = 900
#: decompressed blocks kept per search: a first page verifies ~100 candidates in ~120 blocks
#: and then reads its results' texts from the same ones (64 read half of them twice)
BLOCK_CACHE = 256
#: :meth:`Engine.matching` checks a block's records one by one when fewer than one in this
#: many of them are asked for, else it scans the whole block
FEW_IN_BLOCK = 8

META_COLUMNS = (
    "r.id, r.block_id, r.agent, r.store, r.session_id, r.role, r.kind, r.timestamp, r.model,"
    " r.cwd, r.project, r.branch, r.worktree, r.host, r.locator, r.offset, r.tlen, r.thash, f.path"
)

#: (id, kind, role, timestamp, tlen, agent, session_id, thash, cwd, project, worktree,
#:  block_id, file_id, branch, model, host)
LIGHT_COLUMNS = (
    "r.id, r.kind, r.role, r.timestamp, r.tlen, r.agent, r.session_id, r.thash,"
    " r.cwd, r.project, r.worktree, r.block_id, r.file_id, r.branch, r.model, r.host"
)
LIGHT_NAMES = (
    "id",
    "kind",
    "role",
    "timestamp",
    "tlen",
    "agent",
    "session_id",
    "thash",
    "cwd",
    "project",
    "worktree",
    "block_id",
    "file_id",
    "branch",
    "model",
    "host",
)
ID, KIND, ROLE, TS, TLEN, AGENT, SESSION, THASH, CWD, PROJECT, WORKTREE, BLOCK, FILE = range(13)


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


def case_sensitive(all_terms: list[Term], *, regex: bool, case: str) -> bool:
    """``-s``/``-i``, or smart case: any capital in any term (escapes like ``\\W`` aside)."""
    if case in ("sensitive", "insensitive"):
        return case == "sensitive"
    texts = [_regex_case_signal(t.text) if regex else t.text for t in all_terms]
    return any(text != text.lower() for text in texts)


class Engine:
    """One query run over one generation (open it, search, close it)."""

    def __init__(self, db: sqlite3.Connection, gen: Path) -> None:
        from agentdex.index.postings import Vocabulary, open_index, want_terms

        self.db = db
        register_functions(db)
        row = db.execute("SELECT max(id) FROM blocks").fetchone()
        self.n_blocks = (row[0] + 1) if row and row[0] is not None else 0
        if (gen / "postings" / "meta.json").is_file():
            self.index = open_index(gen / "postings", create=False)
        else:  # a first build that has not committed postings yet: every record is tail
            self.index = open_index(gen / "postings-empty", create=True, memory=True)
        self.searcher = self.index.searcher()
        self.schema = self.index.schema
        self.vocabulary = Vocabulary(gen)
        marks = dict(
            db.execute("SELECT key, value FROM meta WHERE key IN ('postings_rid', 'vocab_rid')")
        )
        postings_rid, vocab_rid = int(marks.get("postings_rid", 1)), int(marks.get("vocab_rid", 1))
        self.tail_rid = min(postings_rid, vocab_rid)
        if vocab_rid < postings_rid:  # a build read as it commits: ask for its term list
            want_terms(gen)
        self.block_file = BlockFile(gen)
        self._blocks: OrderedDict[int, Block] = OrderedDict()
        self._paths: dict[int, str] = {}
        self.blocks_scanned = 0
        #: blocks being read ahead of a verification (:meth:`reading_ahead`)
        self._ahead: ReadAhead | None = None
        self.matchers: dict[Term, TermMatcher] = {}
        self.budget: Budget = unlimited()  # budget: set by the caller before prepare()
        self.interrupted = False  # budget: a record or block was cut short

    def close(self) -> None:
        self.vocabulary.close()
        self.block_file.close()

    # -- setup -------------------------------------------------------------------------------------
    def prepare(self, node: Node | None, *, regex: bool, word: bool, case: str) -> bool:
        """Build a matcher per term; returns whether matching is case-sensitive."""
        all_terms = terms(node)
        sensitive = case_sensitive(all_terms, regex=regex, case=case)
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

    def planner(self, *, sensitive: bool, word: bool, regex: bool) -> Any:
        from agentdex.search.plan import Planner

        return Planner(
            self.searcher,
            self.schema,
            self.vocabulary,
            self.db,
            sensitive=sensitive,
            word=word,
            regex=regex,
        )

    # -- candidates from the postings --------------------------------------------------------------
    def _query(self, query: Any) -> Any:
        return query if query is not None else self._tantivy().Query.all_query()

    def _tantivy(self) -> Any:
        import tantivy

        return tantivy

    def count(self, query: Any) -> int:
        return int(self.searcher.search(self._query(query), limit=1, count=True).count)

    def count_aside(self, query: Any) -> Callable[[], int]:
        """Start counting ``query``'s matches on another thread (tantivy's search lets go of
        the GIL, so it runs beside this one's next search); call the result to wait for the
        count (an error there is raised by that call)."""
        import threading

        got: list[int] = []
        failed: list[BaseException] = []

        def count() -> None:
            try:
                got.append(self.count(query))
            except BaseException as exc:  # handed to the waiting caller
                failed.append(exc)

        worker = threading.Thread(target=count, name="agentdex-count", daemon=True)
        worker.start()

        def wait() -> int:
            worker.join()
            if failed:
                raise failed[0]
            return got[0]

        return wait

    def candidate_ids(self, query: Any, at_most: int | None = None) -> list[int]:
        """Record ids of every candidate (any order); ``at_most``: a known upper bound on
        their number (saves counting them first: one evaluation of the query less)."""
        total = self.count(query) if at_most is None else at_most
        if not total:
            return []
        hits = self.searcher.search(self._query(query), limit=total, count=False).hits
        return list(self.searcher.fast_field_values("rid", [address for _, address in hits]))

    def newest_first(self, query: Any, limit: int) -> tuple[int, list[int]]:
        """(candidates, the ``limit`` newest record ids) in one pass."""
        found = self.searcher.search(
            self._query(query), limit=limit, count=True, order_by_field="ts"
        )
        ids = self.searcher.fast_field_values("rid", [address for _, address in found.hits])
        return int(found.count), list(ids)

    def newest_page(self, query: Any, offset: int, limit: int) -> list[int]:
        """Candidate record ids ordered by time, newest first (unknown times last)."""
        hits = self.searcher.search(
            self._query(query), limit=limit, count=False, order_by_field="ts", offset=offset
        ).hits
        return list(self.searcher.fast_field_values("rid", [address for _, address in hits]))

    def level_pages(self, query: Any, size: int) -> dict[int, tuple[int, list[int]]]:
        """Per level: (candidates, the ``size`` newest record ids), in one pass over the query."""
        from agentdex.index.scores import LEVELS

        spec = {
            "levels": {
                "terms": {"field": "level", "size": LEVELS},
                "aggs": {
                    "newest": {
                        "top_hits": {
                            "size": size,
                            "sort": [{"ts": "desc"}],
                            "docvalue_fields": ["rid"],
                        }
                    }
                },
            }
        }
        result = self.searcher.aggregate(self._query(query), spec)
        pages: dict[int, tuple[int, list[int]]] = {}
        for bucket in result.get("levels", {}).get("buckets", []):
            ids = [int(hit["docvalue_fields"]["rid"][0]) for hit in bucket["newest"]["hits"]]
            pages[int(bucket["key"])] = (int(bucket["doc_count"]), ids)
        return pages

    def both(self, *queries: Any) -> Any:
        tantivy = self._tantivy()
        parts = [(tantivy.Occur.Must, self._query(q)) for q in queries]
        return tantivy.Query.boolean_query(parts)

    def level_query(self, level: int) -> Any:
        return self._tantivy().Query.term_query(self.schema, "level", level)

    def tail_rows(self) -> list[tuple[Any, ...]]:
        """``LIGHT_COLUMNS`` of the records the postings or the term list do not cover yet
        (verified by every query), in id order: one range read (mid-build they can be a
        hundred thousand, and a lookup per id cost ~0.4 s more per 100,000)."""
        return list(
            self.db.execute(
                f"SELECT {LIGHT_COLUMNS} FROM records r WHERE r.id >= ? ORDER BY r.id",
                (self.tail_rid,),
            )
        )

    # -- verification ------------------------------------------------------------------------------
    def block(self, block_id: int) -> Block | None:
        cached = self._blocks.get(block_id)
        if cached is not None:
            self._blocks.move_to_end(block_id)
            return cached
        block = self._ahead.take(block_id) if self._ahead is not None else None
        if block is None:
            block = load_block(self.db, self.block_file, block_id)
        if block is None:
            return None
        self.blocks_scanned += 1
        self._blocks[block_id] = block
        if len(self._blocks) > BLOCK_CACHE:
            self._blocks.popitem(last=False)
        return block

    @contextmanager
    def reading_ahead(self, block_ids: Iterable[int]) -> Iterator[None]:
        """Blocks ``block_ids`` (in the order :meth:`block` will be asked for them) are
        decompressed on a helper thread meanwhile (:mod:`agentdex.search.readahead`)."""
        from agentdex.search.readahead import AT_LEAST, ReadAhead

        wanted = [b for b in dict.fromkeys(block_ids) if b not in self._blocks]
        if len(wanted) < AT_LEAST or self._ahead is not None:
            yield
            return
        self._ahead = ReadAhead(self.db, self.block_file, wanted)
        try:
            yield
        finally:
            self._ahead.close()
            self._ahead = None

    def block_mark(self) -> tuple[int, OrderedDict[int, Block], bool]:
        """What reading blocks changes (their count, the cache, an interruption): see
        :meth:`back_to`."""
        return self.blocks_scanned, OrderedDict(self._blocks), self.interrupted

    def back_to(self, mark: tuple[int, OrderedDict[int, Block], bool]) -> None:
        """Undo the block reads since ``mark`` (an answer read ahead and dropped leaves no
        trace in the statistics)."""
        self.blocks_scanned, self._blocks, self.interrupted = mark

    def record_values(self, row: tuple[Any, ...]) -> dict[str, object]:
        values: dict[str, object] = dict(zip(LIGHT_NAMES, row, strict=False))
        values["path"] = self.path_of(int(row[FILE]))
        return values

    def path_of(self, file_id: int) -> str:
        path = self._paths.get(file_id)
        if path is None:
            found = self.db.execute("SELECT path FROM files WHERE id = ?", (file_id,)).fetchone()
            path = found[0] if found else ""
            self._paths[file_id] = path
        return path

    def matches(self, node: Node, row: tuple[Any, ...]) -> bool:
        """Does the record of this light row match the whole query tree (exact check)?"""
        block = self.block(int(row[BLOCK]))
        if block is None:
            return False
        try:
            return self._eval(node, row, block, int(row[ID]) - block.first_id)
        except BudgetInterrupt:  # budget: undecided, so not a match
            self.interrupted = True
            return False

    def _eval(self, node: Node, row: tuple[Any, ...], block: Block, index: int) -> bool:
        if isinstance(node, Term):
            return self.matchers[node].matches_record(block, index)
        if isinstance(node, Field):
            return field_matches(node, self.record_values(row))
        if isinstance(node, Not):
            return not self._eval(node.child, row, block, index)
        if isinstance(node, And):
            return all(self._eval(child, row, block, index) for child in node.children)
        assert isinstance(node, Or)
        return any(self._eval(child, row, block, index) for child in node.children)

    def matching(
        self, node: Node, rows: list[tuple[Any, ...]], stop: Callable[[], bool] | None = None
    ) -> tuple[list[tuple[Any, ...]], int]:
        """(the rows among ``rows``, light rows in id order, whose records match ``node``; how
        many were decided). A block holding many of them is evaluated whole, one scan of its
        text per term as :meth:`scan` does (~half the time of a check per record); a few are
        checked one by one. ``stop()`` is asked before each block."""
        found: list[tuple[Any, ...]] = []
        decided = 0
        fields = _has_fields(node)
        for block_id, members in groupby(rows, key=itemgetter(BLOCK)):
            group = list(members)
            if stop is not None and stop():
                break
            block = self.block(int(block_id))
            if block is None:
                decided += len(group)
                continue
            if len(group) * FEW_IN_BLOCK < block.count:
                found.extend(row for row in group if self.matches(node, row))
                decided += len(group)
                continue
            try:
                positions = self._eval_block(
                    node, block, {r[ID]: r for r in group} if fields else None
                )
            except BudgetInterrupt:  # budget: this block is undecided; stop here
                self.interrupted = True
                break
            found.extend(row for row in group if row[ID] - block.first_id in positions)
            decided += len(group)
        return found, decided

    # -- full scan ---------------------------------------------------------------------------------
    def scan(self, node: Node, stop: Any = None) -> list[int]:
        """Ids of every live record matching ``node``, block by block (nothing to look up)."""
        found: list[int] = []
        for block_id in range(self.n_blocks):
            if stop is not None and stop():
                break
            block = self.block(block_id)
            if block is None:
                continue
            rows = None
            if _has_fields(node):
                rows = {
                    r[ID]: r
                    for r in self.db.execute(
                        f"SELECT {LIGHT_COLUMNS} FROM records r WHERE r.block_id = ?", (block_id,)
                    )
                }
            try:
                positions = self._eval_block(node, block, rows)
            except BudgetInterrupt:  # budget: this block is undecided; stop here
                self.interrupted = True
                break
            found.extend(block.first_id + i for i in sorted(positions))
        return found

    def _eval_block(
        self, node: Node, block: Block, rows: dict[int, tuple[Any, ...]] | None
    ) -> set[int]:
        if isinstance(node, Term):
            return set(self.matchers[node].scan(block))
        if isinstance(node, Field):
            assert rows is not None
            return {
                rid - block.first_id
                for rid, row in rows.items()
                if field_matches(node, self.record_values(row))
            }
        if isinstance(node, Not):
            return set(range(block.count)) - self._eval_block(node.child, block, rows)
        if isinstance(node, And):
            result: set[int] | None = None
            for child in node.children:
                part = self._eval_block(child, block, rows)
                result = part if result is None else result & part
                if not result:
                    return set()
            return result or set()
        assert isinstance(node, Or)
        out: set[int] = set()
        for child in node.children:
            out |= self._eval_block(child, block, rows)
        return out

    # -- metadata ----------------------------------------------------------------------------------
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
        for chunk in _chunks(sorted(set(ids)), 5000):
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

    def lower_text(self, hit: Hit) -> str:
        block = self.block(hit.block_id)
        if block is None:
            return ""
        return block.lower_text(hit.id - block.first_id)

    def original_text(self, hit: Hit) -> str:
        block = self.block(hit.block_id)
        if block is None:
            return ""
        return block.original_text(hit.id - block.first_id)


def _has_fields(node: Node) -> bool:
    if isinstance(node, Field):
        return True
    if isinstance(node, Not):
        return _has_fields(node.child)
    if isinstance(node, And | Or):
        return any(_has_fields(child) for child in node.children)
    return False

"""The local query language over the team database: candidates from SQL, answers from Python.

:class:`TeamEngine` plays the local :class:`~agentdex.search.engine.Engine`'s part
for :class:`~agentdex.search.run.SearchRun` (whose ranking, threshold merge, dedup
and scoring are reused as they are): its "queries" are SQL conditions
(:mod:`agentdex.team.plan`), its rows the same light tuples, and its verification
the same :class:`~agentdex.search.matchers.TermMatcher` and field rules, on the
record's text fetched with its row. :class:`TeamRun` chooses how to read:

* **whole**: the condition is tried with ``LIMIT FULL_VERIFIED + 1`` (a bitmap
  scan over the pg_trgm index); when that is every candidate, each is verified
  and ranked, and the total is exact;
* **first page**: more candidates than that: the records are read per ranking
  level, newest first (the ``(level, ts)`` index walked in order, the condition
  checked on the way), and the threshold merge stops when the page is certain;
* **scan**: nothing to look up (only ``NOT``, a regex without literals, short
  pieces): every record, in id order, within the time budget.

Everything runs in one read-only, repeatable-read transaction (one snapshot).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentdex.index.scores import LEVELS
from agentdex.search.budget import Budget, BudgetInterrupt, unlimited
from agentdex.search.engine import LIGHT_NAMES, TLEN, TS, case_sensitive
from agentdex.search.fields import field_matches
from agentdex.search.matchers import TermMatcher
from agentdex.search.plan import Candidates
from agentdex.search.query import And, Field, Node, Not, Or, Term, terms
from agentdex.search.run import FULL_VERIFIED, Outcome, SearchRun, _Stream
from agentdex.team.plan import Sql, SqlPlanner

#: light columns (the local order, block and file ids as 0), then what results show
SELECT = (
    "id, kind, role, ts, tlen, agent, session_id, thash, cwd, project, worktree, 0, 0,"
    " branch, model, host, machine, store, source_path, locator, source_gone, text"
)
LIGHT = 16
MACHINE, STORE, SOURCE, LOCATOR, GONE, TEXT = range(16, 22)
SCAN_BATCH = 2000


class TeamEngine:
    """One query over the team database, in one read snapshot (see the module docstring)."""

    def __init__(self, conn: Any, budget: Budget | None = None) -> None:
        self.conn = conn
        self.budget = budget if budget is not None else unlimited()
        self.matchers: dict[Term, TermMatcher] = {}
        #: id -> the full row (light columns, then machine, store, path, locator, gone, text)
        self.rows: dict[int, tuple[Any, ...]] = {}
        self.interrupted = False
        self.read = 0

    # -- setup ---------------------------------------------------------------------------------
    def prepare(self, node: Node | None, *, regex: bool, word: bool, case: str) -> bool:
        """A matcher per term (as :meth:`Engine.prepare`); returns whether case matters."""
        all_terms = terms(node)
        sensitive = case_sensitive(all_terms, regex=regex, case=case)
        for term in all_terms:
            if term not in self.matchers:
                self.matchers[term] = TermMatcher(
                    term.text, case_sensitive=sensitive, word=word, regex=regex, budget=self.budget
                )
        return sensitive

    # -- what SearchRun's streams call -------------------------------------------------------------
    def both(self, a: Sql, b: Sql) -> Sql:
        return a.both(b)

    def level_query(self, level: int) -> Sql:
        return Sql("level = %s", (level,))

    def newest_page(self, query: Sql | None, offset: int, limit: int) -> list[int]:
        """Ids of one page of candidates, newest first, walking the ordered index."""
        where = query.text if query is not None else "true"
        params = query.params if query is not None else ()
        # with ``level = N`` in the condition the (level, ts, id) index gives this order
        order = "ts DESC NULLS LAST, id DESC"
        rows = self._fetch(
            f"SELECT {SELECT} FROM agentdex.records WHERE {where}"
            f" ORDER BY {order} OFFSET %s LIMIT %s",
            (*params, offset, limit),
            walk=True,
        )
        return [row[0] for row in rows]

    def light(self, ids: Any) -> list[tuple[Any, ...]]:
        return [self.rows[i][:LIGHT] for i in ids if i in self.rows]

    def probe(self, query: Sql, limit: int) -> list[tuple[Any, ...]]:
        """Up to ``limit`` candidates in any order (the pg_trgm index, as a bitmap)."""
        rows = self._fetch(
            f"SELECT {SELECT} FROM agentdex.records WHERE {query.text} LIMIT %s",
            (*query.params, limit),
            walk=False,
        )
        return [row[:LIGHT] for row in rows]

    def every(self, query: Sql | None, stop: Any) -> list[tuple[Any, ...]]:
        """Every candidate (every record when ``query`` is None), in id order, until ``stop()``."""
        where = query.text if query is not None else "true"
        params = query.params if query is not None else ()
        out: list[tuple[Any, ...]] = []
        with (
            self._bounded(seqscan=True, bitmap=True, index=True),
            self.conn.cursor(name="adx_every") as cur,
        ):
            cur.itersize = SCAN_BATCH
            cur.execute(f"SELECT {SELECT} FROM agentdex.records WHERE {where} ORDER BY id", params)
            while True:
                batch = cur.fetchmany(SCAN_BATCH)
                for row in batch:
                    self.rows[row[0]] = row
                    out.append(row[:LIGHT])
                self.read += len(batch)
                if len(batch) < SCAN_BATCH or stop():
                    break
        return out

    @contextmanager
    def _bounded(self, *, seqscan: bool, bitmap: bool, index: bool) -> Iterator[bool]:
        """A savepoint with the plan settings and a statement timeout of the budget left.

        A statement that outlives the budget is cancelled by the server: its rows are
        not taken (the run is then partial, as a local search cut by its alarm).
        """
        import psycopg

        left = self.budget.remaining()
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                timeout = 0 if left is None else max(1, int(left * 1000))
                # one round trip (no parameters: the simple protocol takes several statements)
                cur.execute(
                    f"SET LOCAL enable_seqscan = {'on' if seqscan else 'off'};"
                    f" SET LOCAL enable_bitmapscan = {'on' if bitmap else 'off'};"
                    f" SET LOCAL enable_indexscan = {'on' if index else 'off'};"
                    f" SET LOCAL statement_timeout = {timeout}"
                )
                yield True
        except psycopg.errors.QueryCanceled:
            self.interrupted = True
            self.budget.stop("time-budget")

    def _fetch(self, sql: str, params: tuple[Any, ...], *, walk: bool) -> list[tuple[Any, ...]]:
        # the plan is chosen here, as the local engine chooses: a bitmap over the trigram
        # index for a probe, an ordered index walked for a page (never a sequential scan
        # when an index serves)
        rows: list[tuple[Any, ...]] = []
        with self._bounded(seqscan=False, bitmap=not walk, index=walk), self.conn.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        for row in rows:
            self.rows[row[0]] = row
        self.read += len(rows)
        return rows

    def count(self) -> int:
        with self.conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM agentdex.records")
            return int(cur.fetchone()[0])

    # -- verification ----------------------------------------------------------------------------
    def matches(self, node: Node, row: tuple[Any, ...]) -> bool:
        full = self.rows.get(row[0])
        if full is None:
            return False
        try:
            return self._eval(node, full)
        except BudgetInterrupt:  # budget: undecided, so not a match
            self.interrupted = True
            return False

    def _eval(self, node: Node, row: tuple[Any, ...]) -> bool:
        if isinstance(node, Term):
            return self.matchers[node].matches_text(row[TEXT])
        if isinstance(node, Field):
            values: dict[str, object] = dict(zip(LIGHT_NAMES, row[:LIGHT], strict=True))
            values["path"] = row[SOURCE]
            return field_matches(node, values)
        if isinstance(node, Not):
            return not self._eval(node.child, row)
        if isinstance(node, And):
            return all(self._eval(child, row) for child in node.children)
        assert isinstance(node, Or)
        return any(self._eval(child, row) for child in node.children)


class TeamRun(SearchRun):
    """:class:`SearchRun` over a :class:`TeamEngine` (see the module docstring)."""

    def __init__(self, engine: TeamEngine, node: Node, sql: Sql | None, **options: Any) -> None:
        super().__init__(engine, node, Candidates(sql, False), **options)  # type: ignore[arg-type]
        self.team: TeamEngine = engine

    def run(self, *, want: int | None, sort: str, exact_total: bool) -> Outcome:
        sql: Sql | None = self.plan.query
        if sql is None:
            rows = self.team.every(None, self.out_of_time)
            matched = self._verified(rows)
            outcome = self._finish(matched, sort, self.team.read, "scan")
            outcome.notes.append("nothing to look up in the index: scanned every record")
            return outcome
        probe = self.team.probe(sql, FULL_VERIFIED + 1)
        if want is None or exact_total or len(probe) <= FULL_VERIFIED:
            rows = probe if len(probe) <= FULL_VERIFIED else self.team.every(sql, self.out_of_time)
            return self._finish(self._verified(rows), sort, len(rows), "whole")
        if sort == "time":
            streams = [_Stream(self, sql, None, None)]
        else:
            streams = [_Stream(self, sql, level, None) for level in range(LEVELS)]
        accepted = self._merge(streams, sort, want)
        return Outcome(
            rows=accepted,
            total=len(accepted),
            total_exact=False,
            candidates=len(probe),
            matched=None,
            mode="first-page",
            stopped=self.stopped,
        )

    def _verified(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        matched = []
        for i, row in enumerate(rows):
            if not i % 64 and self.out_of_time():
                break
            if self.team.matches(self.node, row):
                matched.append(row)
        return matched


def planner(*, sensitive: bool, word: bool, regex: bool) -> SqlPlanner:
    return SqlPlanner(sensitive=sensitive, word=word, regex=regex)


__all__ = ["TEXT", "TLEN", "TS", "TeamEngine", "TeamRun", "planner"]

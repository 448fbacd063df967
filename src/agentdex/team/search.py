"""The local query language over the team database: candidates from SQL, answers from Python.

:class:`TeamEngine` plays the local :class:`~agentdex.search.engine.Engine`'s part
for :class:`~agentdex.search.run.SearchRun` (whose ranking, threshold merge, dedup
and scoring are reused as they are): its "queries" are SQL conditions
(:mod:`agentdex.team.plan`), its rows the same light tuples, and its verification
the same :class:`~agentdex.search.matchers.TermMatcher` and field rules, on the
record's text fetched with its row. :class:`TeamRun` chooses how to read:

* **whole**: the candidates' ids, levels and times are read with ``LIMIT
  FULL_VERIFIED + 1`` (a bitmap over the pg_trgm index, ANDed by the planner with
  the b-trees of agent and time filters; no text in the answer); when that is
  every candidate, their rows are read by id, each is verified and ranked, and
  the total is exact;
* **first page**, more candidates than that: the threshold merge reads ranking
  levels newest first and stops when the page is certain. A stream's first read
  reads its band of levels (``BAND_EDGES``): the band's candidates' ids, levels
  and times (one bitmap, up to ``ORDERED_MAX``), sorted here; a page's rows are
  then read by id. A band with more candidates, or a query whose matches the
  planner's estimates say are dense among the rows its field filters leave (a
  common word, or a word within an agent's recent records: a page then checks
  fewer rows than the bitmap would), is read by walking the ``(level, ts)``
  index in order, the condition checked on the way;
* **scan**: nothing to look up (only ``NOT``, a regex without literals, short
  pieces): every record, in id order, within the time budget.

Everything runs in one read-only, repeatable-read transaction (one snapshot), and
reads ``agentdex.records_read`` (the records with planner statistics: migration
``m003_search_view``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

from agentdex.index.scores import LEVELS
from agentdex.search.budget import Budget, BudgetInterrupt, unlimited
from agentdex.search.engine import LIGHT_NAMES, TLEN, TS, case_sensitive
from agentdex.search.fields import field_matches
from agentdex.search.matchers import TermMatcher
from agentdex.search.plan import Candidates
from agentdex.search.query import And, Field, Node, Not, Or, Term, terms
from agentdex.search.run import FULL_VERIFIED, PAGE, Outcome, SearchRun, _Stream
from agentdex.team.ahead import ReadAhead
from agentdex.team.plan import Sql, SqlPlanner
from agentdex.team.schema import TOP_LEVELS

#: light columns (the local order, block and file ids as 0), then what results show
SELECT = (
    "id, kind, role, ts, tlen, agent, session_id, thash, cwd, project, worktree, 0, 0,"
    " branch, model, host, machine, store, source_path, locator, source_gone, text"
)
LIGHT = 16
MACHINE, STORE, SOURCE, LOCATOR, GONE, TEXT = range(16, 22)
SCAN_BATCH = 2000
#: what searches read (the records; see :func:`agentdex.team.schema.m003_search_view`)
FROM = "agentdex.records_read"
#: the most candidates of a band whose (id, level, time) are read to order them here
ORDERED_MAX = 50_000
#: the first levels of the bands whose candidates are read together: the first band is
#: the levels with a trigram index of their own (``schema.TOP_LEVELS``: a first page
#: reads them; one small bitmap), the others are wide (each band read costs the whole
#: trigram bitmap once more, ANDed with the ``(level, ts)`` index); measured on the 1 GB
#: bench
BAND_EDGES = (0, TOP_LEVELS, 24)
#: ranking levels a first page typically reads (7-10 in the 1 GB bench's queries)
WALK_LEVELS = 10
#: per statement: a bitmap of 50,000 candidates stays exact (the default 4 MB goes lossy)
WORK_MEM = "32MB"
#: bands whose probes are read ahead on a second connection (:class:`ReadAhead`): the
#: first (~3 ms at 1 GB); the next costs the whole trigram bitmap, which would compete
#: with the count for the server's CPU and is rarely needed
AHEAD_BANDS = 1
#: a band probe's ``cpu_index_tuple_cost`` (PostgreSQL's default 0.005): the band's
#: ``(level, ts)`` bitmap ANDed with the trigram bitmap is what keeps a band probe from
#: rechecking every trigram candidate's text, but the planner weighs it against its
#: estimate of the trigram rows, which pg_trgm takes from ~100 histogram values: one
#: ``ANALYZE`` at 1 GB estimated the regex's 23,110 candidates at 3,060 and levels 4-11
#: were read by rechecking all of them (322 ms, 75 ms with the level bitmap)
BAND_INDEX_TUPLE_COST = 0.0001


class TeamEngine:
    """One query over the team database, in one read snapshot (see the module docstring).

    ``helper``: gives a second connection to the same database (or None), on which the
    first bands' probes are read ahead while ``conn`` counts the candidates
    (:class:`ReadAhead`); without one everything is read on ``conn``.
    """

    def __init__(
        self, conn: Any, budget: Budget | None = None, helper: Callable[[], Any] | None = None
    ) -> None:
        self.conn = conn
        self.helper = helper
        #: the probes being read ahead on the helper connection (:meth:`TeamRun.run`)
        self.ahead: ReadAhead | None = None
        self.budget = budget if budget is not None else unlimited()
        self.matchers: dict[Term, TermMatcher] = {}
        #: id -> the full row (light columns, then machine, store, path, locator, gone, text)
        self.rows: dict[int, tuple[Any, ...]] = {}
        #: rows read ahead of need (a band's first pages, one statement): moved to ``rows``
        #: (and counted as read) when a stream asks for them
        self.spare: dict[int, tuple[Any, ...]] = {}
        self.interrupted = False
        self.read = 0
        #: a stream's condition -> its candidates' ids, newest first (sorted from a probe)
        self.ordered: dict[Sql, list[int]] = {}
        #: a stream's condition -> what reads its band's candidates, on the stream's first read
        self.pending: dict[Sql, Callable[[], None]] = {}

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
        if query is not None and query in self.pending:
            self.pending[query]()
        ordered = self.ordered.get(query) if query is not None else None
        if ordered is not None:
            ids = ordered[offset : offset + limit]
            self.fetch_rows(ids)
            return [i for i in ids if i in self.rows]
        return self._walk_page(query, offset, limit)

    def _walk_page(self, query: Sql | None, offset: int, limit: int) -> list[int]:
        where = query.text if query is not None else "true"
        params = query.params if query is not None else ()
        # with ``level = N`` in the condition the (level, ts, id) index gives this order
        order = "ts DESC NULLS LAST, id DESC"
        rows = self._fetch(
            f"SELECT {SELECT} FROM {FROM} WHERE {where} ORDER BY {order} OFFSET %s LIMIT %s",
            (*params, offset, limit),
            walk=True,
        )
        return [row[0] for row in rows]

    def light(self, ids: Any) -> list[tuple[Any, ...]]:
        return [self.rows[i][:LIGHT] for i in ids if i in self.rows]

    def fetch_rows(self, ids: list[int]) -> None:
        """Read the rows of these candidates (those not read yet), by id."""
        missing = [i for i in ids if i not in self.rows]
        if self.spare:
            kept = [i for i in missing if i in self.spare]
            for i in kept:
                self.rows[i] = self.spare.pop(i)
            self.read += len(kept)
            missing = [i for i in missing if i not in self.rows]
        if missing:
            self._fetch(f"SELECT {SELECT} FROM {FROM} WHERE id = ANY(%s)", (missing,), walk=True)

    def read_ahead_rows(self, ids: list[int]) -> None:
        """Read these rows now, in one statement, for :meth:`fetch_rows` to take later (a
        page asked of each level would otherwise cost a statement, and its savepoint and
        settings, per level)."""
        missing = [i for i in ids if i not in self.rows and i not in self.spare]
        if not missing:
            return
        rows: list[tuple[Any, ...]] = []
        with self._bounded(seqscan=False, bitmap=False, index=True), self.conn.cursor() as cur:
            cur.execute(f"SELECT {SELECT} FROM {FROM} WHERE id = ANY(%s)", (missing,))
            rows = cur.fetchall()
        for row in rows:
            self.spare[row[0]] = row

    def estimate(self, query: Sql) -> int:
        """The rows the planner expects ``query`` to hold (``EXPLAIN``: nothing is read)."""
        with self.conn.cursor() as cur:
            cur.execute(
                f"EXPLAIN (FORMAT JSON) SELECT id FROM {FROM} WHERE {query.text}", query.params
            )
            plan = cur.fetchone()[0]
        if isinstance(plan, str):  # pragma: no cover - psycopg loads json by default
            import json

            plan = json.loads(plan)
        return int(plan[0]["Plan"]["Plan Rows"])

    def probe(
        self, query: Sql, limit: int | None, conn: Any = None, *, band: bool = False
    ) -> list[tuple[int, int, float | None]]:
        """Up to ``limit`` (None: all) candidates' (id, level, ts) in any order (a bitmap).

        ``conn``: another connection (the read-ahead's), whose transaction already has
        the band bitmap's :func:`plan_settings`, and whose errors are its caller's.
        ``band``: a band of levels' probe (``BAND_INDEX_TUPLE_COST``).
        """
        found: list[tuple[int, int, float | None]] = []
        statement = f"SELECT id, level, ts FROM {FROM} WHERE {query.text} LIMIT %s"
        if conn is not None:
            with conn.cursor() as cur:
                cur.execute(statement, (*query.params, limit))
                return list(cur.fetchall())
        cost = BAND_INDEX_TUPLE_COST if band else None
        with (
            self._bounded(seqscan=False, bitmap=True, index=False, index_tuple_cost=cost),
            self.conn.cursor() as cur,
        ):
            cur.execute(statement, (*query.params, limit))
            found = cur.fetchall()
        return found

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
            cur.execute(f"SELECT {SELECT} FROM {FROM} WHERE {where} ORDER BY id", params)
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
    def _bounded(
        self, *, seqscan: bool, bitmap: bool, index: bool, index_tuple_cost: float | None = None
    ) -> Iterator[bool]:
        """A savepoint with the plan settings and a statement timeout of the budget left.

        A statement that outlives the budget is cancelled by the server: its rows are
        not taken (the run is then partial, as a local search cut by its alarm).
        """
        import psycopg

        try:
            with self._settings(
                self.conn,
                seqscan=seqscan,
                bitmap=bitmap,
                index=index,
                index_tuple_cost=index_tuple_cost,
            ):
                yield True
        except psycopg.errors.QueryCanceled:
            self.interrupted = True
            self.budget.stop("time-budget")

    @contextmanager
    def _settings(
        self,
        conn: Any,
        *,
        seqscan: bool,
        bitmap: bool,
        index: bool,
        index_tuple_cost: float | None = None,
    ) -> Iterator[Any]:
        """A savepoint on ``conn`` with the plan settings and the budget's statement timeout."""
        with conn.transaction(), conn.cursor() as cur:
            # one round trip (no parameters: the simple protocol takes several statements)
            cur.execute(
                plan_settings(
                    self.budget,
                    seqscan=seqscan,
                    bitmap=bitmap,
                    index=index,
                    index_tuple_cost=index_tuple_cost,
                )
            )
            yield cur

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
            cur.execute(f"SELECT count(*) FROM {FROM}")
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

    def __init__(
        self,
        engine: TeamEngine,
        node: Node,
        sql: Sql | None,
        fields: Sql | None = None,
        **options: Any,
    ) -> None:
        super().__init__(engine, node, Candidates(sql, False), **options)  # type: ignore[arg-type]
        self.team: TeamEngine = engine
        #: the condition of the field filters alone (None: none)
        self.fields = fields

    def run(self, *, want: int | None, sort: str, exact_total: bool) -> Outcome:
        sql: Sql | None = self.plan.query
        if sql is None:
            rows = self.team.every(None, self.out_of_time)
            matched = self._verified(rows)
            outcome = self._finish(matched, sort, self.team.read, "scan")
            outcome.notes.append("nothing to look up in the index: scanned every record")
            return outcome
        if want is not None and not exact_total:
            expected = self.team.estimate(sql)
            if self._dense(expected, sort, want):
                return self._paged(self._walks(sql, sort), sort, want, expected)
            if expected > FULL_VERIFIED and sort != "time":
                # a first page is likely: read its first bands on the helper connection
                # while this one counts the candidates
                wheres = self._band_wheres(sql)
                self.team.ahead = ReadAhead.start(self.team, wheres, ORDERED_MAX + 1)
        try:
            found = self.team.probe(sql, FULL_VERIFIED + 1)
            if want is None or exact_total or len(found) <= FULL_VERIFIED:
                if len(found) <= FULL_VERIFIED:
                    ids = [f[0] for f in found]
                    self.team.fetch_rows(ids)
                    rows = self.team.light(ids)
                else:
                    rows = self.team.every(sql, self.out_of_time)
                return self._finish(self._verified(rows), sort, len(rows), "whole")
            return self._paged(self._banded(sql, sort), sort, want, len(found))
        finally:
            if self.team.ahead is not None:
                self.team.ahead.stop()
                self.team.ahead = None

    def _band_wheres(self, sql: Sql) -> list[Sql]:
        """The conditions of the first ``AHEAD_BANDS`` bands' probes."""
        edges = [*BAND_EDGES, LEVELS]
        return [_in_band(sql, band) for band in list(pairwise(edges))[:AHEAD_BANDS]]

    def _dense(self, expected: int, sort: str, want: int) -> bool:
        """Would walking read fewer rows than probing every candidate? (planner estimates)

        A walk checks the rows the field filters leave, newest first, until a page
        matches: about ``need / density`` rows for ``need`` matches (a page in each
        of ``WALK_LEVELS`` levels), where density is ``expected`` among those rows;
        a probe checks ``expected`` candidates.
        """
        if expected <= FULL_VERIFIED:
            return False
        among = self.team.estimate(self.fields if self.fields is not None else Sql("true"))
        need = max(PAGE, want) if sort == "time" else WALK_LEVELS * PAGE
        return need * max(among, 1) < expected * expected

    def _walks(self, sql: Sql, sort: str) -> list[_Stream]:
        """Streams that walk the ``(level, ts)`` (or ``ts``) index with the condition."""
        if sort == "time":
            return [_Stream(self, sql, None, None)]
        return [_Stream(self, sql, level, None) for level in range(LEVELS)]

    def _banded(self, sql: Sql, sort: str) -> list[_Stream]:
        """Streams whose candidates are read a band of levels at a time, when first needed.

        A band's candidates (id, level, time; up to ``ORDERED_MAX``) come from one
        bitmap over the composite ``(level, text)`` trigram index and are sorted here
        as the walks would order them; a band with more candidates is walked instead.
        """
        streams = self._walks(sql, sort)
        bands: list[tuple[tuple[int, int] | None, list[_Stream]]]
        if sort == "time":
            bands = [(None, streams)]
        else:
            edges = [*BAND_EDGES, LEVELS]
            bands = [((lo, hi), streams[lo:hi]) for lo, hi in pairwise(edges)]
        for levels, members in bands:
            load = self._band_loader(sql, levels, members)
            for stream in members:
                self.team.pending[stream.query] = load
        return streams

    def _band_loader(
        self, sql: Sql, levels: tuple[int, int] | None, members: list[_Stream]
    ) -> Callable[[], None]:
        def load() -> None:
            for stream in members:
                self.team.pending.pop(stream.query, None)
            where = _in_band(sql, levels)
            ahead = self.team.ahead
            found = ahead.result(where) if ahead is not None else None
            if found is None:
                found = self.team.probe(where, ORDERED_MAX + 1, band=levels is not None)
            if len(found) > ORDERED_MAX:
                return  # many: these levels are walked
            found.sort(key=lambda f: (f[2] is None, -(f[2] or 0.0), -f[0]))
            for stream in members:
                self.team.ordered[stream.query] = [
                    f[0] for f in found if stream.level is None or f[1] == stream.level
                ]
            # each level's first page, read at once (the merge asks them level by level)
            self.team.read_ahead_rows(
                [i for stream in members for i in self.team.ordered[stream.query][: stream.page]]
            )

        return load

    def _paged(self, streams: list[_Stream], sort: str, want: int, candidates: int) -> Outcome:
        accepted = self._merge(streams, sort, want)
        return Outcome(
            rows=accepted,
            total=len(accepted),
            total_exact=False,
            candidates=candidates,
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


def plan_settings(
    budget: Budget,
    *,
    seqscan: bool,
    bitmap: bool,
    index: bool,
    index_tuple_cost: float | None = None,
) -> str:
    """``SET LOCAL`` statements of a plan's choices and the budget's statement timeout;
    ``index_tuple_cost``: the planner's ``cpu_index_tuple_cost`` (None: as configured),
    a band probe's (``BAND_INDEX_TUPLE_COST``)."""
    left = budget.remaining()
    timeout = 0 if left is None else max(1, int(left * 1000))
    cost = (
        ""
        if index_tuple_cost is None
        else f" SET LOCAL cpu_index_tuple_cost = {index_tuple_cost:g};"
    )
    return (
        f"SET LOCAL enable_seqscan = {'on' if seqscan else 'off'};"
        f" SET LOCAL enable_bitmapscan = {'on' if bitmap else 'off'};"
        f" SET LOCAL enable_indexscan = {'on' if index else 'off'};"
        f" SET LOCAL work_mem = '{WORK_MEM}';{cost}"
        f" SET LOCAL statement_timeout = {timeout}"
    )


def _in_band(sql: Sql, levels: tuple[int, int] | None) -> Sql:
    """``sql`` within a band of levels; the first band's condition is the predicate of its
    own trigram index (``level < TOP_LEVELS``, a constant in the text: the index is then
    used whatever the planner's estimates, and with a prepared statement's generic plan)."""
    if levels is None:
        return sql
    if levels == (0, TOP_LEVELS):
        return sql.both(Sql(f"level < {TOP_LEVELS}"))
    return sql.both(Sql("level >= %s AND level < %s", levels))


def planner(*, sensitive: bool, word: bool, regex: bool) -> SqlPlanner:
    return SqlPlanner(sensitive=sensitive, word=word, regex=regex)


__all__ = ["TEXT", "TLEN", "TS", "TeamEngine", "TeamRun", "planner"]

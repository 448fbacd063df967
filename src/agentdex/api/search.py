"""Search API: exact substring (or regex) search over the index, ranked.

Every surface (CLI, HTTP, MCP) calls these functions; results are plain
objects with ``to_json()``. Query-time imports stay light (no numpy, no
rich) so a fresh ``agentdex search`` process starts fast. Index access lives
in :mod:`agentdex.api.index`, conversation lists in
:mod:`agentdex.api.conversations`, result references in :mod:`agentdex.api.refs`;
their entry points are re-exported here for callers of ``api.search``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from agentdex.api.here import here_place
from agentdex.api.ids import conversation_id
from agentdex.api.index import index_status, maybe_refresh, reader, refresh
from agentdex.api.query_check import QueryCheck as QueryCheck
from agentdex.api.query_check import check_query
from agentdex.api.query_check import query_fields as query_fields
from agentdex.api.query_check import validate_query as validate_query
from agentdex.errors import UsageError
from agentdex.index.files import ARCHIVED_PREFIX
from agentdex.records import iso_utc
from agentdex.search.budget import Budget, default_seconds

if TYPE_CHECKING:
    import threading

    from agentdex.api.conversations import (
        ConversationsResult,
        conversations,
        conversations_for_workdir,
    )
    from agentdex.api.refs import resolve_ref
    from agentdex.catalogue import StoreRow
    from agentdex.ingest.manifest import Changes
    from agentdex.search.engine import Engine, Hit

#: re-exported for callers of ``api.search``, imported on first use (keeps ``search`` light)
_LAZY = {
    "ConversationsResult": "agentdex.api.conversations",
    "conversations": "agentdex.api.conversations",
    "conversations_for_workdir": "agentdex.api.conversations",
    "resolve_ref": "agentdex.api.refs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "Budget",
    "ConversationsResult",
    "QueryCheck",
    "SearchResult",
    "conversations",
    "conversations_for_workdir",
    "index_status",
    "matching_rows",
    "query_fields",
    "refresh",
    "resolve_ref",
    "search",
    "validate_query",
]

SORTS = ("relevance", "time")
#: search modes (agentdex.api.semantic): the first is the default
MODES = ("hybrid", "lexical", "semantic")
CASES = ("smart", "insensitive", "sensitive")
MAX_LIMIT = 10_000


# -- results ------------------------------------------------------------------------


class SearchResult:
    """One search run: ``status`` is ``ok``, ``no-index`` (nothing indexed yet) or
    ``partial`` (stopped at its time budget or cancelled: ``stats["stopped"]`` says which;
    or the index is still being built: ``coverage`` says how much it holds; the results
    are real matches, but not all of them).

    A plain class, not a dataclass: creating one costs every fresh search ~0.5 ms."""

    __slots__ = ("coverage", "highlights", "query", "results", "stats", "status")

    def __init__(
        self,
        query: str,
        status: str = "ok",
        results: list[dict[str, Any]] | None = None,
        stats: dict[str, Any] | None = None,
        highlights: list[list[tuple[int, int]]] | None = None,
        coverage: dict[str, Any] | None = None,
    ) -> None:
        self.query = query
        self.status = status
        self.results: list[dict[str, Any]] = [] if results is None else results
        self.stats: dict[str, Any] = {} if stats is None else stats
        #: highlight spans per result (index-aligned with ``results``), for human output
        self.highlights: list[list[tuple[int, int]]] = [] if highlights is None else highlights
        #: while the index is still being built: how much of the history it holds
        self.coverage = coverage

    def to_json(self) -> dict[str, Any]:
        data = {
            "query": self.query,
            "status": self.status,
            "stats": self.stats,
            "results": self.results,
        }
        if self.coverage is not None:
            data["coverage"] = self.coverage
        return data


# -- search --------------------------------------------------------------------------


def ref_of(session_id: str, locator: str) -> str:
    return f"{session_id}@{locator}"


def hit_json(hit: Hit, home: str | None = None) -> dict[str, Any]:
    """A result as JSON; ``source_gone``: only agentdex's archive still holds this record."""
    gone = hit.source_path.startswith(ARCHIVED_PREFIX)
    return {
        "agent": hit.agent,
        "store": hit.store,
        "session_id": hit.session_id,
        "role": hit.role,
        "kind": hit.kind,
        "timestamp": iso_utc(hit.timestamp),
        "text": hit.text,
        "snippet": hit.snippet,
        "cwd": hit.cwd,
        "project": hit.project,
        "branch": hit.branch,
        "worktree": hit.worktree,
        "model": hit.model,
        "host": hit.host,
        "source_path": hit.source_path[len(ARCHIVED_PREFIX) :] if gone else hit.source_path,
        "locator": hit.locator,
        "score": hit.score,
        "ref": ref_of(hit.session_id, hit.locator),
        "id": conversation_id(hit.agent, hit.session_id, home),
        "short_ref": ref_of(conversation_id(hit.agent, hit.session_id, home), hit.locator),
        "source_gone": gone,
    }


def _validate(limit: int | None, sort: str, case: str) -> None:
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r}; valid: {', '.join(SORTS)}")
    if case not in CASES:
        raise UsageError(f"unknown case mode {case!r}; valid: {', '.join(CASES)}")
    if limit is not None and not (0 < limit <= MAX_LIMIT):
        raise UsageError(f"limit must be between 1 and {MAX_LIMIT}")


def matching_rows(
    engine: Engine,
    query: str,
    *,
    regex: bool = False,
    word: bool = False,
    case: str = "smart",
    now: float | None = None,
    allow_empty: bool = False,
) -> tuple[list[tuple[Any, ...]], bool, list[str]]:
    """Light rows of every live record matching ``query``: (rows, case-sensitive?, needles)."""
    from agentdex.search.query import parse_query, positive_terms
    from agentdex.search.run import SearchRun

    node = parse_query(query, now=now, regex=regex)
    if node is None:
        if not allow_empty:
            raise UsageError('empty query: give words, "a phrase" or field:value filters')
        return engine.all_light(), False, []
    sensitive = engine.prepare(node, regex=regex, word=word, case=case)
    plan = engine.planner(sensitive=sensitive, word=word, regex=regex).plan(node)
    run = SearchRun(
        engine,
        node,
        plan,
        now=time.time() if now is None else now,
        here=None,
        here_query=None,
        only_here=False,
        dedup=False,
    )
    outcome = run.run(want=None, sort="time", exact_total=True)
    return [row for _, row in outcome.rows], sensitive, [t.text for t in positive_terms(node)]


def search(
    query: str,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    regex: bool = False,
    word: bool = False,
    case: str = "smart",
    limit: int | None = 20,
    sort: str = "relevance",
    here: str | None = None,
    only_here: bool = False,
    dedup: bool = True,
    rows: Iterable[StoreRow] | None = None,
    now: float | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
    exact_total: bool = False,
    budget: Budget | None = None,
    mode: str = "hybrid",
    known_changes: Changes | None = None,
) -> SearchResult:
    """Search every indexed record; exact substring (or regex) semantics, ranked.

    ``mode``: ``hybrid`` (the default) fuses the exact ranking with search by
    meaning when the index has embeddings (plain lexical search when it has
    none), ``lexical`` or ``semantic`` choose one (:mod:`agentdex.api.semantic`).

    The first page never waits for every match: with many candidates the
    total is a lower bound (``stats.total_exact`` false) unless
    ``exact_total`` asks for the exact count (see :mod:`agentdex.search.run`).
    ``budget`` (default: ``[search] time_budget`` seconds) bounds the search
    after the index refresh; in the main thread it interrupts even a runaway
    regex (:mod:`agentdex.search.budget`). ``known_changes``: the caller's own
    refresh check found these store files changed and nothing else (the resident
    search's client, :mod:`agentdex.api.search_resident`): they are refreshed
    without checking again.
    """
    _validate(limit, sort, case)
    options: dict[str, Any] = {
        "mode": mode,
        "query": query,
        "root": root,
        "home": home,
        "regex": regex,
        "word": word,
        "case": case,
        "limit": limit,
        "sort": sort,
        "here": here,
        "only_here": only_here,
        "dedup": dedup,
        "now": now,
        "exact_total": exact_total,
    }
    known = known_changes
    checked = False
    if refresh_first and rows is None and known is None:
        from agentdex.api.check_ahead import answered_ahead

        def answer(spent: Budget) -> SearchResult:
            # the query is checked (and the search modules imported) after the fork: the
            # forked refresh check starts as early as it can, from a smaller process
            nonlocal checked
            _check(query, regex=regex, word=word, now=now, mode=mode)
            checked = True
            if budget is None:
                spent.seconds = default_seconds()
                spent.start()
            return _search_index(SearchResult(query=query), spent, **options)

        ahead = answered_ahead(
            root,
            home,
            budget.seconds if budget is not None else None,
            answer,
            cancel=budget.cancel if budget is not None else None,
        )
        if ahead is not None and ahead.answer is not None:
            ahead.answer.stats = {"refresh": ahead.refresh, **ahead.answer.stats}
            return ahead.answer
        known = ahead.changes if ahead is not None else None
    if not checked:
        _check(query, regex=regex, word=word, now=now, mode=mode)
    budget = budget if budget is not None else Budget(default_seconds())
    result = SearchResult(query=query)
    maybe_refresh(refresh_first, root, home, rows, result.stats, progress, known=known)
    return _search_index(result, budget, **options)


def answer_now(
    query: str, seconds: float | None, cancel: threading.Event | None = None, **options: Any
) -> SearchResult:
    """What :func:`search` answers from the index as it is, without a refresh or a
    check: the search resident's work (:mod:`agentdex.api.search_resident_server`),
    given ``search``'s keywords (``mode``, ``home``... but no ``rows``) and the time
    budget's ``seconds`` (None: the configured one, started here, as ``search`` does
    while its forked check runs; ``cancel`` stops it, as the check's signal does there).
    The query is checked first (UsageError)."""
    _validate(options["limit"], options["sort"], options["case"])
    mode = options["mode"]
    _check(query, regex=options["regex"], word=options["word"], now=options["now"], mode=mode)
    budget = Budget(seconds, cancel=cancel)
    if seconds is None:
        budget.seconds = default_seconds()
        budget.start()
    return _search_index(SearchResult(query=query), budget, query=query, **options)


def _check(query: str, *, regex: bool, word: bool, now: float | None, mode: str) -> None:
    """Fail fast (UsageError) on a malformed query or an unknown mode, before any refresh."""
    from agentdex.api.semantic import check_mode

    check_query(query, regex=regex, word=word, now=now)
    check_mode(mode, regex=regex)


def _search_index(
    result: SearchResult, budget: Budget, *, mode: str, **options: Any
) -> SearchResult:
    """Answer in ``mode``: lexical alone, or with the semantic half (api/semantic.py)."""
    if mode == "lexical" or (mode == "hybrid" and options["regex"]):
        result = _lexical_index(result, budget, **options)
        result.stats["search_mode"] = "lexical"
        return result
    from agentdex.api.semantic_search import answer

    return answer(result, budget, mode, _lexical_index, **options)


def _lexical_index(
    result: SearchResult,
    budget: Budget,
    *,
    query: str,
    root: str | os.PathLike[str] | None,
    home: str | None,
    regex: bool,
    word: bool,
    case: str,
    limit: int | None,
    sort: str,
    here: str | None,
    only_here: bool,
    dedup: bool,
    now: float | None,
    exact_total: bool,
    engine: Engine | None = None,
    later: dict[str, Callable[[dict[str, Any]], list[tuple[int, int]]]] | None = None,
) -> SearchResult:
    """Answer from the index as it is (the caller refreshed it, or is checking meanwhile).

    ``engine``: answer on this open engine (hybrid search opens one for both halves).
    ``later``: each result's text, snippet and ``why`` terms are left to the callable
    stored there under its ``ref`` (hybrid search reads them for its page only)."""
    from contextlib import AbstractContextManager, nullcontext
    from functools import partial

    from agentdex.index.coverage import BuildCoverage
    from agentdex.index.coverage import read as read_coverage
    from agentdex.search.budget import enforced
    from agentdex.search.query import parse_query, positive_terms
    from agentdex.search.ranking import REFINE, refine
    from agentdex.search.run import SearchRun
    from agentdex.search.snippets import highlight_patterns, word_patterns

    budget.start()
    started = time.perf_counter()
    opened: AbstractContextManager[Engine | None] = (
        reader(root, home) if engine is None else nullcontext(engine)
    )
    with opened as engine, enforced(budget):
        if engine is None:
            if _building(result):  # another process builds it; nothing committed yet
                result.status = "partial"
                result.coverage = BuildCoverage().to_json()
            else:
                result.status = "no-index"
            result.stats["total"] = 0
            return result
        covered = read_coverage(engine.db)
        if covered is not None:
            result.coverage = covered.to_json()
        engine.budget = budget
        node = parse_query(query, now=now, regex=regex)
        if node is None:
            raise UsageError('empty query: give words, "a phrase" or field:value filters')
        sensitive = engine.prepare(node, regex=regex, word=word, case=case)
        planner = engine.planner(sensitive=sensitive, word=word, regex=regex)
        plan = planner.plan(node)
        here_pred, here_query = (
            here_place(engine, here or os.getcwd())
            if (here or only_here)
            else (
                None,
                None,
            )
        )
        clock = time.time() if now is None else now
        whole = planner.whole_words(node) if sort == "relevance" and not word else None
        run = SearchRun(
            engine,
            node,
            plan,
            now=clock,
            here=here_pred,
            here_query=here_query,
            only_here=only_here,
            dedup=dedup,
            budget=budget,
            words=whole,
            words_at_most=planner.whole_words_bound(node) if whole is not None else None,
            word_streams=partial(planner.word_streams, node, whole),
            one_word=planner.one_word(node),
        )
        want = None if limit is None else (max(REFINE, limit) if sort == "relevance" else limit)
        outcome = run.run(want=want, sort=sort, exact_total=exact_total)
        # a record cut short by the alarm after the run's last budget check still counts
        stopped = outcome.stopped or (budget.reason if engine.interrupted else None)
        ordered = outcome.rows
        head = ordered if want is None else ordered[:want]
        by_id = {hit.id: hit for hit in engine.hits(r[0] for _, r in head)}
        hits = []
        # ranking reads the lower-cased text (half the decompression); results show the original
        lower_only = sort == "relevance" and not sensitive and limit is not None
        for score, row in head:
            hit = by_id.get(row[0])
            if hit is None:
                continue
            hit.score = score
            hit.text = engine.lower_text(hit) if lower_only else engine.original_text(hit)
            hits.append(hit)
        needles = [t.text for t in positive_terms(node)]
        if sort == "relevance":
            hits = refine(hits, needles, sensitive, outcome.word_ids)
        else:
            for hit in hits:
                hit.score = 0.0
        shown = hits[:limit] if limit is not None else hits
        patterns = highlight_patterns(needles, regex=regex, sensitive=sensitive)
        words = None if regex else word_patterns(needles, sensitive=sensitive)
        for hit in shown:
            item = hit_json(hit, home)
            item["why"] = {"match": "exact", "terms": [], "similarity": None}
            finish = _exact_text(
                engine,
                hit,
                lower_only,
                needles=needles,
                patterns=patterns,
                words=words,
                sensitive=sensitive,
                regex=regex,
                budget=budget,
            )
            if later is not None:
                later[item["ref"]] = finish
            result.results.append(item)
            result.highlights.append(finish(item) if later is None else [])
        engine_stats = {"blocks": engine.n_blocks, "blocks_scanned": engine.blocks_scanned}
        finish_stats(result, outcome, stopped, len(shown), sensitive, budget, started, engine_stats)
        if result.coverage is not None:
            result.status = "partial"  # the index is still being built
    return result


def _exact_text(
    engine: Engine,
    hit: Hit,
    lowered: bool,
    *,
    needles: list[str],
    patterns: Any,
    words: Any,
    sensitive: bool,
    regex: bool,
    budget: Budget,
) -> Callable[[dict[str, Any]], list[tuple[int, int]]]:
    """What fills a lexical result's text, snippet and ``why`` terms (its highlight spans
    returned); ``lowered``: the hit holds the lower-cased text ranking read."""
    from agentdex.api.semantic import why_terms
    from agentdex.search.snippets import make_snippet

    def finish(item: dict[str, Any]) -> list[tuple[int, int]]:
        if lowered:
            hit.text = engine.original_text(hit)
        hit.snippet, spans = make_snippet(
            hit.text, patterns, budget=budget if regex else None, kind=hit.kind, words=words
        )
        item["text"], item["snippet"] = hit.text, hit.snippet
        item["why"]["terms"] = why_terms(hit.text, needles, sensitive=sensitive, regex=regex)
        return spans

    return finish


def _building(result: SearchResult) -> bool:
    """Did this search's refresh find another process writing the index?"""
    return str(result.stats.get("refresh", "")).startswith("skipped")


def finish_stats(
    result: SearchResult,
    outcome: Any,
    stopped: str | None,
    returned: int,
    sensitive: bool,
    budget: Budget,
    started: float,
    engine_stats: dict[str, Any],
) -> None:
    """``status`` and ``stats`` of a finished run (local or team: the same JSON)."""
    if stopped:
        result.status = "partial"
    result.stats.update(
        {
            "total": outcome.total,
            "total_exact": outcome.total_exact and not stopped,
            "matched_records": outcome.matched,
            "candidates": outcome.candidates,
            "mode": outcome.mode,
            "returned": returned,
            "case_sensitive": sensitive,
            **engine_stats,
            "stopped": stopped,
            "time_budget": budget.seconds,
            "seconds": round(time.perf_counter() - started, 4),
        }
    )
    if outcome.notes:
        result.stats["notes"] = outcome.notes

"""The hybrid and semantic answers of ``search()`` (the lexical one is in api/search.py).

The query's embedding is computed on a thread while the lexical search runs
(model load and lexical search overlap in a fresh process); then the semantic
candidates are read, checked against the live index and fused
(:func:`agentdex.api.semantic.fuse`). Both halves run on one engine (one read
snapshot) and only the results of the returned page get their text read and
their snippet made: each half leaves that to a callable per result (``later``).
Without embeddings ``hybrid`` is the lexical answer, and a model that cannot run
leaves lexical results with one warning; ``semantic`` then fails with that one line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from agentdex.api.search import SearchResult
    from agentdex.api.semantic import QueryVector
    from agentdex.search.budget import Budget
    from agentdex.search.engine import Engine

NO_EMBEDDINGS = "no embeddings yet: run `agentdex index --semantic`"
NOT_LINKED = (
    "no embedded record in this index yet (a fill running now links the vectors"
    " after a rebuild; else run `agentdex index --semantic`)"
)


def answer(
    result: SearchResult,
    budget: Budget,
    mode: str,
    lexical: Callable[..., SearchResult],
    **options: Any,
) -> SearchResult:
    from agentdex.api.index import reader
    from agentdex.api.semantic import QueryVector, has_embeddings, query_text
    from agentdex.index.store import Location, index_root
    from agentdex.search.query import parse_query

    root_path = index_root(options["root"], home=options["home"])
    node = parse_query(options["query"], now=options["now"], regex=options["regex"])
    text = query_text(node) if node is not None else ""
    if node is None:
        raise UsageError('empty query: give words, "a phrase" or field:value filters')
    if mode == "semantic" and not text:
        result.stats.update({"total": 0, "total_exact": True, "returned": 0})
        result.stats["search_mode"] = "semantic"
        result.stats["notes"] = ["nothing to search by meaning: the query has no words"]
        return result
    if not has_embeddings(root_path) or not text:
        if mode == "semantic":
            raise NotFoundError(NO_EMBEDDINGS)
        result = lexical(result, budget, **options)
        result.stats["search_mode"] = "lexical"
        return result
    gen = Location(root_path).current()
    generation = gen.name if gen else ""
    pending = QueryVector(text, Path(root_path), generation)
    with reader(options["root"], options["home"]) as engine:  # one for both halves
        return _fused(result, budget, mode, lexical, pending, engine, node, root_path, options)


def _fused(
    result: SearchResult,
    budget: Budget,
    mode: str,
    lexical: Callable[..., SearchResult],
    pending: QueryVector,
    engine: Engine | None,
    node: Any,
    root_path: os.PathLike[str],
    options: dict[str, Any],
) -> SearchResult:
    """Both halves on one engine; only the results of the page get their text read."""
    from agentdex.api.semantic import SEMANTIC_TOP

    limit = options["limit"]
    want = None if limit is None else max(limit, 50)
    later: dict[str, Callable[[dict[str, Any]], list[tuple[int, int]]]] = {}
    if mode == "hybrid":
        result = lexical(result, budget, **{**options, "limit": want}, engine=engine, later=later)
    if not pending.ready():
        problem = pending.error or "semantic search unavailable"
        if mode == "semantic":
            from agentdex.semantic.model import ModelUnavailable

            raise ModelUnavailable(problem)
        result.stats["search_mode"] = "lexical"
        result.stats.setdefault("warnings", []).append(f"{problem}; lexical results only")
        _trim(result, limit)
        _finish_page(result, later)
        return result
    started = time.perf_counter()
    if engine is not None:
        from agentdex.search.budget import unlimited

        engine.budget = unlimited()  # the lexical half's budget ended with it
    generation = pending.generation or ""
    semantic, searched = _semantic_results(
        engine, root_path, generation, pending, node, options, later
    )
    seconds = round(time.perf_counter() - started, 4)
    if mode == "semantic":
        result.results = semantic[:limit] if limit is not None else semantic
        _finish_page(result, later)
        result.highlights = [[] for _ in result.results]
        # every record above the similarity floor, unless the candidates ran out first
        exact = len(semantic) < SEMANTIC_TOP
        result.stats.update(
            {"total": len(semantic), "total_exact": exact, "returned": len(result.results)}
        )
    else:
        from agentdex.api.semantic import fuse

        fused = fuse(result.results, semantic, limit=None)
        extra = sum(1 for r in fused if r["why"]["match"] == "semantic")
        if options["sort"] == "time":
            fused.sort(key=lambda r: r["timestamp"] or "", reverse=True)
        result.results = fused[:limit] if limit is not None else fused
        _finish_page(result, later)
        total = result.stats.get("total") or 0
        result.stats.update(
            {
                "total": total + extra,
                "total_exact": bool(result.stats.get("total_exact")) and not extra,
                "returned": len(result.results),
            }
        )
    result.stats["search_mode"] = mode
    if engine is not None and "blocks_scanned" in result.stats:
        result.stats["blocks_scanned"] = engine.blocks_scanned  # the page's text included
    if not searched:
        result.stats.setdefault("notes", []).append(NOT_LINKED)
    result.stats["semantic"] = {
        "embedded_records": searched,
        "candidates": len(semantic),
        "query_seconds": round(pending.seconds, 4),
        "embedder": pending.via,
        "seconds": seconds,
    }
    return result


def _finish_page(
    result: SearchResult,
    later: dict[str, Callable[[dict[str, Any]], list[tuple[int, int]]]],
) -> None:
    """Read the text, snippet and ``why`` terms of the page's results (and the lexical
    ones' highlight spans); nothing else of either half is read."""
    result.highlights = [later.pop(r["ref"], _nothing)(r) for r in result.results]


def _nothing(_item: dict[str, Any]) -> list[tuple[int, int]]:
    return []


def _trim(result: SearchResult, limit: int | None) -> None:
    if limit is not None:
        result.results = result.results[:limit]
        result.highlights = result.highlights[:limit]
        result.stats["returned"] = len(result.results)


def _semantic_results(
    engine: Engine | None,
    root_path: os.PathLike[str],
    generation: str,
    pending: QueryVector,
    node: Any,
    options: dict[str, Any],
    later: dict[str, Callable[[dict[str, Any]], list[tuple[int, int]]]],
) -> tuple[list[dict[str, Any]], int]:
    """The semantic half as results, best first; their text and snippet are left to
    ``later`` (read for the page only)."""
    from agentdex.api.here import here_place
    from agentdex.api.search import hit_json
    from agentdex.api.semantic import semantic_hits
    from agentdex.search.query import positive_terms
    from agentdex.search.snippets import highlight_patterns

    out: list[dict[str, Any]] = []
    if engine is None:
        return out, 0
    here_pred = None
    if options["here"] or options["only_here"]:
        here_pred, _ = here_place(engine, options["here"] or os.getcwd())
    found, searched = semantic_hits(
        engine,
        Path(root_path),
        generation,
        pending.vector,
        node=node,
        regex=options["regex"],
        word=options["word"],
        case=options["case"],
        dedup=options["dedup"],
        here=here_pred,
        only_here=options["only_here"],
        near=pending.near,
        searched=pending.searched,
    )
    needles = [t.text for t in positive_terms(node)]
    patterns = highlight_patterns(needles, regex=False, sensitive=False)
    for hit, similarity, title in found:
        hit.score = round(similarity, 4)
        item = hit_json(hit, options["home"])
        item["why"] = {
            "match": "semantic",
            "terms": [],  # matched by meaning; words in common are not why
            "similarity": round(similarity, 4),
        }
        if title is not None:
            item["why"]["title"] = title  # the conversation's title matched, not this text
        later.setdefault(item["ref"], _semantic_text(engine, hit, patterns))
        out.append(item)
    return out, searched


def _semantic_text(
    engine: Engine, hit: Any, patterns: Any
) -> Callable[[dict[str, Any]], list[tuple[int, int]]]:
    """What fills a semantic result's text and snippet (no highlight: not matched by words)."""
    from agentdex.search.snippets import make_snippet

    def finish(item: dict[str, Any]) -> list[tuple[int, int]]:
        hit.text = engine.original_text(hit)
        hit.snippet, _ = make_snippet(hit.text, patterns, kind=hit.kind)
        item["text"], item["snippet"] = hit.text, hit.snippet
        return []

    return finish

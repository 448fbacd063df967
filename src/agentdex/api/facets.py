"""Facets: how the records matching a query split by agent, project, branch, worktree,
role, kind and age, so a page can narrow a search by clicking.

Counts are over exactly the records a search returns for the same query: repeated
lines (same agent, session, role and text) count once, as search shows them, so
``total`` equals the search's ``stats.total``. Every value comes with the query
filter that selects it (``agent:codex``, ``since:7d``); time buckets use the query
language's own relative times, so clicking one gives the counted records.

All coupling to the index lives in :func:`_facet_rows`: it calls only
:func:`agentdex.api.search.matching_rows` and :func:`agentdex.api.index.reader`,
plus one read of the facet columns of the ``records`` table.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentdex.api.index import maybe_refresh, reader
from agentdex.errors import UsageError

if TYPE_CHECKING:
    from agentdex.catalogue import StoreRow
    from agentdex.search.engine import Engine

#: Columns read per matching record: the dedup key (first four), then the facet columns.
_COLUMNS = "agent, session_id, role, thash, project, branch, worktree, kind, timestamp"

#: The facets in display order: the query field each one filters on, its column in ``_COLUMNS``.
FACET_FIELDS: dict[str, tuple[str, int]] = {
    "agent": ("agent", 0),
    "project": ("project", 4),
    "branch": ("branch", 5),
    "worktree": ("worktree", 6),
    "role": ("role", 2),
    "kind": ("kind", 7),
}
_TIMESTAMP = 8

#: (query filter, label, seconds back from now or None for "older than a year").
TIME_BUCKETS: tuple[tuple[str, str, float | None], ...] = (
    ("since:1d", "last 24 hours", 86_400.0),
    ("since:7d", "last 7 days", 7 * 86_400.0),
    ("since:30d", "last 30 days", 30 * 86_400.0),
    ("since:1y", "last year", 365 * 86_400.0),
    ("until:1y", "older than a year", None),
)

DEFAULT_TOP = 12
MAX_TOP = 200
_SQL_CHUNK = 900


def _quote(value: str) -> str:
    """A query-language value: bare when it is one plain word, else a quoted phrase."""
    if value and not any(c.isspace() or c in '()"' for c in value) and not value.startswith("-"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _facet_rows(
    engine: Engine, query: str, *, regex: bool, word: bool, case: str, now: float
) -> list[tuple[Any, ...]]:
    """``_COLUMNS`` of every record matching ``query``, repeated lines once (search's rule)."""
    from agentdex.api.search import matching_rows

    if query.strip():
        light, _, _ = matching_rows(engine, query, regex=regex, word=word, case=case, now=now)
        ids = [row[0] for row in light]
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(ids), _SQL_CHUNK):
            chunk = ids[start : start + _SQL_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows.extend(
                engine.db.execute(f"SELECT {_COLUMNS} FROM records WHERE id IN ({marks})", chunk)
            )
    else:
        rows = list(engine.db.execute(f"SELECT {_COLUMNS} FROM records"))
    return _unique(rows)


def _unique(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Repeated lines once (search's dedup key: agent, session, role, text hash)."""
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for row in rows:
        key = row[:4]
        if key not in seen or key[3] is None:
            seen.add(key)
            unique.append(row)
    return unique


def _values(field: str, counts: Counter[Any], top: int) -> dict[str, Any]:
    ordered = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))
    shown = [(v, n) for v, n in ordered if v is not None][:top]
    return {
        "values": [
            {"value": v, "count": n, "filter": f"{field}:{_quote(str(v))}"} for v, n in shown
        ],
        "missing": counts.get(None, 0),
        "others": sum(n for v, n in ordered if v is not None) - sum(n for _, n in shown),
        "distinct": sum(1 for v in counts if v is not None),
    }


def _time_buckets(stamps: Iterable[float | None], now: float) -> list[dict[str, Any]]:
    known = [t for t in stamps if t is not None]
    buckets = []
    for query_filter, label, back in TIME_BUCKETS:
        if back is None:
            count = sum(1 for t in known if t <= now - 365 * 86_400.0)
        else:
            count = sum(1 for t in known if t >= now - back)
        buckets.append({"filter": query_filter, "label": label, "count": count})
    return buckets


def facets(
    query: str = "",
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = False,
    regex: bool = False,
    word: bool = False,
    case: str = "smart",
    top: int = DEFAULT_TOP,
    now: float | None = None,
    rows: Iterable[StoreRow] | None = None,
    team_url: str | None = None,
) -> dict[str, Any]:
    """Facet counts of the records matching ``query`` (every record when it is empty).

    Returns ``{query, status, total, facets: {name: {values, missing, others,
    distinct}}, time: [{filter, label, count}], undated, stats}``; ``status`` is
    ``no-index`` before anything was indexed. A malformed query is a UsageError.
    ``team_url``: count the team database's records instead (``serve --team``).
    """
    from agentdex.api.search import CASES, validate_query

    if not 0 < top <= MAX_TOP:
        raise UsageError(f"top must be between 1 and {MAX_TOP}")
    if case not in CASES:
        raise UsageError(f"unknown case mode {case!r}; valid: {', '.join(CASES)}")
    if query.strip():
        check = validate_query(query, regex=regex, word=word)
        if not check.valid:
            raise UsageError(check.error or "invalid query")
    clock = time.time() if now is None else now
    result: dict[str, Any] = {
        "query": query,
        "status": "ok",
        "total": 0,
        "facets": {},
        "time": [],
        "undated": 0,
        "stats": {},
    }
    started = time.perf_counter()
    if team_url is not None:
        from agentdex.api.team_views import facet_rows

        found = _unique(
            facet_rows(query, url=team_url, regex=regex, word=word, case=case, now=clock)
        )
    else:
        maybe_refresh(refresh_first, root, home, rows, result["stats"])
        with reader(root, home) as engine:
            if engine is None:
                result["status"] = "no-index"
                return result
            found = _facet_rows(engine, query, regex=regex, word=word, case=case, now=clock)
    result["total"] = len(found)
    for name, (field, column) in FACET_FIELDS.items():
        counts: Counter[Any] = Counter(row[column] for row in found)
        result["facets"][name] = _values(field, counts, top)
    stamps = [row[_TIMESTAMP] for row in found]
    result["time"] = _time_buckets(stamps, clock)
    result["undated"] = sum(1 for t in stamps if t is None)
    result["stats"]["seconds"] = round(time.perf_counter() - started, 4)
    return result

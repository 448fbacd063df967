"""``usage``: tokens and cost of every model call, by day, week, month, agent, model, project,
branch or conversation (``docs/usage.md``).

Read from the index's rollup (:mod:`agentdex.index.usage`): each counted call
once, summed per conversation context, 15-minute slot and prompt size, so a
view groups a few thousand rows, never the calls. Every view of the same
filter adds up to the same totals. Days are local days (the process's time
zone, ``TZ``); ``since``/``until`` are inclusive local dates.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from agentdex.errors import AgentdexError, UsageError

if TYPE_CHECKING:
    from agentdex.api.usage_prices import PriceTable
    from agentdex.catalogue import StoreRow

BY = ("day", "week", "month", "agent", "model", "project", "branch", "session")
#: what a row's ``parts`` can split it by (the web page's stacked bars)
SPLIT = {"model": "c.model", "agent": "c.agent"}
#: the normalized counts a row carries, in order (``total_tokens`` follows them)
TOKEN_FIELDS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
)
_LOCAL = "CASE WHEN r.bucket < 0 THEN NULL ELSE {} END"
#: per view: the SQL key columns (over ``usage_rollup r JOIN contexts c``) and their names
_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "day": ((_LOCAL.format("date(r.bucket, 'unixepoch', 'localtime')"),), ("day",)),
    "week": (
        (_LOCAL.format("date(r.bucket, 'unixepoch', 'localtime', '-6 days', 'weekday 1')"),),
        ("week",),
    ),
    "month": (
        (_LOCAL.format("strftime('%Y-%m', r.bucket, 'unixepoch', 'localtime')"),),
        ("month",),
    ),
    "agent": (("c.agent",), ("agent",)),
    "model": (("c.model",), ("model",)),
    "project": (("coalesce(c.project, c.cwd)",), ("project",)),
    "branch": (("coalesce(c.project, c.cwd)", "c.branch"), ("project", "branch")),
    "session": (("c.agent", "c.session_id"), ("agent", "session_id")),
}
#: a rollup row's calls and counts, in :data:`TOKEN_FIELDS` order
_ROLLUP_COUNTS = (
    "calls",
    "input",
    "cache_read",
    "cache_write",
    "cache_write_1h",
    "output",
    "reasoning",
)
_COLUMNS = ", ".join(f"r.{c}" for c in _ROLLUP_COUNTS)
_SUMS = ", ".join(f"sum(r.{c})" for c in _ROLLUP_COUNTS)
#: the views whose keys have no time: without a date range they read ``usage_contexts``
_TIMELESS = ("agent", "model", "project", "branch", "session")


def parse_day(value: str | None, name: str) -> date | None:
    """A ``YYYY-MM-DD`` option as a date (UsageError when it is not one)."""
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{name} must be a date YYYY-MM-DD, not {value!r}") from None


def _local_midnight(day: date) -> int:
    """Epoch seconds of ``day``'s local midnight."""
    return int(time.mktime((day.year, day.month, day.day, 0, 0, 0, 0, 0, -1)))


def _timezone() -> str:
    name = datetime.now().astimezone().tzname()
    return os.environ.get("TZ") or name or "local"


class _Row:
    """One row's sums (``counts`` in :data:`TOKEN_FIELDS` order); a session view has
    thousands, so adding and writing one is kept to a few operations."""

    __slots__ = ("calls", "cost", "counts", "key", "models", "unpriced_calls", "unpriced_tokens")

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key
        self.calls = 0
        self.counts = [0, 0, 0, 0, 0, 0]
        self.cost = 0.0
        self.unpriced_calls = 0
        self.unpriced_tokens = 0
        self.models: set[str | None] = set()

    def add(
        self, calls: int, counts: tuple[int, ...], model: str | None, cost: float | None
    ) -> None:
        self.calls += calls
        mine = self.counts
        mine[0] += counts[0]
        mine[1] += counts[1]
        mine[2] += counts[2]
        mine[3] += counts[3]
        mine[4] += counts[4]
        mine[5] += counts[5]
        self.models.add(model)
        if cost is None:
            self.unpriced_calls += calls
            self.unpriced_tokens += _total(counts)
        else:
            self.cost += cost

    def merge(self, other: _Row) -> None:
        self.calls += other.calls
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.cost += other.cost
        self.unpriced_calls += other.unpriced_calls
        self.unpriced_tokens += other.unpriced_tokens
        self.models |= other.models

    def to_json(self, names: tuple[str, ...]) -> dict[str, Any]:
        c = self.counts
        cost = round(self.cost, 8)
        models = self.models
        return dict(
            zip(names, self.key, strict=False),
            calls=self.calls,
            input_tokens=c[0],
            cache_read_tokens=c[1],
            cache_write_tokens=c[2],
            cache_write_1h_tokens=c[3],
            output_tokens=c[4],
            reasoning_tokens=c[5],
            total_tokens=c[0] + c[1] + c[2] + c[4],
            cost_usd=None if self.unpriced_calls else cost,
            priced_cost_usd=cost,
            unpriced_calls=self.unpriced_calls,
            unpriced_tokens=self.unpriced_tokens,
            models=(list(models) if len(models) == 1 else sorted(models, key=_model_order)),
        )


def _model_order(model: str | None) -> tuple[bool, str]:
    return (model is None, model or "")


def _total(counts: list[int] | tuple[int, ...]) -> int:
    """input + cache read + cache write + output (the 1 h part and reasoning are inside)."""
    return counts[0] + counts[1] + counts[2] + counts[4]


def usage(
    by: str = "day",
    *,
    since: str | None = None,
    until: str | None = None,
    agent: str | None = None,
    prices: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    rows: Iterable[StoreRow] | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Token usage and cost grouped ``by`` one of :data:`BY`, with the totals row.

    ``limit`` keeps that many rows (the largest; of a time view, the latest); the totals
    are always every row's, and ``stats`` says how many rows were ``returned`` of ``total``.

    ``split`` (``model`` or ``agent``) adds to each row its ``parts``: the same
    counts per model or agent, which add up to the row.
    """
    from agentdex.api.usage_prices import load_prices

    if by not in BY:
        raise UsageError(f"--by must be one of {', '.join(BY)}, not {by!r}")
    if split is not None and split not in SPLIT:
        raise UsageError(f"split must be one of {', '.join(SPLIT)}, not {split!r}")
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be at least 1, not {limit}")
    first, last = parse_day(since, "--since"), parse_day(until, "--until")
    table = load_prices(prices)
    result: dict[str, Any] = {
        "by": by,
        "since": first.isoformat() if first else None,
        "until": last.isoformat() if last else None,
        "agent": agent,
        "timezone": _timezone(),
        "status": "ok",
        "prices": table.describe(),
        "stats": {},
    }

    def read() -> dict[str, Any] | None:
        with _collector_off():
            return _read(by, first, last, agent, table, root, home, split, limit)

    found = _answer(read, result["stats"], refresh_first, root, home, rows)
    if found is None:
        result.update(status="no-index", rows=[], totals=_Row(()).to_json(()), unpriced=[])
        result["stats"].update(returned=0, total=0)
        return result
    result["stats"].update(found.pop("stats"))
    result.update(found)
    return result


@contextmanager
def _collector_off() -> Iterator[None]:
    """Python's cycle collector paused while a view is read: a session view makes some
    50,000 containers, none in a cycle, and the collections their allocation sets off cost
    ~10 ms of a fresh process (the objects are freed by reference counting as before)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _answer(
    read: Callable[[], dict[str, Any] | None],
    stats: dict[str, Any],
    refresh_first: bool,
    root: str | os.PathLike[str] | None,
    home: str | None,
    rows: Iterable[StoreRow] | None,
) -> dict[str, Any] | None:
    """What ``read()`` finds after the refresh ``refresh_first`` asks for.

    A fresh process reads the committed index while a forked child checks the
    store files for changes (:mod:`agentdex.api.check_ahead`, as ``search``
    does: one ``stat`` per store file, 30-70 ms on the 1 GB corpus, on the
    other core); the answer is kept when nothing changed, else the refresh
    reads what did and ``read()`` runs again.
    """
    from agentdex.api.index import maybe_refresh

    known = None
    if refresh_first and rows is None:
        from agentdex.api.check_ahead import answered_ahead

        def early(_budget: object) -> tuple[dict[str, Any] | None] | None:
            try:
                return (read(),)
            except (AgentdexError, sqlite3.Error):
                return None  # an index the refresh rebuilds first (another format): after it

        ahead = answered_ahead(root, home, None, early)
        if ahead is not None and ahead.answer is not None:
            stats["refresh"] = ahead.refresh
            return ahead.answer[0]
        known = ahead.changes if ahead is not None else None
    maybe_refresh(refresh_first, root, home, rows, stats, known=known)
    return read()


def _where(first: date | None, last: date | None, agent: str | None) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if first is not None:
        clauses.append("r.bucket >= ?")
        params.append(_local_midnight(first))
    if last is not None:
        clauses.append("r.bucket >= 0 AND r.bucket < ?")
        params.append(_local_midnight(last + timedelta(days=1)))
    if agent:
        clauses.append("c.agent = ?")
        params.append(agent)
    return " AND ".join(clauses) or "1", params


def _read(
    by: str,
    first: date | None,
    last: date | None,
    agent: str | None,
    table: PriceTable,
    root: str | os.PathLike[str] | None,
    home: str | None,
    split: str | None = None,
    limit: int | None = None,
) -> dict[str, Any] | None:
    from agentdex.index.coverage import read as read_coverage
    from agentdex.index.store import Location, index_root, open_reader_db

    gen = Location(index_root(root, home=home)).current()
    if gen is None or not (gen / "index.db").exists():
        return None
    db = open_reader_db(gen)
    try:
        tables = _usage_tables(db)
        if "usage_rollup" not in tables:
            return None  # a generation no writer has migrated yet
        db.execute("BEGIN")
        covered = read_coverage(db)
        columns, names = _KEYS[by]
        if split is not None:
            columns = (*columns, SPLIT[split])
        where, params = _where(first, last, agent)
        # a view without a date range reads the per-context sums when the generation has them
        timeless = first is None and last is None and by in _TIMELESS
        query = _query(by, columns, where, timeless and "usage_contexts" in tables)
        unpriced: dict[str | None, list[int]] = {}
        found = db.execute(query, params).fetchall()
        if by == "session" and split is None and timeless and "usage_contexts" in tables:
            # the common big view: rows built straight from the sums (5,776 at 1 GB)
            result = _session_view(db, found, table, unpriced, limit)
            if covered is not None:
                result.update(status="partial", coverage=covered.to_json())
            return result
        grouped = _group(found, len(columns), table, unpriced)
        parts: dict[tuple[Any, ...], list[_Row]] = {}
        if split is not None:
            grouped, parts = _fold(grouped)
        projects = _session_projects(found) if by == "session" else {}
        ordered = _ordered(by, list(grouped.values()), projects)
        # the rows asked for are written out (a session view can have thousands)
        shown = ordered if limit is None else _first(by, ordered, limit)
        out_rows = [row.to_json(names) for row in shown]
        if split is not None:
            for row, part_of in zip(out_rows, shown, strict=True):
                row["parts"] = [
                    {"name": part.key[-1], **part.to_json(())}
                    for part in sorted(parts[part_of.key], key=lambda p: -_total(p.counts))
                ]
        if by == "session":
            _describe_sessions(db, out_rows, projects)
    finally:
        db.close()
    result = _finish(out_rows, grouped, unpriced)
    result["stats"] = {"returned": len(out_rows), "total": len(ordered)}
    if covered is not None:  # the index is still being built: the newest files' calls so far
        result.update(status="partial", coverage=covered.to_json())
    return result


def _usage_tables(db: sqlite3.Connection) -> set[str]:
    """Which of the usage rollups this generation has (one written before a migration lacks
    it until a writer opens it)."""
    return {
        row[0]
        for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND name IN ('usage_rollup', 'usage_contexts')"
        )
    }


def _query(by: str, columns: tuple[str, ...], where: str, per_context: bool) -> str:
    """The SQL of a view: its key columns, the model, the prompt size, the sums (and, by
    session, a project), one row per key, model and size.

    ``per_context`` reads ``usage_contexts`` (no time: one row per context and size)
    instead of the 15-minute rollup. By session those rows are nearly one per key already,
    so they are returned as they are and grouped in Python (:func:`_group` adds rows of the
    same key, model and size): SQLite's GROUP BY sorts every row by its text keys first,
    which cost more than the scan (35 against 13 ms on the 1 GB corpus).
    """
    keys = ", ".join(columns)
    # a conversation's project: the largest of its calls' (one more column, not a query)
    if per_context and by == "session":
        return (
            f"SELECT {keys}, c.model, r.size, {_COLUMNS}, coalesce(c.project, c.cwd)"
            f" FROM usage_contexts r JOIN contexts c ON c.id = r.context_id WHERE {where}"
        )
    project = ", max(coalesce(c.project, c.cwd))" if by == "session" else ""
    table = "usage_contexts" if per_context else "usage_rollup"
    return (
        f"SELECT {keys}, c.model, r.size, {_SUMS}{project}"
        f" FROM {table} r JOIN contexts c ON c.id = r.context_id"
        f" WHERE {where} GROUP BY {keys}, c.model, r.size"
    )


def _ordered(by: str, rows: list[_Row], projects: dict[tuple[str, str], str]) -> list[_Row]:
    """Time views oldest first; the others by total tokens, largest first (then by name)."""
    if by in ("day", "week", "month"):
        return sorted(rows, key=lambda r: (r.key[0] is None, r.key[0] or ""))

    if by == "session":  # the key is (agent, session id): the projects' key
        return sorted(rows, key=lambda r: (-_total(r.counts), str(projects.get(r.key))))
    if by == "branch":
        return sorted(rows, key=lambda r: (-_total(r.counts), str(r.key[1] or r.key[0])))
    return sorted(rows, key=lambda r: (-_total(r.counts), str(r.key[0])))


def _first(by: str, ordered: list[_Row], limit: int) -> list[_Row]:
    """The ``limit`` rows a limited view shows: the latest days (weeks, months) of a time view
    (calls without a time are left out), else the largest."""
    if by in ("day", "week", "month"):
        return [row for row in ordered if row.key[0] is not None][-limit:]
    return ordered[:limit]


def _group(
    found: list[tuple[Any, ...]],
    width: int,
    table: PriceTable,
    unpriced: dict[str | None, list[int]],
) -> dict[tuple[Any, ...], _Row]:
    """Rows by key; ``unpriced`` gets [calls, tokens] per model that could not be priced."""
    grouped: dict[tuple[Any, ...], _Row] = {}
    cost_of = table.cost_of
    for row in found:
        key, model, size = row[:width], row[width], row[width + 1]
        # input, cache read, cache write, its 1 h part, output, reasoning
        counts = row[width + 3 : width + 9]
        cost = cost_of(model, size, *counts[:5])
        entry = grouped.get(key)
        if entry is None:
            entry = grouped[key] = _Row(key)
        calls = row[width + 2]
        entry.add(calls, counts, model, cost)
        if cost is None:
            missing = unpriced.setdefault(model, [0, 0])
            missing[0] += calls
            missing[1] += _total(counts)
    return grouped


def _fold(
    grouped: dict[tuple[Any, ...], _Row],
) -> tuple[dict[tuple[Any, ...], _Row], dict[tuple[Any, ...], list[_Row]]]:
    """Rows keyed by (key..., split value) -> rows by key, and each one's parts."""
    rows: dict[tuple[Any, ...], _Row] = {}
    parts: dict[tuple[Any, ...], list[_Row]] = {}
    for full, part in grouped.items():
        key = full[:-1]
        if key not in rows:
            rows[key] = _Row(key)
            parts[key] = []
        rows[key].merge(part)
        parts[key].append(part)
    return rows, parts


def _session_projects(found: list[tuple[Any, ...]]) -> dict[tuple[str, str], str]:
    """Each conversation's project: the largest of the projects (else working directories)
    its calls were made in (the session query's last column)."""
    projects: dict[tuple[str, str], str] = {}
    for row in found:
        key, project = (row[0], row[1]), row[-1]
        if project is not None and (key not in projects or project > projects[key]):
            projects[key] = project
    return projects


def _describe_sessions(
    db: sqlite3.Connection, out_rows: list[dict[str, Any]], projects: dict[tuple[str, str], str]
) -> None:
    """Each row's conversation title and project."""
    titles = _titles(db, [(row["agent"], row["session_id"]) for row in out_rows])
    for row in out_rows:
        key = (row["agent"], row["session_id"])
        row["title"] = titles.get(key)
        row["project"] = projects.get(key)


def _session_view(
    db: sqlite3.Connection,
    found: list[tuple[Any, ...]],
    table: PriceTable,
    unpriced: dict[str | None, list[int]],
    limit: int | None,
) -> dict[str, Any]:
    """``--by session`` without a date range, from ``usage_contexts`` rows (agent, session
    id, model, size, calls, the six counts, project): the same rows, totals and order as
    :func:`_group` + :class:`_Row` give, built as lists and dict literals.

    One row per conversation is the common case (5,776 rows for 5,776 conversations at
    1 GB), and an object, a slice and a ``dict(zip(...), **fields)`` per row were most of
    the view's Python; costs are summed in the same order, so they are the same floats.
    """
    cost_of = table.cost_of
    # per conversation: calls, the six counts, priced cost, unpriced calls and tokens,
    # models, project
    acc: dict[tuple[str, str], list[Any]] = {}
    get = acc.get
    for agent, session, model, size, calls, inp, read, write, w1h, out, reason, project in found:
        cost = cost_of(model, size, inp, read, write, w1h, out)
        if cost is None:
            tokens = inp + read + write + out
            missing = unpriced.setdefault(model, [0, 0])
            missing[0] += calls
            missing[1] += tokens
            cost, lost_calls, lost_tokens = 0.0, calls, tokens
        else:
            lost_calls = lost_tokens = 0
        key = (agent, session)
        entry = get(key)
        if entry is None:
            acc[key] = [calls, inp, read, write, w1h, out, reason, 0.0 + cost,
                        lost_calls, lost_tokens, {model}, project]  # fmt: skip
            continue
        entry[0] += calls
        entry[1] += inp
        entry[2] += read
        entry[3] += write
        entry[4] += w1h
        entry[5] += out
        entry[6] += reason
        entry[7] += cost
        entry[8] += lost_calls
        entry[9] += lost_tokens
        entry[10].add(model)
        if project is not None and (entry[11] is None or project > entry[11]):
            entry[11] = project
    ordered = sorted(
        acc.items(), key=lambda kv: (-(kv[1][1] + kv[1][2] + kv[1][3] + kv[1][5]), str(kv[1][11]))
    )
    shown = ordered if limit is None else ordered[:limit]
    titles = _titles(db, [key for key, _ in shown])
    out_rows = [
        {
            "agent": key[0],
            "session_id": key[1],
            "calls": e[0],
            "input_tokens": e[1],
            "cache_read_tokens": e[2],
            "cache_write_tokens": e[3],
            "cache_write_1h_tokens": e[4],
            "output_tokens": e[5],
            "reasoning_tokens": e[6],
            "total_tokens": e[1] + e[2] + e[3] + e[5],
            "cost_usd": None if e[8] else (cost := round(e[7], 8)),
            "priced_cost_usd": round(e[7], 8) if e[8] else cost,
            "unpriced_calls": e[8],
            "unpriced_tokens": e[9],
            "models": list(e[10]) if len(e[10]) == 1 else sorted(e[10], key=_model_order),
            "title": titles.get(key),
            "project": e[11],
        }
        for key, e in shown
    ]
    totals = _Row(())
    if acc:
        entries = acc.values()
        columns = list(zip(*entries, strict=True))
        totals.calls = sum(columns[0])
        totals.counts = [sum(column) for column in columns[1:7]]
        totals.cost = sum(columns[7])
        totals.unpriced_calls = sum(columns[8])
        totals.unpriced_tokens = sum(columns[9])
        totals.models = set().union(*columns[10])
    return {
        "rows": out_rows,
        "totals": totals.to_json(()),
        "unpriced": _unpriced_json(unpriced),
        "stats": {"returned": len(out_rows), "total": len(ordered)},
    }


def _titles(db: sqlite3.Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The titles of these conversations (agent, session id); more than 64 asked: every
    conversation's title, read in one pass."""
    if len(keys) <= 64:  # a few rows (--agent, a short range, -n): look each one up
        titles: dict[tuple[str, str], str] = {}
        for key in keys:
            found = db.execute(
                "SELECT title FROM titles WHERE agent = ? AND session_id = ?", key
            ).fetchone()
            if found:
                titles[key] = found[0]
        return titles
    # one pass over the titles (the 1 GB corpus has 5,776 conversations with usage)
    return {(agent, session): title for agent, session, title in db.execute(
        "SELECT agent, session_id, title FROM titles")}  # fmt: skip


def _finish(
    out_rows: list[dict[str, Any]],
    grouped: dict[tuple[Any, ...], _Row],
    unpriced: dict[str | None, list[int]],
) -> dict[str, Any]:
    """The rows with the totals of every row (shown or not) and the unpriced models."""
    totals = _Row(())
    rows = grouped.values()
    if rows:  # column sums (a session view has thousands of rows)
        totals.calls = sum(row.calls for row in rows)
        totals.counts = [sum(column) for column in zip(*(row.counts for row in rows), strict=True)]
        totals.cost = sum(row.cost for row in rows)
        totals.unpriced_calls = sum(row.unpriced_calls for row in rows)
        totals.unpriced_tokens = sum(row.unpriced_tokens for row in rows)
        totals.models = set().union(*(row.models for row in rows))
    return {"rows": out_rows, "totals": totals.to_json(()), "unpriced": _unpriced_json(unpriced)}


def _unpriced_json(unpriced: dict[str | None, list[int]]) -> list[dict[str, Any]]:
    """The models without a price, with their calls and tokens, in model order."""
    return [
        {"model": m, "calls": unpriced[m][0], "tokens": unpriced[m][1]}
        for m in sorted(unpriced, key=_model_order)
    ]


def conversation_usage(
    db: sqlite3.Connection, keys: Iterable[tuple[str, str]], prices: PriceTable | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(agent, session id): {"total_tokens", "cost_usd"}}`` of the conversations with usage
    among ``keys`` (what ``conversations`` shows per row); ``cost_usd`` is None when a call
    has no price."""
    from agentdex.api.usage_prices import load_prices

    wanted = set(keys)
    tables = _usage_tables(db) if wanted else set()
    if "usage_rollup" not in tables:
        return {}
    rollup = "usage_contexts" if "usage_contexts" in tables else "usage_rollup"
    table = prices or load_prices()
    sessions = sorted({session for _agent, session in wanted})
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(sessions), 900):
        chunk = sessions[start : start + 900]
        found.extend(
            db.execute(
                f"SELECT c.agent, c.session_id, c.model, r.size, {_SUMS}"
                f" FROM {rollup} r JOIN contexts c ON c.id = r.context_id"
                f" WHERE c.session_id IN ({','.join('?' * len(chunk))})"
                " GROUP BY c.agent, c.session_id, c.model, r.size",
                chunk,
            ).fetchall()
        )
    grouped = _group([r for r in found if (r[0], r[1]) in wanted], 2, table, {})
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for key, row in grouped.items():
        data = row.to_json(())
        out[(str(key[0]), str(key[1]))] = {
            "total_tokens": data["total_tokens"],
            "cost_usd": data["cost_usd"],
        }
    return out

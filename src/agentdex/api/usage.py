"""``usage``: tokens and cost of every model call, by day, week, month, agent, model, project,
branch or conversation (``docs/usage.md``).

Read from the index's rollup (:mod:`agentdex.index.usage`): each counted call
once, summed per conversation context, 15-minute slot and prompt size, so a
view groups a few thousand rows, never the calls. Every view of the same
filter adds up to the same totals. Days are local days (the process's time
zone, ``TZ``); ``since``/``until`` are inclusive local dates.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from agentdex.errors import UsageError

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
_SUMS = "sum(r.calls), " + ", ".join(
    f"sum(r.{c})"
    for c in ("input", "cache_read", "cache_write", "cache_write_1h", "output", "reasoning")
)


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
    __slots__ = ("calls", "cost", "counts", "key", "models", "unpriced_calls", "unpriced_tokens")

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key
        self.calls = 0
        self.counts = [0] * len(TOKEN_FIELDS)
        self.cost = 0.0
        self.unpriced_calls = 0
        self.unpriced_tokens = 0
        self.models: set[str | None] = set()

    def add(
        self, calls: int, counts: tuple[int, ...], model: str | None, cost: float | None
    ) -> None:
        self.calls += calls
        mine = self.counts
        for i, value in enumerate(counts):
            mine[i] += value
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
        out: dict[str, Any] = dict(zip(names, self.key, strict=False))
        out["calls"] = self.calls
        out.update(zip(TOKEN_FIELDS, self.counts, strict=True))
        out["total_tokens"] = _total(self.counts)
        out["cost_usd"] = None if self.unpriced_calls else round(self.cost, 8)
        out["priced_cost_usd"] = round(self.cost, 8)
        out["unpriced_calls"] = self.unpriced_calls
        out["unpriced_tokens"] = self.unpriced_tokens
        out["models"] = sorted(self.models, key=lambda m: (m is None, m or ""))
        return out


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
) -> dict[str, Any]:
    """Token usage and cost grouped ``by`` one of :data:`BY`, with the totals row.

    ``split`` (``model`` or ``agent``) adds to each row its ``parts``: the same
    counts per model or agent, which add up to the row.
    """
    from agentdex.api.usage_prices import load_prices

    if by not in BY:
        raise UsageError(f"--by must be one of {', '.join(BY)}, not {by!r}")
    if split is not None and split not in SPLIT:
        raise UsageError(f"split must be one of {', '.join(SPLIT)}, not {split!r}")
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
    from agentdex.api.index import maybe_refresh

    maybe_refresh(refresh_first, root, home, rows, result["stats"])
    found = _read(by, first, last, agent, table, root, home, split)
    if found is None:
        result.update(status="no-index", rows=[], totals=_Row(()).to_json(()), unpriced=[])
        return result
    result.update(found)
    return result


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
) -> dict[str, Any] | None:
    from agentdex.index.coverage import read as read_coverage
    from agentdex.index.store import Location, index_root, open_reader_db

    gen = Location(index_root(root, home=home)).current()
    if gen is None or not (gen / "index.db").exists():
        return None
    db = open_reader_db(gen)
    try:
        if not db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_rollup'"
        ).fetchone():
            return None  # a generation no writer has migrated yet
        db.execute("BEGIN")
        covered = read_coverage(db)
        columns, names = _KEYS[by]
        if split is not None:
            columns = (*columns, SPLIT[split])
        where, params = _where(first, last, agent)
        keys = ", ".join(columns)
        query = (
            f"SELECT {keys}, c.model, r.size, {_SUMS}"
            " FROM usage_rollup r JOIN contexts c ON c.id = r.context_id"
            f" WHERE {where} GROUP BY {keys}, c.model, r.size"
        )
        unpriced: dict[str | None, list[int]] = {}
        grouped = _group(db.execute(query, params).fetchall(), len(columns), table, unpriced)
        if split is not None:
            grouped, parts = _fold(grouped)
        out_rows = [row.to_json(names) for row in grouped.values()]
        if split is not None:
            for row, key in zip(out_rows, grouped, strict=True):
                row["parts"] = [
                    {"name": part.key[-1], **part.to_json(())}
                    for part in sorted(parts[key], key=lambda p: -_total(p.counts))
                ]
        if by == "session":
            _describe_sessions(db, out_rows)
    finally:
        db.close()
    found = _finish(by, out_rows, grouped, unpriced)
    if covered is not None:  # the index is still being built: the newest files' calls so far
        found.update(status="partial", coverage=covered.to_json())
    return found


def _group(
    found: list[tuple[Any, ...]],
    width: int,
    table: PriceTable,
    unpriced: dict[str | None, list[int]],
) -> dict[tuple[Any, ...], _Row]:
    """Rows by key; ``unpriced`` gets [calls, tokens] per model that could not be priced."""
    grouped: dict[tuple[Any, ...], _Row] = {}
    for row in found:
        key, model, size = row[:width], row[width], int(row[width + 1])
        calls, inp, read, write, write_1h, out, reasoning = (v or 0 for v in row[width + 2 :])
        cost = None
        if table.rates(model, size) is not None:
            counts = {"input": inp, "cache_read": read, "cache_write": write,
                      "cache_write_1h": write_1h, "output": out}  # fmt: skip
            cost = table.cost(model, size, counts)
        entry = grouped.get(key)
        if entry is None:
            entry = grouped[key] = _Row(key)
        entry.add(calls, (inp, read, write, write_1h, out, reasoning), model, cost)
        if cost is None:
            missing = unpriced.setdefault(model, [0, 0])
            missing[0] += calls
            missing[1] += inp + read + write + out
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


def _describe_sessions(db: sqlite3.Connection, out_rows: list[dict[str, Any]]) -> None:
    """Each conversation's title and project (two grouped queries, not two per row: the
    1 GB corpus has 5,776 conversations with usage)."""
    wanted = {(row["agent"], row["session_id"]) for row in out_rows}
    titles: dict[tuple[str, str], str] = {}
    projects: dict[tuple[str, str], str | None] = {}
    if len(wanted) <= 64:  # a few rows (--agent, a short range): look each one up
        for agent, session in wanted:
            found = db.execute(
                "SELECT title FROM titles WHERE agent = ? AND session_id = ?", (agent, session)
            ).fetchone()
            if found:
                titles[(agent, session)] = found[0]
            project = db.execute(
                "SELECT max(coalesce(project, cwd)) FROM contexts"
                " WHERE agent = ? AND session_id = ?",
                (agent, session),
            ).fetchone()
            projects[(agent, session)] = project[0] if project else None
    else:
        for agent, session, title in db.execute("SELECT agent, session_id, title FROM titles"):
            if (agent, session) in wanted:
                titles[(agent, session)] = title
        for agent, session, project in db.execute(
            "SELECT agent, session_id, max(coalesce(project, cwd)) FROM contexts"
            " GROUP BY agent, session_id"
        ):
            if (agent, session) in wanted:
                projects[(agent, session)] = project
    for row in out_rows:
        key = (row["agent"], row["session_id"])
        row["title"] = titles.get(key)
        row["project"] = projects.get(key)


def _finish(
    by: str,
    out_rows: list[dict[str, Any]],
    grouped: dict[tuple[Any, ...], _Row],
    unpriced: dict[str | None, list[int]],
) -> dict[str, Any]:
    totals = _Row(())
    for row in grouped.values():
        totals.merge(row)
    if by in ("day", "week", "month"):
        out_rows.sort(key=lambda r: (r[by] is None, r[by] or ""))
    else:
        out_rows.sort(key=lambda r: (-r["total_tokens"], str(r.get(by) or r.get("project"))))
    result_unpriced = [
        {"model": m, "calls": unpriced[m][0], "tokens": unpriced[m][1]}
        for m in sorted(unpriced, key=lambda m: (m is None, m or ""))
    ]
    return {"rows": out_rows, "totals": totals.to_json(()), "unpriced": result_unpriced}


def conversation_usage(
    db: sqlite3.Connection, keys: Iterable[tuple[str, str]], prices: PriceTable | None = None
) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(agent, session id): {"total_tokens", "cost_usd"}}`` of the conversations with usage
    among ``keys`` (what ``conversations`` shows per row); ``cost_usd`` is None when a call
    has no price."""
    from agentdex.api.usage_prices import load_prices

    wanted = set(keys)
    if (
        not wanted
        or not db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_rollup'"
        ).fetchone()
    ):
        return {}
    table = prices or load_prices()
    sessions = sorted({session for _agent, session in wanted})
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(sessions), 900):
        chunk = sessions[start : start + 900]
        found.extend(
            db.execute(
                f"SELECT c.agent, c.session_id, c.model, r.size, {_SUMS}"
                " FROM usage_rollup r JOIN contexts c ON c.id = r.context_id"
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

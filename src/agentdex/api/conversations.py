"""Conversations: list them (newest first), optionally those matching a query or a work dir."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentdex.api.ids import conversation_id, known, short_ids
from agentdex.api.index import maybe_refresh, reader, refresh
from agentdex.errors import UsageError
from agentdex.index.context_stats import PROMPT_SQL, REPLY_SQL, TOOL_SQL
from agentdex.records import iso_utc

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from agentdex.catalogue import StoreRow
    from agentdex.search.engine import Engine

MAX_LIMIT = 10_000
#: Prompts read to find one that names the conversation (the rest are command echoes).
TITLE_PROMPTS = 25


@dataclass(slots=True)
class ConversationsResult:
    query: str | None
    status: str = "ok"
    conversations: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    #: the home listed (paths under it read ``~/...`` on a terminal and in the page)
    home: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: how much of the history an index still being built holds (``search``'s ``coverage``)
    coverage: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "query": self.query,
            "status": self.status,
            "stats": self.stats,
            "home": self.home,
            "warnings": self.warnings,
            "conversations": self.conversations,
        }
        if self.coverage is not None:
            data["coverage"] = self.coverage
        return data


def _prompt_logs() -> str:
    """The catalogue's prompt-log stores as an SQL list: their entries repeat the prompts
    a conversation's transcript holds, so they count only where there is no transcript."""
    from agentdex.catalogue import CATALOGUE

    logs = sorted({row.store for row in CATALOGUE if row.holds == "prompt log"})
    return ",".join("'" + store.replace("'", "''") + "'" for store in logs) or "''"


def _gone_sql(engine: Engine) -> str:
    """SQL over ``records``: is this record kept only by the archive (its source lost it)?"""
    from agentdex.index.files import ARCHIVED_HIGH, ARCHIVED_LOW

    ids = [
        int(r[0])
        for r in engine.db.execute(
            "SELECT id FROM files WHERE path >= ? AND path < ?", (ARCHIVED_LOW, ARCHIVED_HIGH)
        )
    ]
    return f"file_id IN ({','.join(map(str, ids))})" if ids else "0"


def _session_rows(engine: Engine, where: str, params: list[object]) -> list[tuple[Any, ...]]:
    """One row per conversation with a context matching ``where`` (over context columns).

    Read from the per-context totals the writer keeps (:mod:`agentdex.index.context_stats`);
    a generation written before them is aggregated over its records as it always was.
    """
    from agentdex.index import context_stats

    if not context_stats.present(engine.db):
        return _session_rows_from_records(engine, where, params)
    told = f"c.store NOT IN ({_prompt_logs()})"
    prompts = (
        f"CASE WHEN sum(({told}) * s.records) > 0 THEN sum(({told}) * s.prompts)"
        " ELSE sum(s.prompts) END"
    )
    return list(
        engine.db.execute(
            "SELECT agent, session_id, min(s.first_ts), max(s.last_ts), sum(s.records),"
            f" max(project), max(cwd), {prompts}, sum(s.replies), sum(s.tools),"
            " group_concat(DISTINCT store), max(s.archived > 0)"
            " FROM contexts c JOIN context_stats s ON s.context_id = c.id"
            f" WHERE {where} GROUP BY agent, session_id",
            params,
        )
    )


def _session_rows_from_records(
    engine: Engine, where: str, params: list[object]
) -> list[tuple[Any, ...]]:
    """:func:`_session_rows` aggregated over every record (and the oracle its tests use)."""
    logs = _prompt_logs()
    told = f"store NOT IN ({logs})"
    prompts = (
        f"CASE WHEN sum({told}) > 0 THEN sum({PROMPT_SQL} AND {told}) ELSE sum({PROMPT_SQL}) END"
    )
    return list(
        engine.db.execute(
            "SELECT agent, session_id, min(timestamp), max(timestamp), count(*),"
            f" max(project), max(cwd), {prompts}, sum({REPLY_SQL}), sum({TOOL_SQL}),"
            f" group_concat(DISTINCT store), max({_gone_sql(engine)})"
            f" FROM records WHERE {where} GROUP BY agent, session_id",
            params,
        )
    )


#: A conversation's place, per context: (agent, session_id, project, cwd, worktree, first_ts).
_PLACES_SQL = (
    "SELECT c.agent, c.session_id, c.project, c.cwd, c.worktree, s.first_ts"
    " FROM contexts c JOIN context_stats s ON s.context_id = c.id WHERE {where} ORDER BY c.id"
)
_PLACES_FROM_RECORDS_SQL = (
    "SELECT agent, session_id, project, cwd, worktree, min(timestamp)"
    " FROM records WHERE {where} GROUP BY context_id ORDER BY context_id"
)


@dataclass(slots=True)
class Place:
    """Where a conversation ran: its launch project and cwd, and every folder it touched."""

    project: str | None = None
    cwd: str | None = None
    #: every cwd, project and worktree of its contexts (what ``--here`` matches)
    folders: set[str] = field(default_factory=set)


def _places(engine: Engine, where: str, params: list[object]) -> dict[tuple[str, str], Place]:
    """Each conversation's :class:`Place`: the project (and cwd) it was launched in.

    One notion everywhere (``show``, ``export``, the listing, the page): the
    project of the earliest record that has one (:func:`agentdex.api._order.launch_place`).
    """
    from agentdex.api._order import launch_place
    from agentdex.index import context_stats

    sql = _PLACES_SQL if context_stats.present(engine.db) else _PLACES_FROM_RECORDS_SQL
    by_conversation: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in engine.db.execute(sql.format(where=where), params):
        by_conversation.setdefault((row[0], row[1]), []).append(row)
    out: dict[tuple[str, str], Place] = {}
    for key, rows in by_conversation.items():
        project, cwd = launch_place(rows, lambda r: r[2], lambda r: r[3], lambda r: r[5])
        folders = {p for r in rows for p in (r[2], r[3], r[4]) if p}
        out[key] = Place(project, cwd, folders)
    return out


def _places_of(engine: Engine, session_ids: set[str]) -> dict[tuple[str, str], Place]:
    """:func:`_places` of the conversations with these ids (all of their contexts)."""
    ids = sorted(session_ids)
    out: dict[tuple[str, str], Place] = {}
    for i in range(0, len(ids), 900):
        chunk = ids[i : i + 900]
        out.update(
            _places(engine, f"session_id IN ({','.join('?' * len(chunk))})", list[object](chunk))
        )
    return out


def conversation_title(engine: Engine, agent: str, session_id: str) -> str:
    """The conversation's title (:mod:`agentdex.api.titles`): the agent's own when it is
    one, else the first real prompt, the first reply, or where and when it ran."""
    from agentdex.api import titles

    row = engine.db.execute(
        "SELECT title FROM titles WHERE agent = ? AND session_id = ?", (agent, session_id)
    ).fetchone()
    own = str(row[0]) if row and row[0] else None
    if titles.clean(own, typed=False):
        return titles.clean(own, typed=False) or ""

    def texts(where: str, limit: int) -> Iterator[str]:
        for hit in engine.all_hits(
            f"r.agent = ? AND r.session_id = ? AND {where} ORDER BY r.timestamp, r.id"
            f" LIMIT {limit}",
            (agent, session_id),
        ):
            yield engine.original_text(hit)

    first = engine.db.execute(
        "SELECT min(timestamp), max(project) FROM records WHERE agent = ? AND session_id = ?",
        (agent, session_id),
    ).fetchone()
    return titles.choose(
        own,
        texts("r.kind = 'prompt'", TITLE_PROMPTS),
        texts("r.kind = 'message' AND r.role = 'assistant'", 5),
        agent=agent,
        project=first[1] if first else None,
        first_ts=first[0] if first else None,
    )


def _conversation_json(
    engine: Engine,
    row: tuple[Any, ...],
    place: Place | None,
    short: str | None = None,
    home: str | None = None,
) -> dict[str, Any]:
    """One conversation: its counts say who said what (``docs/search.md``).

    ``prompts`` (typed by a person; a prompt log's copies count only when the
    conversation has no transcript), ``replies`` (the agent's answers),
    ``tool_events`` (tool calls and results), ``records`` (everything indexed,
    reasoning and harness text included); ``message_count`` is prompts plus
    replies, the exchange as the person saw it. ``time_source`` says whether
    the times are the stores' own or their files' modification times.
    ``source_gone``: some of its records are kept only by agentdex's archive
    (the agent deleted, truncated or rewrote the file that held them).
    """
    (agent, session_id, first, last, count, _, _, prompts, replies, tools, stores, gone) = row
    project, cwd = (place.project, place.cwd) if place else (None, None)
    return {
        "agent": agent,
        "session_id": session_id,
        "id": conversation_id(agent, session_id, home),
        "short_id": short or conversation_id(agent, session_id, home),
        "title": conversation_title(engine, agent, session_id),
        "project": project,
        "cwd": cwd,
        "first_activity": iso_utc(first),
        "last_activity": iso_utc(last),
        "prompts": prompts or 0,
        "replies": replies or 0,
        "tool_events": tools or 0,
        "records": count,
        "message_count": (prompts or 0) + (replies or 0),
        "time_source": _time_source(stores),
        "source_gone": bool(gone),
    }


def _time_source(stores: str | None) -> str:
    """``file-mtime`` when every store of the conversation keeps no times, else ``recorded``."""
    from agentdex.catalogue import store

    names = [name for name in (stores or "").split(",") if name]
    try:
        mtime_only = bool(names) and all(store(n).times == "file-mtime" for n in names)
    except KeyError:
        return "recorded"
    return "file-mtime" if mtime_only else "recorded"


def conversations(
    query: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    limit: int | None = 50,
    rows: Iterable[StoreRow] | None = None,
    now: float | None = None,
    here: str | None = None,
    only_here: bool = False,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> ConversationsResult:
    """Conversations (newest activity first), optionally only those with a record matching.

    ``here`` (a folder) puts the conversations that ran in it, its git
    project or its worktree first; ``only_here`` lists only those.
    """
    from agentdex.paths import home_dir

    if limit is not None and not (0 < limit <= MAX_LIMIT):
        raise UsageError(f"limit must be between 1 and {MAX_LIMIT}")
    if query:
        from agentdex.search.query import parse_query

        parse_query(query, now=now)
    result = ConversationsResult(query=query or None, home=str(home_dir(home)))
    maybe_refresh(refresh_first, root, home, rows, result.stats, progress)
    with reader(root, home) as engine:
        if engine is None:
            result.status = "no-index"
            if str(result.stats.get("refresh", "")).startswith("skipped"):
                from agentdex.index.coverage import BuildCoverage

                # another process builds it and has committed nothing yet: say so, as search
                result.status = "partial"
                result.coverage = BuildCoverage().to_json()
            result.stats["total"] = 0
            result.stats["returned"] = 0
            return result
        from agentdex.index.coverage import read as read_coverage

        covered = read_coverage(engine.db)
        if covered is not None:  # a first build stopped at its deadline: the newest files
            result.status = "partial"
            result.coverage = covered.to_json()
        if query:
            from agentdex.api.search import matching_rows

            matched, _, _ = matching_rows(engine, query, now=now)
            keys = {(r[5], r[6]) for r in matched}
            ids = sorted({k[1] for k in keys})
            found: list[tuple[Any, ...]] = []
            for i in range(0, len(ids), 900):
                chunk = ids[i : i + 900]
                marks = ",".join("?" * len(chunk))
                found.extend(_session_rows(engine, f"session_id IN ({marks})", list(chunk)))
            places = _places_of(engine, set(ids))
            rows_found = [r for r in found if (r[0], r[1]) in keys]
        else:
            rows_found = _session_rows(engine, "1", [])
            places = _places(engine, "1", [])
        rows_found.sort(key=lambda r: (r[3] is None, -(r[3] or 0.0), r[1]))
        if here is not None or only_here:
            from agentdex.api.here import here_roots, inside_any

            inside = inside_any(here_roots(here or os.getcwd()))

            def is_here(row: tuple[Any, ...]) -> bool:
                place = places.get((row[0], row[1]))
                return place is not None and any(inside(p) for p in place.folders)

            if only_here:
                rows_found = [r for r in rows_found if is_here(r)]
            else:
                rows_found.sort(key=lambda r: not is_here(r))  # stable: newest first in each
        result.stats["total"] = len(rows_found)
        shown = rows_found[:limit] if limit is not None else rows_found
        result.stats["returned"] = len(shown)
        shorts = short_ids(known(engine.db), home)  # unique among all, not only the page
        result.conversations = [
            _conversation_json(engine, r, places.get((r[0], r[1])), shorts.get((r[0], r[1])), home)
            for r in shown
        ]
        from agentdex.api.usage import conversation_usage

        spent = conversation_usage(
            engine.db, [(c["agent"], c["session_id"]) for c in result.conversations]
        )
        for conv in result.conversations:
            used = spent.get((conv["agent"], conv["session_id"]))
            conv["total_tokens"] = used["total_tokens"] if used else None
            conv["cost_usd"] = used["cost_usd"] if used else None
    return result


def conversations_for_workdir(
    workdir: str,
    since: float | None,
    until: float | None,
    home: str | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    refresh_first: bool = True,
) -> list[dict[str, Any]]:
    """Conversations with a record whose cwd is ``workdir`` or inside it, active in the window."""
    base = os.path.normpath(os.path.abspath(os.path.expanduser(workdir)))
    if refresh_first:
        refresh(root, home=home, wait=False)
    with reader(root, home) as engine:
        if engine is None:
            return []
        prefix = base.rstrip("/") + "/"
        rows = _session_rows(
            engine, "cwd = ? OR substr(cwd, 1, ?) = ?", [base, len(prefix), prefix]
        )
        places = _places_of(engine, {r[1] for r in rows})
        out = []
        for row in rows:
            first, last = row[2], row[3]
            if since is not None and (last is None or last < since):
                continue
            if until is not None and (first is None or first > until):
                continue
            place = places.get((row[0], row[1]))
            out.append(_conversation_json(engine, row, place, home=home))
        out.sort(key=lambda c: c["last_activity"] or "", reverse=True)
        return out

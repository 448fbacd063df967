"""Reading the team database as the web explorer reads the local index (``serve --team``).

:func:`conversations` answers like :func:`agentdex.api.conversations.conversations`
(``conversations --json``) and :func:`conversation` like
:func:`agentdex.api.transcript.conversation` (``/api/v0/show``), with one more key,
``machine``. A query filters conversations to those holding a matching record,
by the team search itself (so the same query language and semantics).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from agentdex.errors import ConflictError, NotFoundError

RECORD_COLUMNS = (
    "machine, agent, store, source_path, locator, session_id, role, kind, text, ts, model,"
    " cwd, project, branch, worktree, host, source_gone"
)


def _read(url: str | None, fn: Any) -> Any:
    from agentdex.api.team import _connection, settings
    from agentdex.team import schema
    from agentdex.team.connect import talking

    team = settings(url, "-")
    with (
        _connection(team) as conn,
        talking(team.masked, "reading"),
        conn.transaction(),
        conn.cursor() as cur,
    ):
        cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        schema.check(cur, masked=team.masked)
        return fn(cur)


def conversations(
    query: str | None = None, *, url: str | None = None, limit: int = 50
) -> dict[str, Any]:
    """Every machine's conversations, newest first (``conversations --json`` plus ``machine``)."""
    from agentdex.records import iso_utc

    started = time.perf_counter()
    keys: list[tuple[str, str, str]] | None = None
    if query:
        from agentdex.api import team

        found = team.search(query, url=url, limit=None, sort="time", dedup=False)
        keys = list(
            dict.fromkeys((r["machine"], r["agent"], r["session_id"]) for r in found.results)
        )

    def read(cur: Any) -> list[tuple[Any, ...]]:
        sql = (
            "SELECT machine, agent, session_id, title, project, cwd, first_ts, last_ts, prompts,"
            " replies, tool_events, records, source_gone FROM agentdex.conversations"
        )
        params: tuple[Any, ...] = ()
        if keys is not None:
            sql += (
                " WHERE (machine, agent, session_id) IN (SELECT * FROM"
                " unnest(%s::text[], %s::text[], %s::text[]))"
            )
            params = ([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys])
        cur.execute(sql + " ORDER BY last_ts DESC NULLS LAST LIMIT %s", (*params, limit))
        return list(cur.fetchall())

    rows = _read(url, read)
    items = [
        {
            "machine": machine,
            "agent": agent,
            "session_id": session,
            "title": title,
            "project": project,
            "cwd": cwd,
            "first_activity": iso_utc(first),
            "last_activity": iso_utc(last),
            "prompts": prompts,
            "replies": replies,
            "tool_events": tools,
            "records": records,
            "message_count": prompts + replies,
            "source_gone": gone,
        }
        for (
            machine,
            agent,
            session,
            title,
            project,
            cwd,
            first,
            last,
            prompts,
            replies,
            tools,
            records,
            gone,
        ) in rows
    ]
    return {
        "query": query,
        "status": "ok",
        "stats": {"total": len(items), "seconds": round(time.perf_counter() - started, 4)},
        "conversations": items,
    }


def _ident(row: tuple[Any, ...]) -> str:
    """A conversation's id (``api.ids``) from its ``(machine, agent, session_id, ...)`` row."""
    from agentdex.api.ids import conversation_id

    return conversation_id(row[1], row[2])


def _hashed(cur: Any, ref: str, machine: str | None) -> list[tuple[Any, ...]]:
    """The conversations a hashed id (``aider-3f9a2c1b``, as team hits give) names."""
    import re

    head = ref.split("@", 1)[0]
    named = re.fullmatch(r"([a-z0-9-]+)-[0-9a-f]{4,8}", head)
    if named is None:
        return []
    cur.execute(
        "SELECT machine, agent, session_id, title FROM agentdex.conversations"
        " WHERE agent = %s AND (%s::text IS NULL OR machine = %s)",
        (named.group(1), machine, machine),
    )
    return [row for row in cur.fetchall() if _ident(row).startswith(head)][:3]


def conversation(
    ref: str,
    *,
    url: str | None = None,
    agent: str | None = None,
    machine: str | None = None,
    max_chars: int = 0,
) -> dict[str, Any]:
    """One conversation (session id, unique prefix, or ``SESSION@LOCATOR``), in order."""
    from agentdex.api.transcript import _reading
    from agentdex.records import iso_utc

    def read(cur: Any) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
        cur.execute(
            "SELECT machine, agent, session_id, title FROM agentdex.conversations"
            " WHERE (session_id = %s OR left(%s, length(session_id) + 1) = session_id || '@'"
            " OR left(session_id, length(%s)) = %s)"
            " AND (%s::text IS NULL OR agent = %s) AND (%s::text IS NULL OR machine = %s)"
            " ORDER BY session_id = %s DESC, length(session_id) DESC LIMIT 3",
            (ref, ref, ref, ref, agent, agent, machine, machine, ref),
        )
        found = cur.fetchall() or _hashed(cur, ref, machine)
        if not found:
            raise NotFoundError(f"no conversation {ref!r} in the team database")
        exact = [
            f
            for f in found
            if f[2] == ref or ref.startswith(f[2] + "@") or ref.split("@")[0] == _ident(f)
        ]
        chosen = exact or found
        if len({(f[0], f[1], f[2]) for f in chosen[:2]}) > 1 and not (exact and len(exact) == 1):
            names = ", ".join(f"{f[0]}:{f[1]}:{f[2]}" for f in chosen[:2])
            raise ConflictError(f"{ref!r} names more than one conversation ({names}); add more")
        head = chosen[0]
        cur.execute(
            f"SELECT {RECORD_COLUMNS} FROM agentdex.records"
            " WHERE machine = %s AND agent = %s AND session_id = %s ORDER BY position",
            head[:3],
        )
        return head, list(cur.fetchall())

    head, rows = _read(url, read)
    names = RECORD_COLUMNS.replace(" ", "").split(",")
    records = []
    for row in rows:
        item = dict(zip(names, row, strict=True))
        item["timestamp"] = iso_utc(item.pop("ts"))
        records.append(item)
    ident = _ident(head)
    focus = next(
        (
            i
            for i, r in enumerate(records)
            if ref in (f"{r['session_id']}@{r['locator']}", f"{ident}@{r['locator']}")
        ),
        None,
    )
    stamps = [r["timestamp"] for r in records if r["timestamp"]]

    def distinct(key: str) -> list[str]:
        return list(dict.fromkeys(r[key] for r in records if r[key]))

    first_prompt = next((r["text"] for r in records if r["kind"] == "prompt"), None)
    return {
        "machine": head[0],
        "session_id": head[2],
        "agent": head[1],
        "title": head[3] or (first_prompt[:120] if first_prompt else None),
        "focus": focus,
        "project": next((r["project"] for r in records if r["project"]), None),
        "cwd": next((r["cwd"] for r in records if r["cwd"]), None),
        "branches": distinct("branch"),
        "worktrees": distinct("worktree"),
        "models": distinct("model"),
        "first_activity": min(stamps) if stamps else None,
        "last_activity": max(stamps) if stamps else None,
        "source_paths": distinct("source_path"),
        "message_count": len(records),
        "kind_counts": dict(Counter(r["kind"] for r in records)),
        "records": [_reading(r, i, max_chars) for i, r in enumerate(records)],
    }


def facet_rows(
    query: str, *, url: str | None, regex: bool, word: bool, case: str, now: float
) -> list[tuple[Any, ...]]:
    """The rows :mod:`agentdex.api.facets` counts, from the team database.

    ``(agent, session_id, role, thash, project, branch, worktree, kind, timestamp)``
    of every record a team search returns for ``query`` (every record when empty).
    """
    from datetime import datetime

    if not query.strip():

        def read(cur: Any) -> list[tuple[Any, ...]]:
            cur.execute(
                "SELECT agent, session_id, role, thash, project, branch, worktree, kind, ts"
                " FROM agentdex.records"
            )
            return list(cur.fetchall())

        return list(_read(url, read))
    from agentdex.api import team

    found = team.search(
        query, url=url, regex=regex, word=word, case=case, limit=None, sort="time", now=now
    )
    return [
        (
            r["agent"],
            r["session_id"],
            r["role"],
            None,
            r["project"],
            r["branch"],
            r["worktree"],
            r["kind"],
            datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp()
            if r["timestamp"]
            else None,
        )
        for r in found.results
    ]

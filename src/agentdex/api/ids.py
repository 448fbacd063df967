"""Conversation ids a person can type: one per conversation, stable, unique.

Most agents name a conversation with a UUID or a plain token, and that stays its
id. Some do not: an Aider chat is ``<project folder>@<start time>`` (spaces, ``/``,
``@``), its prompt log ``aider-input:<folder>``. Such a conversation's id is
``<agent>-<8 hex>``, the start of a SHA-256 of its agent and session id: stable
(it depends on nothing else) and, at 32 bits, unique in any real home (a clash
is reported as ambiguous, never resolved silently).

Every command, route and tool that takes a conversation (``show``, ``export``,
``resume``, ``forget``, ``#/c/REF``, MCP ``show_session``) resolves what it was
given with :func:`resolve`: the exact session id, the exact id, ``agent:ID`` (when
two agents share an id), or a unique prefix of either. A prefix naming several
conversations is a conflict (exit 4, HTTP 409) that lists them. Listings show
:func:`short_ids`: the shortest prefix of each id (8 characters at least, as git
shortens hashes) that names only that conversation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentdex.errors import ConflictError

if TYPE_CHECKING:
    import sqlite3

#: A session id typed as it is: no quoting, no ``@``, ``/`` or ``:``, not too long.
TYPEABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: The shortest prefix a listing shows (git's default for hashes is 7), and how many hex
#: digits of a hashed id (``aider-3f9a2c1b``) it keeps at least.
SHORTEST = 8
HASH_SHORTEST = 4

Key = tuple[str, str]


def conversation_id(agent: str, session_id: str, home: str | None = None) -> str:
    """The id of conversation (``agent``, ``session_id``): the session id when it is typeable.

    A hashed id reads the home (``home``, else ``$HOME``) in the session id as ``~``,
    so it stays the same when the home moves (another machine, a restored backup).

    >>> conversation_id("claude-code", "3b5e9c2a-7d41-4f0e-9a6b-2c8d1e4f7a90")
    '3b5e9c2a-7d41-4f0e-9a6b-2c8d1e4f7a90'
    >>> conversation_id("aider", "/home/me/proj@2026-04-22 22:40:47", "/home/me")
    'aider-e804cfd0'
    """
    if TYPEABLE.fullmatch(session_id):
        return session_id
    from agentdex.paths import home_dir, sha256

    base = str(home_dir(home)).rstrip("/") + "/"
    digest = sha256(f"{agent}\0{session_id.replace(base, '~/')}".encode()).hexdigest()
    return f"{agent}-{digest[:8]}"


def short_ids(keys: Iterable[Key], home: str | None = None) -> dict[Key, str]:
    """Each conversation's shortest unique id prefix (at least :data:`SHORTEST` characters;
    a hashed id keeps its agent and :data:`HASH_SHORTEST` hex digits at least).

    An id two agents share (a copied transcript, a fixture) is qualified: ``agent:prefix``.
    """
    ids = {key: conversation_id(*key, home) for key in keys}
    #: hashed ids (``aider-3f9a2c1b``) keep at least HASH_SHORTEST of their hex digits
    hashed = {v: len(k[0]) + 1 for k, v in ids.items() if v != k[1]}
    ordered = sorted(set(ids.values()))
    need: dict[str, int] = {}
    for i, value in enumerate(ordered):
        longest = 0
        for j in (i - 1, i + 1):
            if 0 <= j < len(ordered):
                longest = max(longest, _common(value, ordered[j]))
        least = SHORTEST if value not in hashed else hashed[value] + HASH_SHORTEST
        need[value] = min(len(value), max(least, longest + 1))
    shared: dict[str, int] = {}
    for value in ids.values():
        shared[value] = shared.get(value, 0) + 1
    out = {}
    for (agent, _sid), value in ids.items():
        prefix = value[: need[value]]
        out[(agent, _sid)] = f"{agent}:{prefix}" if shared[value] > 1 else prefix
    return out


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def known(db: sqlite3.Connection) -> list[Key]:
    """Every conversation with a record in an index (or the archive's store): (agent, id)."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "context_stats" in tables:
        sql = (
            "SELECT DISTINCT c.agent, c.session_id FROM contexts c"
            " JOIN context_stats s ON s.context_id = c.id"
        )
    else:
        rows = "record_rows" if "record_rows" in tables else "entries"
        sql = (
            "SELECT DISTINCT c.agent, c.session_id FROM contexts c WHERE EXISTS"
            f" (SELECT 1 FROM {rows} r WHERE r.context_id = c.id)"
        )
    return [(str(a), str(s)) for a, s in db.execute(sql)]


def matches(
    token: str, keys: Iterable[Key], agent: str | None = None, home: str | None = None
) -> list[Key]:
    """The conversations ``token`` names: exactly if any does, else by unique prefix.

    ``token`` is a session id, an id, ``agent:ID``, or a prefix of an id or a session id.
    """
    from agentdex.catalogue import agents

    pool = [k for k in keys if agent is None or k[0] == agent]
    head, sep, tail = token.partition(":")
    if sep and head in agents() and tail:
        pool = [k for k in pool if k[0] == head]
        token = tail
    ids = {k: conversation_id(*k, home) for k in pool}
    exact = [k for k in pool if token in (k[1], ids[k])]
    if exact:
        return sorted(set(exact))
    return sorted({k for k in pool if k[1].startswith(token) or ids[k].startswith(token)})


def resolve(
    token: str,
    *,
    agent: str | None = None,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
) -> Key | None:
    """The one indexed conversation ``token`` names; None when none does (the caller may
    still look in the agents' files); :class:`AmbiguousError` when several do."""
    from agentdex.api.index import reader

    with reader(root, home) as engine:
        if engine is None:
            return None
        keys = known(engine.db)
        found = matches(token, keys, agent, home)
        if len(found) > 1:
            raise ambiguous(token, found, engine, keys, home)
    return found[0] if found else None


class AmbiguousError(ConflictError):
    """A prefix (or an id two agents share) names several conversations: exit 4, HTTP 409.

    ``detail`` is ``{"candidates": [{agent, session_id, id, title}, ...]}`` (at most 20).
    """


def ambiguous(
    token: str,
    found: list[Key],
    engine: Any = None,
    every: Iterable[Key] | None = None,
    home: str | None = None,
) -> AmbiguousError:
    """The error for ``token`` naming every conversation of ``found`` (``every``: all the
    conversations known, so each candidate's short id is unique among them)."""
    shorts = short_ids(every if every is not None else found, home)
    candidates = []
    for agent, sid in found[:20]:
        title = None
        if engine is not None:
            from agentdex.api.conversations import conversation_title

            title = conversation_title(engine, agent, sid)
        candidates.append(
            {
                "agent": agent,
                "session_id": sid,
                "id": conversation_id(agent, sid, home),
                "short_id": shorts.get((agent, sid), sid),
                "title": title,
            }
        )
    names = ", ".join(f"{c['short_id']} ({c['agent']})" for c in candidates[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return AmbiguousError(
        f"{token!r} names {len(found)} conversations: {names}{more}; give more of the id",
        detail={"candidates": candidates},
    )

"""Removing conversations from the archive's own store: forgotten ones and pruned ones.

Only the archive's files change here. The ingest layer (:mod:`agentdex.ingest.manage`)
takes the writer lock, calls these, and then removes the same conversations from
the index.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentdex.archive.schema import ARCHIVED_AT_SQL

if TYPE_CHECKING:
    from agentdex.archive.store import ArchiveStore


def purge_forgotten(store: ArchiveStore) -> int:
    """Remove archived entries of tombstones not purged yet; how many entries went."""
    done = store.meta_int("tombstones_purged", 0)
    pending = store.tombstones(after=done)
    if not pending:
        return 0
    keys: list[int] = []
    for _id, agent, session_id in pending:
        keys.extend(entry_keys(store, agent, session_id))
    removed = store.remove_entries(keys)
    store.db.execute("BEGIN IMMEDIATE")
    for _id, agent, session_id in pending:
        drop_session_rows(store, agent, session_id)
    store.set_meta("tombstones_purged", pending[-1][0])
    store.db.execute("COMMIT")
    store.checkpoint()
    return removed


def entry_keys(store: ArchiveStore, agent: str | None, session_id: str) -> list[int]:
    where = "c.session_id = ?" + (" AND c.agent = ?" if agent is not None else "")
    params = (session_id,) if agent is None else (session_id, agent)
    return [
        int(r[0])
        for r in store.db.execute(
            f"SELECT e.key FROM entries e JOIN contexts c ON c.id = e.context_id WHERE {where}",
            params,
        )
    ]


def drop_session_rows(store: ArchiveStore, agent: str | None, session_id: str) -> None:
    """The session's title and contexts (paths, model) leave the archive with its entries."""
    where = "session_id = ?" + (" AND agent = ?" if agent is not None else "")
    params = (session_id,) if agent is None else (session_id, agent)
    from agentdex.archive.usage import drop_contexts, has_table

    store.db.execute(f"DELETE FROM titles WHERE {where}", params)
    drop_contexts(store.db, where, params)  # the conversation's token usage goes with it
    store.db.execute(
        f"DELETE FROM contexts WHERE {where}"
        " AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.context_id = contexts.id)",
        params,
    )
    used = (
        " AND NOT EXISTS (SELECT 1 FROM usage_calls u WHERE u.source_id = sources.id)"
        if has_table(store.db)
        else ""
    )
    store.db.execute(
        "DELETE FROM sources"
        " WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.source_id = sources.id)" + used
    )


def add_tombstones(
    store: ArchiveStore, sessions: Iterable[tuple[str | None, str]], reason: str
) -> None:
    """Commit a tombstone per conversation (agent None: that session id of any agent)."""
    store.db.execute("BEGIN IMMEDIATE")
    store.add_tombstones(sessions, reason)
    store.db.execute("COMMIT")


def inactive_sessions(store: ArchiveStore, cutoff: float) -> list[tuple[str, str, float, int]]:
    """(agent, session, last activity, entries) of conversations last active before ``cutoff``."""
    return store.db.execute(
        f"SELECT c.agent, c.session_id, max(coalesce(e.timestamp, {ARCHIVED_AT_SQL})),"
        " count(*) FROM entries e JOIN contexts c ON c.id = e.context_id"
        " GROUP BY c.agent, c.session_id"
        f" HAVING max(coalesce(e.timestamp, {ARCHIVED_AT_SQL})) < ?",
        (cutoff,),
    ).fetchall()


def drop_sessions(store: ArchiveStore, sessions: list[tuple[str, str]]) -> None:
    """The titles and contexts of conversations whose entries all went, in one transaction."""
    store.db.execute("BEGIN IMMEDIATE")
    for agent, session_id in sessions:
        drop_session_rows(store, agent, session_id)
    store.db.execute("COMMIT")

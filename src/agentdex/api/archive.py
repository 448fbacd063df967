"""Archive API: its status, exporting it, pruning it, forgetting conversations.

The archive itself (:mod:`agentdex.archive`) is filled by every refresh;
these are the user's handles on it, shared by the CLI (``agentdex archive``,
``agentdex forget``) and the HTTP status route. ``docs/archive.md`` explains
what is kept, where, and how big it gets.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.api.archive_export import export as export
from agentdex.errors import NotFoundError, UsageError
from agentdex.records import iso_utc

if TYPE_CHECKING:
    from agentdex.archive.store import ArchiveStore
    from agentdex.records import Record

Session = tuple[str, str]


def _root(root: str | os.PathLike[str] | None, home: str | None) -> Path:
    """The index dir of ``home`` (one index, and one archive, per home), or ``root``."""
    from agentdex.index.store import index_root

    return index_root(root, home=home)


@contextmanager
def _reading(root: Path) -> Iterator[ArchiveStore | None]:
    from agentdex.archive.store import open_reader

    store = open_reader(root)
    try:
        yield store
    finally:
        if store is not None:
            store.close()


def _dir_bytes(path: Path, leave_out: frozenset[int] = frozenset()) -> int:
    """Bytes of the files under ``path``, each file (inode) once, those in ``leave_out``
    not at all."""
    if not path.is_dir():
        return 0
    seen: dict[int, int] = {}
    for p in path.rglob("*"):
        if p.is_file():
            st = p.stat()
            if st.st_ino not in leave_out:
                seen[st.st_ino] = st.st_size
    return sum(seen.values())


def _inodes(path: Path) -> frozenset[int]:
    return frozenset(p.stat().st_ino for p in path.rglob("*") if p.is_file())


# -- status ------------------------------------------------------------------------------------


def status(
    root: str | os.PathLike[str] | None = None, *, home: str | None = None
) -> dict[str, Any]:
    """Where the archive is, how big, what it holds per agent, and what only it still has."""
    from agentdex.archive.store import archive_path
    from agentdex.index.store import Location
    from agentdex.ingest.archiving import archive_enabled

    base = _root(root, home)
    folder = archive_path(base)
    current = Location(base).current()
    in_index = _inodes(current) if current is not None else frozenset()
    own = _dir_bytes(folder, in_index)
    info: dict[str, Any] = {
        "path": str(folder),
        "enabled": archive_enabled(),
        # the text blocks the archive shares with the current generation count once: there
        "bytes": own,
        "shared_bytes": _dir_bytes(folder) - own,
        "index_bytes": _dir_bytes(current) if current is not None else 0,
        "records": 0,
        "conversations": 0,
        "text_bytes": 0,
        "raw_lines": 0,
        "forgotten": 0,
        "agents": [],
        "source_gone": _gone_counts(base),
    }
    with _reading(base) as store:
        if store is None:
            return info
        db = store.db
        info["forgotten"] = db.execute("SELECT count(*) FROM tombstones").fetchone()[0]
        # texts in index blocks the archive shares (negative chunks): their share of them
        shared, shared_text = db.execute(
            "SELECT (SELECT coalesce(sum(lower_size + original_size), 0) FROM blocks),"
            " coalesce(sum(text_size), 0) FROM entries WHERE text_chunk < 0"
        ).fetchone()
        rows = db.execute(
            "SELECT c.agent, count(*), count(DISTINCT c.session_id), sum(e.text_size),"
            " sum(CASE WHEN e.text_chunk < 0 THEN e.text_size * ?"
            "  ELSE e.text_size * 1.0 * k.size / max(k.raw_size, 1) END),"
            " sum(e.raw_chunk IS NOT NULL)"
            " FROM entries e JOIN contexts c ON c.id = e.context_id"
            " LEFT JOIN chunks k ON k.id = e.text_chunk GROUP BY c.agent ORDER BY c.agent",
            (shared / max(shared_text, 1),),
        ).fetchall()
        raw = dict(
            db.execute(
                "SELECT agent, sum(raw_size * 1.0 * size / max(chunk_raw, 1)) FROM"
                " (SELECT DISTINCT c.agent, e.raw_chunk, e.raw_start, e.raw_size, k.size,"
                "  k.raw_size AS chunk_raw FROM entries e JOIN contexts c ON c.id = e.context_id"
                "  JOIN chunks k ON k.id = e.raw_chunk) GROUP BY agent"
            ).fetchall()
        )
        for agent, records, conversations, text_bytes, stored, raw_lines in rows:
            info["agents"].append(
                {
                    "agent": agent,
                    "conversations": conversations,
                    "records": records,
                    "text_bytes": int(text_bytes or 0),
                    "stored_bytes": int((stored or 0) + (raw.get(agent) or 0)),
                    "raw_lines": int(raw_lines or 0),
                }
            )
        info["records"] = sum(a["records"] for a in info["agents"])
        info["conversations"] = sum(a["conversations"] for a in info["agents"])
        info["text_bytes"] = sum(a["text_bytes"] for a in info["agents"])
        info["raw_lines"] = sum(a["raw_lines"] for a in info["agents"])
    return info


def _gone_counts(root: Path) -> dict[str, int]:
    """Records (and conversations) the index holds only because the archive kept them."""
    from agentdex.api.index import reader
    from agentdex.index.files import ARCHIVED_HIGH, ARCHIVED_LOW

    counts = {"records": 0, "conversations": 0}
    with reader(root) as engine:
        if engine is None:
            return counts
        row = engine.db.execute(
            "SELECT count(*), count(DISTINCT r.context_id) FROM record_rows r"
            " JOIN files f ON f.id = r.file_id WHERE f.path >= ? AND f.path < ?",
            (ARCHIVED_LOW, ARCHIVED_HIGH),
        ).fetchone()
        sessions = engine.db.execute(
            "SELECT count(*) FROM (SELECT DISTINCT r.agent, r.session_id FROM records r"
            " JOIN files f ON f.id = r.file_id WHERE f.path >= ? AND f.path < ?)",
            (ARCHIVED_LOW, ARCHIVED_HIGH),
        ).fetchone()
        counts["records"] = int(row[0])
        counts["conversations"] = int(sessions[0])
    return counts


# -- prune ----------------------------------------------------------------------------------------


def prune(
    older_than: str,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    refresh_first: bool = True,
    now: float | None = None,
) -> dict[str, Any]:
    """Remove archived conversations last active before ``older_than`` (``90d``, ``1y``, a
    date), keeping every record a live source still holds (a refresh runs first, so the
    index knows which those are)."""
    from agentdex.api.index import refresh
    from agentdex.ingest.manage import prune as run_prune
    from agentdex.search.timeparse import parse_time

    clock = time.time() if now is None else now
    cutoff = parse_time(older_than, end=False, now=clock)
    if refresh_first:
        refresh(root, home=home)
    result = run_prune(_root(root, home), cutoff)
    for item in result.conversations:
        last = item.get("last_activity")
        item["last_activity"] = iso_utc(last) if isinstance(last, int | float) else None
    return {
        "cutoff": iso_utc(cutoff),
        "conversations": result.conversations,
        "records_removed": result.entries_removed,
        "records_kept_live": result.entries_kept_live,
        "index_records_removed": result.index_records_removed,
    }


# -- forget ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class ForgetPlan:
    """The conversations a forget would remove, found before anything is changed."""

    target: str
    conversations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def sessions(self) -> list[tuple[str | None, str]]:
        return [(c["agent"], c["session_id"]) for c in self.conversations]


def forget_plan(
    ref: str | None = None,
    *,
    session: str | None = None,
    project: str | None = None,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
) -> ForgetPlan:
    """Which conversations ``REF``, ``--session ID`` or ``--project PATH`` names (exactly one),
    from the index and the archive; NotFoundError when none."""
    given = [value for value in (ref, session, project) if value]
    if len(given) != 1:
        raise UsageError("give exactly one of REF, --session ID or --project PATH")
    found: dict[Session, dict[str, Any]] = {}
    base = _root(root, home)
    if project:
        folder = os.path.normpath(os.path.abspath(os.path.expanduser(project)))
        prefix = folder.rstrip("/") + "/"
        where = "(project = ? OR substr(project, 1, ?) = ? OR cwd = ? OR substr(cwd, 1, ?) = ?)"
        params: list[Any] = [folder, len(prefix), prefix, folder, len(prefix), prefix]
        _collect(base, found, where, params)
        target = f"project {folder}"
    elif session:
        _collect(base, found, "session_id = ?", [session])
        target = f"session {session}"
    else:
        from agentdex.api._order import split_ref

        assert ref is not None
        session_id, _locator = split_ref(ref)
        if not session_id:
            raise UsageError("a reference needs a session id: <session_id>[@<locator>]")
        from agentdex.api import ids

        named = ids.resolve(session_id, root=root, home=home)  # ids, short ids, prefixes
        if named is not None:
            _collect(base, found, "agent = ? AND session_id = ?", list(named))
        else:  # only the archive may still hold it
            _collect(base, found, "session_id = ?", [session_id])
        if not found:
            _collect(base, found, "substr(session_id, 1, ?) = ?", [len(session_id), session_id])
            if len(found) > 1:
                raise ids.ambiguous(session_id, sorted(found), home=home)
        target = ref
    if not found:
        raise NotFoundError(f"no indexed or archived conversation for {target}")
    conversations = [found[key] for key in sorted(found)]
    return ForgetPlan(target=target, conversations=conversations)


def _collect(
    root: Path,
    found: dict[Session, dict[str, Any]],
    where: str,
    params: list[Any],
) -> None:
    """Add the conversations matching ``where`` (over a ``contexts`` table: the index and the
    archive name its columns alike) with their record counts and titles."""
    from agentdex.api.index import reader

    def add(agent: str, sid: str, field: str, count: int, title: str | None) -> None:
        item = found.setdefault(
            (agent, sid),
            {
                "agent": agent,
                "session_id": sid,
                "title": None,
                "index_records": 0,
                "archive_records": 0,
            },
        )
        item[field] += count
        item["title"] = item["title"] or title

    def sessions(db: Any, rows_table: str) -> list[tuple[Any, ...]]:
        return list(
            db.execute(
                "SELECT agent, session_id, sum((SELECT count(*) FROM"
                f" {rows_table} x WHERE x.context_id = contexts.id)) FROM contexts"
                f" WHERE {where} GROUP BY agent, session_id",
                params,
            )
        )

    with reader(root) as engine:
        if engine is not None:
            for agent, sid, count in sessions(engine.db, "record_rows"):
                if count:
                    title = engine.db.execute(
                        "SELECT title FROM titles WHERE agent = ? AND session_id = ?", (agent, sid)
                    ).fetchone()
                    add(agent, sid, "index_records", count, title[0] if title else None)
    with _reading(root) as store:
        if store is not None:
            for agent, sid, count in sessions(store.db, "entries"):
                if count:
                    add(agent, sid, "archive_records", count, store.title(agent, sid))


def forget(
    plan: ForgetPlan,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    purge: bool = False,
) -> dict[str, Any]:
    """Forget the planned conversations for good: tombstones, then archive and index removal.

    The index's own files (append-only text blocks, tantivy's deleted
    documents, the term list) keep the forgotten text's bytes until the
    generation is rebuilt; ``purge`` rebuilds it now (as ``index --full``
    does), so no file of agentdex's holds them afterwards.
    """
    from agentdex.ingest.manage import forget as run_forget

    removed = run_forget(_root(root, home), plan.sessions, plan.target)
    result: dict[str, Any] = {
        "target": plan.target,
        "forgotten": plan.conversations,
        "index_records_removed": removed,
        "archive_records_removed": sum(c["archive_records"] for c in plan.conversations),
        "purged": False,
    }
    if purge:
        from agentdex.api.index import index_status, refresh

        refresh(root, home=home, full=True)
        result["purged"] = True
        result["records_after_purge"] = index_status(root, home=home)["records"]
    return result


def is_forgotten(agent: str, session_id: str, home: str | None = None) -> bool:
    """Was this conversation forgotten (``agentdex forget``)? Checked by ``show``."""
    with _reading(_root(None, home)) as store:
        if store is None:
            return False
        row = store.db.execute(
            "SELECT 1 FROM tombstones WHERE session_id = ? AND (agent IS NULL OR agent = ?)",
            (session_id, agent),
        ).fetchone()
        return row is not None


def archived_records(session_id: str, agent: str, home: str | None = None) -> list[Record]:
    """The conversation's records that only the archive keeps (from the index), in order."""
    return list(iter_archived_records(session_id, agent, home))


def iter_archived_records(session_id: str, agent: str, home: str | None = None) -> Iterator[Record]:
    """:func:`archived_records` one at a time (each text read as it is reached)."""
    from agentdex.api.index import reader
    from agentdex.index.files import ARCHIVED_HIGH, ARCHIVED_LOW, original_path
    from agentdex.records import RECORD_COLUMNS, record_from_columns

    with reader(None, home) as engine:
        if engine is None:
            return
        hits = engine.all_hits(
            "r.session_id = ? AND r.agent = ? AND f.path >= ? AND f.path < ? ORDER BY r.id",
            (session_id, agent, ARCHIVED_LOW, ARCHIVED_HIGH),
        )
        for hit in hits:
            hit.source_path = original_path(hit.source_path)
            values = [getattr(hit, name) for name in RECORD_COLUMNS]
            yield record_from_columns(values, engine.original_text(hit))

"""``agentdex archive export``: archived records as JSONL, each with whether a live source
still holds it (published as :func:`agentdex.api.archive.export`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.archive.schema import ARCHIVED_AT_SQL
from agentdex.errors import UsageError
from agentdex.paths import open_private
from agentdex.records import iso_utc

if TYPE_CHECKING:
    from agentdex.archive.store import ArchiveStore

Session = tuple[str, str]


def export(
    out: str,
    *,
    agent: str | None = None,
    session: str | None = None,
    since: str | None = None,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """Write archived records as JSONL to ``out`` (``-``: stdout); returns what was written.

    One line per record: the record's JSON (``docs/json-output.md``) plus
    ``archived_at``, ``source_gone`` (no live source holds it, per the index)
    and, where the raw source line was kept, ``raw`` (its text; ``raw_base64``
    when it is not UTF-8).
    """
    import sys

    from agentdex.api.archive import _reading, _root
    from agentdex.search.timeparse import parse_time

    cutoff = parse_time(since, end=False, now=now) if since else None
    base = _root(root, home)
    where: list[str] = ["1"]
    params: list[Any] = []
    if agent:
        where.append("c.agent = ?")
        params.append(agent)
    if session:
        where.append("substr(c.session_id, 1, ?) = ?")
        params.extend([len(session), session])
    if cutoff is not None:
        where.append(f"coalesce(e.timestamp, {ARCHIVED_AT_SQL}) >= ?")
        params.append(cutoff)
    written = 0
    sessions: set[Session] = set()
    target = None if out == "-" else Path(out)
    if target is not None and target.is_dir():
        raise UsageError(f"{target} is a directory; give a file name")
    with _reading(base) as store:
        # one conversation after another, each file in its own order
        order = "c.agent, c.session_id, s.path, coalesce(e.offset, -1), e.key"
        rows: Iterable[tuple[Any, ...]] = (
            () if store is None else store.iter_entries(" AND ".join(where), params, order)
        )
        live = _LiveKeys(base)
        tmp = None if target is None else target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            handle = sys.stdout.buffer if tmp is None else open_private(tmp)
            try:
                for entry in rows:
                    assert store is not None
                    handle.write(_export_line(store, entry, live) + b"\n")
                    written += 1
                    sessions.add((entry[1], entry[5]))
            finally:
                if tmp is not None:
                    handle.close()
            if tmp is not None and target is not None:
                os.replace(tmp, target)
        except OSError as exc:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from exc
        finally:
            live.close()
    return {
        "path": str(target) if target is not None else "-",
        "records": written,
        "conversations": len(sessions),
        "bytes": target.stat().st_size if target is not None else None,
    }


def _export_line(store: ArchiveStore, entry: tuple[Any, ...], live: _LiveKeys) -> bytes:
    import base64

    import orjson

    record = store.record(entry)
    data = record.to_json()
    data["archived_at"] = iso_utc(entry[22])
    data["source_gone"] = not live.holds(entry[1], entry[5], entry[0])
    raw = store.raw(entry[19], entry[20], entry[21])
    if raw is not None:
        try:
            data["raw"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            data["raw_base64"] = base64.b64encode(raw).decode("ascii")
    return orjson.dumps(data)


class _LiveKeys:
    """Which archived keys a live source still holds, per conversation, from the index."""

    def __init__(self, root: Path) -> None:
        from agentdex.api.index import reader

        self._context = reader(root)
        self.engine = self._context.__enter__()
        self._session: Session | None = None
        self._keys: set[int] = set()

    def holds(self, agent: str, session_id: str, key: int) -> bool:
        if self.engine is None:
            return False
        if self._session != (agent, session_id):
            self._session = (agent, session_id)
            self._keys = self._load(agent, session_id)
        return key in self._keys

    def _load(self, agent: str, session_id: str) -> set[int]:
        from agentdex.archive.keys import record_key
        from agentdex.index.files import is_archived

        assert self.engine is not None
        return {
            record_key(agent, session_id, role, kind, ts, thash, tlen)
            for role, kind, ts, thash, tlen, path in self.engine.db.execute(
                "SELECT r.role, r.kind, r.timestamp, r.thash, r.tlen, f.path FROM records r"
                " JOIN files f ON f.id = r.file_id WHERE r.session_id = ? AND r.agent = ?",
                (session_id, agent),
            )
            if not is_archived(path)
        }

    def close(self) -> None:
        self._context.__exit__(None, None, None)

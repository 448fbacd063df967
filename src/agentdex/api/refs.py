"""Result references (``SESSION@LOCATOR``): a conversation's records from the index, in order."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from agentdex.api._order import conversation_order, launch_place, split_ref
from agentdex.api.conversations import conversation_title
from agentdex.api.index import reader
from agentdex.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from agentdex.search.engine import Hit


def resolve_ref(
    ref: str, *, root: str | os.PathLike[str] | None = None, home: str | None = None
) -> dict[str, Any]:
    """A conversation's records from the index, in order, and the position of ``ref``.

    ``ref`` is ``<session_id>@<locator>`` (as search results give) or a bare
    session id (or unique prefix). Returns ``{session_id, agent, title,
    project, position, records}``; ``position`` is None when the locator is
    not found (or not given).
    """
    from agentdex.api.search import hit_json

    session_id, locator = split_ref(ref)
    if not session_id:
        raise UsageError("a reference needs a session id: <session_id>@<locator>")
    with reader(root, home) as engine:
        if engine is None:
            raise NotFoundError("nothing is indexed yet; run `agentdex index`")
        hits = engine.all_hits("r.session_id = ?", (session_id,))
        if not hits:
            hits = engine.all_hits("substr(r.session_id, 1, ?) = ?", (len(session_id), session_id))
        if not hits:
            raise NotFoundError(f"no indexed conversation with id {session_id!r}")
        keys = {(h.agent, h.session_id) for h in hits}
        if len(keys) > 1:
            names = ", ".join(f"{a}:{s}" for a, s in sorted(keys)[:5])
            raise UsageError(f"{session_id!r} matches {len(keys)} conversations: {names}")
        ordered = _conversation_order(hits)
        position = None
        if locator:
            position = next((i for i, h in enumerate(ordered) if h.locator == locator), None)
        records = []
        for hit in ordered:
            hit.text = engine.original_text(hit)
            data = hit_json(hit)
            data.pop("snippet")
            data.pop("score")
            records.append(data)
        agent, sid = next(iter(keys))
        return {
            "session_id": sid,
            "agent": agent,
            "title": conversation_title(engine, agent, sid),
            "project": launch_place(
                ordered, lambda h: h.project, lambda h: h.cwd, lambda h: h.timestamp
            )[0],
            "position": position,
            "records": records,
        }


def _conversation_order(hits: list[Hit]) -> list[Hit]:
    """Index order (the parse order) within each file; files interleaved by time."""
    hits.sort(key=lambda h: (h.source_path, h.id))
    return conversation_order(hits, lambda h: h.source_path, lambda h: h.timestamp)

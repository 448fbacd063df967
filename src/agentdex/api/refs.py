"""Result references (``SESSION@LOCATOR``): a conversation's records from the index, in order."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentdex.api import ids
from agentdex.api._order import conversation_order, launch_place, split_ref
from agentdex.api.conversations import conversation_title
from agentdex.api.index import reader
from agentdex.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from agentdex.search.engine import Engine, Hit


@dataclass(slots=True)
class IndexedConversation:
    """A conversation's hits (no text yet) in order, with the engine to read their texts."""

    engine: Engine
    session_id: str
    id: str
    agent: str
    project: str | None
    position: int | None
    hits: list[Hit]


@contextmanager
def indexed_conversation(
    ref: str,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    agent: str | None = None,
) -> Iterator[IndexedConversation]:
    """A conversation from the index, its records not read yet (:func:`record_json`
    reads each one while the reader is open); see :func:`resolve_ref`."""
    session_id, locator = split_ref(ref)
    if not session_id:
        raise UsageError("a reference needs a session id: <session_id>@<locator>")
    with reader(root, home) as engine:
        if engine is None:
            raise NotFoundError("nothing is indexed yet; run `agentdex index`")
        every = ids.known(engine.db)
        found = ids.matches(session_id, every, agent, home)
        if len(found) > 1:
            raise ids.ambiguous(session_id, found, engine, every, home)
        if not found:
            raise NotFoundError(f"no indexed conversation with id {session_id!r}")
        agent, sid = found[0]
        hits = engine.all_hits("r.agent = ? AND r.session_id = ?", (agent, sid))
        if not hits:
            raise NotFoundError(f"no indexed conversation with id {session_id!r}")
        ordered = _conversation_order(hits)
        position = None
        if locator:
            position = next((i for i, h in enumerate(ordered) if h.locator == locator), None)
        yield IndexedConversation(
            engine=engine,
            session_id=sid,
            id=ids.conversation_id(agent, sid, home),
            agent=agent,
            project=launch_place(
                ordered, lambda h: h.project, lambda h: h.cwd, lambda h: h.timestamp
            )[0],
            position=position,
            hits=ordered,
        )


def record_json(engine: Engine, hit: Hit, home: str | None) -> dict[str, Any]:
    """One indexed record as ``show`` gives it (its text read now, not kept on the hit)."""
    from agentdex.api.search import hit_json

    hit.text = engine.original_text(hit)
    data = hit_json(hit, home)
    hit.text = ""
    data.pop("snippet")
    data.pop("score")
    return data


def resolve_ref(
    ref: str,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """A conversation's records from the index, in order, and the position of ``ref``.

    ``ref`` is ``<conversation>@<locator>`` (as search results give) or a bare
    conversation: a session id, an id (:mod:`agentdex.api.ids`) or a unique
    prefix of either. Returns ``{session_id, id, agent, title, project,
    position, records}``; ``position`` is None when the locator is not found
    (or not given). Several conversations matching is :class:`~agentdex.api.ids.AmbiguousError`.
    """
    with indexed_conversation(ref, root=root, home=home, agent=agent) as found:
        engine = found.engine
        return {
            "session_id": found.session_id,
            "id": found.id,
            "agent": found.agent,
            "title": conversation_title(engine, found.agent, found.session_id),
            "project": found.project,
            "position": found.position,
            "records": [record_json(engine, hit, home) for hit in found.hits],
        }


def _conversation_order(hits: list[Hit]) -> list[Hit]:
    """Index order (the parse order) within each file; files interleaved by time."""
    hits.sort(key=lambda h: (h.source_path, h.id))
    return conversation_order(hits, lambda h: h.source_path, lambda h: h.timestamp)

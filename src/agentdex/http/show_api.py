"""``/api/v0/show``: one conversation to read, one record in full, and live updates.

A thin shell over :mod:`agentdex.api.transcript`. ``/show/events`` is a
server-sent event stream: ``hello`` (what the stream starts from), then one
``records`` event per batch of new records while an agent writes the
conversation, with ``: keepalive`` comments in between.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from agentdex.api import transcript as api
from agentdex.errors import NotFoundError
from agentdex.http import params

router = APIRouter(tags=["history"])

KEEPALIVE_SECONDS = 15.0

RefQuery = Annotated[
    params.Ref,
    Query(
        description="A conversation id or session id, a unique prefix of either (one naming"
        " several conversations is 409 with the candidates), or a reference ID@LOCATOR."
    ),
]
AgentQuery = Query(None, description="Only look in this agent's stores.")


class RecordBody(BaseModel):
    """A record (docs/json-output.md) plus its deep link, position and full length."""

    model_config = ConfigDict(extra="allow")

    agent: str
    store: str
    session_id: str
    role: str
    kind: str
    timestamp: str | None
    text: str
    cwd: str | None
    project: str | None
    branch: str | None
    worktree: str | None
    model: str | None
    host: str | None
    source_path: str
    locator: str
    ref: str
    short_ref: str | None = Field(
        None, description="ID@LOCATOR with the conversation's typeable id."
    )
    position: int
    chars: int
    truncated: bool


class ConversationBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    session_id: str
    id: str | None = Field(None, description="The conversation's typeable id (docs/search.md).")
    agent: str
    title: str | None
    focus: int | None
    project: str | None
    cwd: str | None
    branches: list[str]
    worktrees: list[str]
    models: list[str]
    first_activity: str | None
    last_activity: str | None
    source_paths: list[str]
    message_count: int
    kind_counts: dict[str, int]
    records: list[RecordBody]


def _home(request: Request) -> str | None:
    home: str | None = getattr(request.app.state, "home", None)
    return home


@router.get("", response_model=ConversationBody)
def show(
    request: Request,
    ref: RefQuery,
    agent: str | None = AgentQuery,
    max_chars: int = Query(
        api.DEFAULT_MAX_CHARS,
        ge=0,
        le=api.MAX_MAX_CHARS,
        description="Cut texts after this many characters (0: never); `chars` keeps the length.",
    ),
    refresh: bool = Query(False, description="Bring the index up to date first (titles)."),
) -> dict[str, Any]:
    """The conversation in order, with its header; ``focus`` is the position of ``ref``."""
    team_url = getattr(request.app.state, "team_url", None)
    if team_url is not None:  # serve --team: the team database's copy (plus `machine`)
        from agentdex.api import team_views

        return team_views.conversation(ref, url=team_url, agent=agent, max_chars=max_chars)
    return api.conversation(
        ref, home=_home(request), agent=agent, max_chars=max_chars, refresh_first=refresh
    )


@router.get("/record", response_model=RecordBody)
def show_record(request: Request, ref: RefQuery, agent: str | None = AgentQuery) -> dict[str, Any]:
    """The one record ``SESSION@LOCATOR`` names, never cut (404 when it names none)."""
    team_url = getattr(request.app.state, "team_url", None)
    if team_url is not None:
        from agentdex.api import team_views

        data = team_views.conversation(ref, url=team_url, agent=agent)
        if data["focus"] is None:
            raise NotFoundError(f"{ref!r} names no record: give SESSION@LOCATOR as search shows it")
        return dict(data["records"][data["focus"]])
    return api.record(ref, home=_home(request), agent=agent)


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (name.encode(), orjson.dumps(data))


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "`hello`, then one `records` event per batch of new records",
        }
    },
)
async def show_events(
    request: Request,
    ref: RefQuery,
    agent: str | None = AgentQuery,
    max_chars: int = Query(api.DEFAULT_MAX_CHARS, ge=0, le=api.MAX_MAX_CHARS),
    poll: float = Query(1.0, ge=0.1, le=60, description="Seconds between looks at the files."),
    max_events: int | None = Query(None, ge=1, le=100_000, description="Stop after N batches."),
    timeout: float = Query(300.0, gt=0, le=86_400, description="Stop after this many seconds."),
) -> StreamingResponse:
    """New records of a conversation as an agent writes them (server-sent events).

    ``hello`` carries ``{session_id, agent, message_count}``: a client holding
    fewer records than ``message_count`` reloads the conversation first. Each
    ``records`` event carries ``{records, message_count}``; a record's
    ``position`` says where it goes. The stream ends when the client
    disconnects, after ``max_events`` batches or after ``timeout`` seconds.
    """
    home = _home(request)
    watch = await run_in_threadpool(
        lambda: api.TranscriptWatch(ref, home=home, agent=agent, max_chars=max_chars)
    )

    async def stream() -> AsyncIterator[bytes]:
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        sent = 0
        hello = {
            "session_id": watch.session_id,
            "agent": watch.agent,
            "message_count": watch.message_count,
        }
        yield _event("hello", hello)
        while time.monotonic() < deadline and not await request.is_disconnected():
            fresh = await run_in_threadpool(watch.poll)
            if fresh:
                yield _event("records", {"records": fresh, "message_count": watch.message_count})
                quiet_since = time.monotonic()
                sent += 1
                if max_events is not None and sent >= max_events:
                    return
            elif time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                yield b": keepalive\n\n"  # a write notices a vanished client
                quiet_since = time.monotonic()
            await asyncio.sleep(max(0.0, min(poll, deadline - time.monotonic())))

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )

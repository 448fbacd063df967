"""``/api/v0/context``: workspace context over HTTP (a thin shell over the API).

Each workspace asked for gets a live, watched view (at most
``MAX_LIVE_WORKSPACES``, least recently used closed first), so
``/snapshot`` answers from the published snapshot and ``/events`` streams
each new version as server-sent events. The default workspace is
``app.state.context_workspace`` (``serve --workspace``), else the cwd.
Every live resolve is recorded in the context history; ``/snapshot?at=``,
``/history`` and ``/diff`` read it (``docs/archive.md``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, FastAPI, Query, Request, Response
from fastapi import Path as FastAPIPath
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from agentdex.api import context as api
from agentdex.api import context_history as history_api
from agentdex.errors import BusyError
from agentdex.http import params
from agentdex.http.app import ErrorBody
from agentdex.http.context_bodies import (
    AddedSourceBody,
    AddSourceRequest,
    DiffBody,
    HistoricalSnapshotBody,
    NotFoundBody,
    SnapshotBody,
    SourceBody,
    SourcesBody,
    VersionsBody,
)

MAX_LIVE_WORKSPACES = 4
#: workspaces open event streams may follow at once (each holds a watcher thread and its
#: inotify watches); a stream on one more is refused (429, Retry-After)
MAX_STREAMED_WORKSPACES = 8
KEEPALIVE_SECONDS = 15.0


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Bad path or parameter"},
    404: {"model": NotFoundBody, "description": "No such workspace or source"},
}
#: Adding a source can also be refused by policy (outside every allowed root, a secret).
_ADD_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    403: {"model": ErrorBody, "description": "Refused: outside the allowed roots, or a secret"},
}


class _LiveWorkspaces:
    """LRU of watched workspaces; streams in use are never evicted."""

    def __init__(self, limit: int = MAX_LIVE_WORKSPACES) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._items: OrderedDict[str, api.ContextWatch] = OrderedDict()

    def get(self, workspace: str, home: str | None, *, stream: bool = False) -> api.ContextWatch:
        with self._lock:
            live = self._items.get(workspace)
            if live is not None:
                self._items.move_to_end(workspace)
                return live
            streamed = sum(1 for item in self._items.values() if item.subscriber_count)
        if stream and streamed >= MAX_STREAMED_WORKSPACES:
            raise BusyError(
                f"event streams already follow {streamed} workspaces (at most"
                f" {MAX_STREAMED_WORKSPACES}); close one or retry later",
                retry_after=int(KEEPALIVE_SECONDS),
            )
        created = api.watch(workspace, home=home, recorded_by="http")  # resolves: no lock held
        evicted: list[api.ContextWatch] = []
        with self._lock:
            existing = self._items.get(workspace)
            if existing is not None:
                evicted.append(created)
                created = existing
            else:
                self._items[workspace] = created
            for key in list(self._items):
                if len(self._items) <= self._limit:
                    break
                if self._items[key].subscriber_count == 0 and key != workspace:
                    evicted.append(self._items.pop(key))
        for item in evicted:
            item.close()
        return created

    def release(self, workspace: str) -> None:
        """After a stream ended: a workspace no stream follows stops being watched (its
        thread and inotify watches are freed at once, not when the LRU gets to it)."""
        with self._lock:
            live = self._items.get(workspace)
            if live is None or live.subscriber_count:
                return
            del self._items[workspace]
        live.close()

    def close(self) -> None:
        with self._lock:
            items = list(self._items.values())
            self._items.clear()
        for item in items:
            item.close()


def _live(app: FastAPI) -> _LiveWorkspaces:
    state = app.state
    with _STATE_LOCK:
        registry = getattr(state, "context_live", None)
        if registry is None:
            registry = _LiveWorkspaces()
            state.context_live = registry
    return registry


_STATE_LOCK = threading.Lock()


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    registry = getattr(app.state, "context_live", None)
    if registry is not None:
        registry.close()


router = APIRouter(tags=["context"], lifespan=_lifespan)


def _home(request: Request) -> str | None:
    home: str | None = getattr(request.app.state, "context_home", None)
    return home


def _workspace(request: Request, directory: str | None) -> str:
    if directory is None:
        directory = getattr(request.app.state, "context_workspace", None)
    return api.workspace_path(directory)


def _watch(request: Request, directory: str | None, stream: bool = False) -> api.ContextWatch:
    return _live(request.app).get(_workspace(request, directory), _home(request), stream=stream)


Dir = Annotated[
    params.Path | None,
    Query(alias="dir", description="Workspace directory (default: the server's)."),
]
PayloadQuery = Query(False, description="Include instruction and skill text.")


AtQuery = Annotated[
    params.Time | None,
    Query(
        description="A past time (2026-01-31T09:30Z, 2h, 7d, yesterday) or vN: answer from "
        "the context history instead of the live view.",
        max_length=100,
    ),
]
_HISTORY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Bad path or time"},
    404: {"model": NotFoundBody, "description": "Nothing recorded at or before that time"},
    500: {"model": ErrorBody, "description": "The history database is busy or corrupt"},
}


def _history_dir(request: Request, directory: str | None) -> str | None:
    """The directory for a history read: may no longer exist (its history outlives it)."""
    if directory is not None:
        return directory
    default: str | None = getattr(request.app.state, "context_workspace", None)
    return default


@router.get(
    "/snapshot",
    response_model=HistoricalSnapshotBody | SnapshotBody,
    responses={**_ERRORS, **_HISTORY_ERRORS},
)
def get_snapshot(
    request: Request,
    directory: Dir = None,
    payload: bool = PayloadQuery,
    at: AtQuery = None,
    fallback: Literal["none", "earliest_after"] = Query(
        "none",
        description="With at: when nothing was recorded at or before it, answer the earliest "
        "later version (marked history.match = earliest_after) instead of 404.",
    ),
) -> dict[str, Any]:
    """The published snapshot of a workspace (payloads only with ``?payload=1``).

    With ``at``, the snapshot recorded in force at that time, with a
    ``history`` object saying which version it is.
    """
    if at is None:
        return _watch(request, directory).snapshot(payload=payload)
    return history_api.snapshot_at(
        _history_dir(request, directory),
        at,
        payload=payload,
        home=_home(request),
        fallback_after=fallback == "earliest_after",
        recorded_by="http",
    )


@router.get("/history", response_model=VersionsBody, responses={**_ERRORS, **_HISTORY_ERRORS})
def get_history(
    request: Request,
    directory: Dir = None,
    limit: int | None = Query(None, ge=1, le=10_000, description="Only the newest N versions."),
) -> dict[str, Any]:
    """Every recorded version of a workspace, oldest first, with change counts."""
    return history_api.versions(
        _history_dir(request, directory), limit=limit, home=_home(request), recorded_by="http"
    )


@router.get(
    "/diff",
    response_model=DiffBody,
    response_model_by_alias=True,
    responses={**_ERRORS, **_HISTORY_ERRORS},
)
def get_diff(
    request: Request,
    since: Annotated[params.Time, Query(alias="from", max_length=100, description="A time or vN.")],
    directory: Dir = None,
    until: Annotated[
        params.Time, Query(alias="to", max_length=100, description="A time or vN.")
    ] = "now",
) -> dict[str, Any]:
    """What changed in a workspace's context between two times (or versions)."""
    return history_api.diff(
        _history_dir(request, directory), since, until, home=_home(request), recorded_by="http"
    )


@router.post("/resync", response_model=SnapshotBody, responses=_ERRORS)
def post_resync(
    request: Request, directory: Dir = None, payload: bool = PayloadQuery
) -> dict[str, Any]:
    """Resolve now (also retries a degraded watcher) and return the live snapshot."""
    return _watch(request, directory).resync(payload=payload)


@router.get("/sources", response_model=SourcesBody)
def get_sources(request: Request) -> dict[str, Any]:
    """User-added sources, each with its current status."""
    ws = getattr(request.app.state, "context_workspace", None)
    return {"sources": api.list_sources(ws, home=_home(request))}


@router.post(
    "/sources",
    response_model=AddedSourceBody,
    status_code=201,
    openapi_extra={
        "responses": {
            "201": {
                "links": {
                    name: {"operationId": op, "parameters": {"path": "$response.body#/path"}}
                    for name, op in (
                        ("GetSource", "get_context_source"),
                        ("DeleteSource", "delete_context_source"),
                    )
                }
            }
        }
    },
    responses={
        **_ADD_ERRORS,
        200: {"model": AddedSourceBody, "description": "Already a source"},
    },
)
def post_source(request: Request, body: AddSourceRequest, response: Response) -> dict[str, Any]:
    """Add a user source; 201 with the canonical path (200 when it already was one)."""
    workspace = body.workspace or getattr(request.app.state, "context_workspace", None)
    entry = api.add_source(body.path, workspace, home=_home(request))
    if not entry["created"]:
        response.status_code = 200
    return {
        **api.get_source(entry["path"], workspace, home=_home(request)),
        "created": entry["created"],
    }


def _path_param(path: str) -> str:
    return path if path.startswith(("/", "~")) else "/" + path


SourcePathParam = Annotated[
    params.SourceParam,
    FastAPIPath(description="The source's path, URL-encoded ('/' may be left out)."),
]


@router.get(
    "/sources/{path:path}",
    operation_id="get_context_source",
    response_model=SourceBody,
    responses=_ERRORS,
)
def get_source(request: Request, path: SourcePathParam) -> dict[str, Any]:
    """One user source by its path (URL-encoded; the leading '/' may be omitted)."""
    ws = getattr(request.app.state, "context_workspace", None)
    return api.get_source(_path_param(path), ws, home=_home(request))


@router.delete(
    "/sources/{path:path}",
    operation_id="delete_context_source",
    status_code=204,
    response_class=Response,
    responses=_ERRORS,
)
def delete_source(request: Request, path: SourcePathParam) -> Response:
    """Forget a user source: 204, or 404 when it was never added."""
    api.remove_source(_path_param(path), home=_home(request))
    return Response(status_code=204)


def _sse(version: int, data: dict[str, Any]) -> bytes:
    return b"id: %d\nevent: snapshot\ndata: %s\n\n" % (version, orjson.dumps(data))


@router.get(
    "/events",
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "One `snapshot` event per published version",
        },
        **_ERRORS,
    },
    response_class=StreamingResponse,
)
async def get_events(
    request: Request,
    directory: Dir = None,
    payload: bool = PayloadQuery,
    max_events: int | None = Query(
        None, ge=1, le=100_000, description="Stop after this many events."
    ),
    timeout: float = Query(300.0, gt=0, le=86_400, description="Stop after this many seconds."),
) -> StreamingResponse:
    """Server-sent events: the current snapshot, then each new version.

    The stream ends when the client disconnects, after ``max_events``
    events, or after ``timeout`` seconds.
    """
    live = await run_in_threadpool(_watch, request, directory, True)
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()

    def on_version(_version: int) -> None:
        loop.call_soon_threadsafe(changed.set)

    unsubscribe = live.subscribe(on_version)

    async def stream() -> AsyncIterator[bytes]:
        deadline = time.monotonic() + timeout
        sent = 0
        last = -1
        try:
            while True:
                changed.clear()
                snap = await run_in_threadpool(lambda: live.snapshot(payload=payload))
                if snap["version"] > last:
                    last = snap["version"]
                    yield _sse(last, snap)
                    sent += 1
                    if max_events is not None and sent >= max_events:
                        return
                quiet_since = time.monotonic()
                while not changed.is_set():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or await request.is_disconnected():
                        return
                    if time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                        yield b": keepalive\n\n"  # a write notices a vanished client
                        quiet_since = time.monotonic()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(changed.wait(), min(remaining, 1.0))
        finally:
            unsubscribe()
            # not awaited: a disconnect cancels this generator, and closing a watcher joins
            # its thread; the release runs on the executor whatever happens here
            loop.run_in_executor(None, _live(request.app).release, live.workspace)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )

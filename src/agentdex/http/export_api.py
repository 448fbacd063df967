"""``/api/v0/resume/{ref}`` and ``/api/v0/export/{ref}``: resume commands and transcripts.

Both are thin shells over :mod:`agentdex.api.resume` and
:mod:`agentdex.api.export`. The resume route only *describes* the command
(a page shows it to copy); nothing here ever runs one. Transcripts are
served ``no-store`` with ``nosniff``, and HTML with the same
Content-Security-Policy the file carries (no script, nothing external).
Exports are streamed, and at most :data:`MAX_CONCURRENT_EXPORTS` are gathered and
rendered at once; later ones wait for a slot, then get 429 with ``Retry-After``.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from agentdex.api import export as export_api
from agentdex.api import resume as resume_api
from agentdex.errors import BusyError
from agentdex.http import params
from agentdex.tuning import env_float, env_int

router = APIRouter(tags=["resume and export"])

REF = Annotated[
    params.Ref,
    Path(
        description="A session id, a unique prefix of one, or a search result ref "
        "SESSION@LOCATOR (URL-encoded; no control characters)."
    ),
]


class ResumeBody(BaseModel):
    """Same JSON as ``agentdex resume REF --json``."""

    agent: str
    session_id: str
    supported: bool
    reason: str | None
    cwd: str | None
    cwd_exists: bool | None
    project: str | None
    branch: str | None
    worktree: str | None
    host: str | None
    argv: list[str] | None
    command: str | None
    executable: str | None
    note: str | None
    warnings: list[str]
    source: str | None


class RecordBody(BaseModel):
    agent: str
    store: str
    source_path: str
    locator: str
    session_id: str
    role: str
    kind: str
    text: str
    timestamp: str | None
    model: str | None
    cwd: str | None
    project: str | None
    branch: str | None
    worktree: str | None
    host: str | None
    #: only agentdex's archive still holds this record (docs/archive.md)
    source_gone: bool = False


class RedactionBody(BaseModel):
    count: int
    by_pattern: dict[str, int]


class ExportJsonBody(BaseModel):
    """Same JSON as ``agentdex export REF --format json``."""

    export_version: int
    generator: str
    agent: str
    session_id: str
    title: str | None
    project: str | None
    cwd: str | None
    branches: list[str]
    worktrees: list[str]
    models: list[str]
    hosts: list[str]
    started: str | None
    ended: str | None
    focus: int | None
    counts: dict[str, int]
    redaction: RedactionBody | None
    records: list[RecordBody]


def _home(request: Request) -> str | None:
    """The home ``serve`` was given (``agentdex --home H serve``), else the user's."""
    state = request.app.state
    home: str | None = getattr(state, "home", None) or getattr(state, "context_home", None)
    return home


@router.get("/resume/{ref:path}", response_model=ResumeBody)
def resume(request: Request, ref: REF) -> dict[str, Any]:
    """The command that reopens conversation ``ref`` in its agent and directory.

    Never runs it. An agent that cannot resume answers 200 with
    ``supported: false`` and the ``reason`` (the CLI exits 8 instead).
    """
    return resume_api.plan(ref, _home(request)).to_json()


_EXPORT_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The document, in the format asked for.",
        "model": ExportJsonBody,
        "content": {
            "text/markdown": {"schema": {"type": "string"}},
            "text/html": {"schema": {"type": "string"}},
        },
    }
}


@router.get(
    "/export/{ref:path}",
    response_class=Response,
    responses=_EXPORT_RESPONSE,
)
def export(
    request: Request,
    ref: REF,
    format: Literal["md", "html", "json"] = Query("md", description="md | html | json"),
    redact: bool = Query(False, description="Mask what looks like keys and tokens."),
    download: bool = Query(False, description="Content-Disposition: attachment."),
) -> Response:
    """Conversation ``ref`` as Markdown, standalone HTML or JSON (``agentdex export``).

    Streamed as it is rendered (memory does not grow with the conversation); the
    status and headers, and any error, are decided before the first byte.
    """
    if not _slots.acquire(timeout=QUEUE_SECONDS):
        raise BusyError(
            f"{MAX_CONCURRENT_EXPORTS} exports are already running; try again shortly",
            retry_after=RETRY_SECONDS,
        )
    try:
        stream = export_api.open_export(ref, _home(request), format=format, redact=redact)
    except BaseException:
        _slots.release()
        raise
    body = _body(stream, _slots.release)
    # started, so closing the body (the client gone) or dropping it frees the slot; an
    # error rendering the first piece has freed it already
    first = next(body, b"")
    disposition = "attachment" if download else "inline"
    headers = {
        "Content-Disposition": f'{disposition}; filename="{stream.filename}"',
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }
    if format == "html":
        from agentdex.api.export_render import CSP

        headers["Content-Security-Policy"] = CSP
    content = itertools.chain((first,), body)
    return StreamingResponse(content, media_type=stream.media_type, headers=headers)


#: bytes sent at once (a chunk per record would hop to the thread pool per record)
SEND_BYTES = 64 * 1024
#: exports gathered and rendered at once (each holds a small entry per record of its
#: conversation and parses its files: memory grows with these, not with the clients) ...
MAX_CONCURRENT_EXPORTS = env_int("AGENTDEX_MAX_EXPORTS", 2, minimum=1)
#: ... later ones wait this many seconds for a slot, then get 429 with Retry-After
QUEUE_SECONDS = env_float("AGENTDEX_EXPORT_QUEUE_SECONDS", 60.0)
RETRY_SECONDS = 5
_slots = threading.BoundedSemaphore(MAX_CONCURRENT_EXPORTS)


def _body(stream: export_api.ExportStream, done: Callable[[], object]) -> Iterator[bytes]:
    """The document's bytes in pieces of about :data:`SEND_BYTES`; the stream is closed
    and ``done`` called when the body ends, fails, or the client goes away (the
    generator is closed, or collected)."""
    try:
        pending: list[bytes] = []
        size = 0
        for chunk in stream.chunks():
            data = chunk.encode("utf-8")
            pending.append(data)
            size += len(data)
            if size >= SEND_BYTES:
                yield b"".join(pending)
                pending, size = [], 0
        if pending:
            yield b"".join(pending)
    finally:
        try:
            stream.close()
        finally:
            done()

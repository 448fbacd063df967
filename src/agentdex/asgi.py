"""Composition root: the HTTP API with MCP mounted at ``/mcp`` (``agentdex serve``),
and the MCP server on stdio (``agentdex mcp``).

The one module allowed to import both surfaces (``http`` and ``mcp``); the CLI
reaches them only through here. The FastAPI app's token dependency does not
reach a mounted ASGI app, so the MCP endpoint gets its own guard that checks
the *same* bearer token, and the MCP session manager runs inside the FastAPI
lifespan. Heavy imports stay inside functions so ``agentdex --help`` is fast.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.http.auth import load_or_create_token, token_matches, token_path

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "BearerGuard",
    "build_app",
    "load_or_create_token",
    "run_mcp_stdio",
    "token_path",
]

#: Where the MCP streamable-HTTP endpoint answers.
MCP_PATH = "/mcp"


class BearerGuard:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            header = headers.get(b"authorization", b"").decode("latin-1") or None
            if not token_matches(self.token, header):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    body = b'{"error":"UNAUTHORIZED","message":"missing or invalid bearer token"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b"Bearer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(
    token: str | None = None,
    *,
    data: Path | None = None,
    home: str | None = None,
    cwd: str | None = None,
    max_bytes: int | None = None,
) -> FastAPI:
    """The ``agentdex serve`` app: ``create_app(token=...)`` plus MCP at ``/mcp``, one token.

    ``cwd`` is the directory MCP tools default to (``serve --workspace``).
    """
    from starlette.routing import Route

    from agentdex.http.app import create_app
    from agentdex.mcp.server import streamable_http

    app = create_app(token=token, data=data)
    app.state.home = home  # the HTTP routes search this home's index, like MCP
    expected: str = app.state.token
    mcp_app, manager = streamable_http(home=home, cwd=cwd, max_bytes=max_bytes)
    guarded = BearerGuard(mcp_app, expected)
    # A Route (not a Mount) so "/mcp" itself answers without a redirect to "/mcp/".
    app.router.routes.append(Route(MCP_PATH, endpoint=guarded, include_in_schema=False))
    app.state.mcp_session_manager = manager

    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with manager.run(), inner(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
    return app


def run_mcp_stdio(*, home: str | None = None, max_bytes: int | None = None) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects (``agentdex mcp``)."""
    from functools import partial

    import anyio

    from agentdex.mcp.server import serve_stdio

    anyio.run(partial(serve_stdio, home=home, max_bytes=max_bytes))

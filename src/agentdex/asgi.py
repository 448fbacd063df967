"""Composition root: the HTTP API with MCP mounted at ``/mcp`` (``agentdex serve``),
and the MCP server on stdio (``agentdex mcp``).

The one module allowed to import both surfaces (``http`` and ``mcp``); the CLI
reaches them only through here. The app's auth gate (``http.auth.AuthGate``) is
the outermost layer, so ``/mcp`` takes the *same* bearer token under the same
rules as the API, and the MCP session manager runs inside the FastAPI
lifespan. Heavy imports stay inside functions so ``agentdex --help`` is fast.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.http.auth import load_or_create_token, token_path
from agentdex.http.ui import LOGIN_CODE_SECONDS

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

__all__ = [
    "LOGIN_CODE_SECONDS",
    "build_app",
    "issue_login_code",
    "load_or_create_token",
    "run_mcp_stdio",
    "server_config",
    "token_path",
]

#: Where the MCP streamable-HTTP endpoint answers.
MCP_PATH = "/mcp"


def build_app(
    token: str | None = None,
    *,
    data: Path | None = None,
    home: str | None = None,
    cwd: str | None = None,
    max_bytes: int | None = None,
    loopback_only: bool = False,
) -> FastAPI:
    """The ``agentdex serve`` app: ``create_app(token=...)`` plus MCP at ``/mcp``, one token.

    ``cwd`` is the directory MCP tools default to (``serve --workspace``);
    ``loopback_only`` refuses requests not addressed to a loopback name.
    """
    from starlette.routing import Route

    from agentdex.http.app import create_app
    from agentdex.mcp.server import streamable_http

    app = create_app(token=token, data=data, loopback_only=loopback_only)
    app.state.home = home  # the HTTP routes search this home's index, like MCP
    mcp_app, manager = streamable_http(home=home, cwd=cwd, max_bytes=max_bytes)
    # A Route (not a Mount) so "/mcp" itself answers without a redirect to "/mcp/".
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp_app, include_in_schema=False))
    app.state.mcp_session_manager = manager

    inner = app.router.lifespan_context

    @app.middleware("http")
    async def note_activity(request: Any, call_next: Any) -> Any:
        # a request in: the background embedding (api/semantic_background.py) steps aside
        from agentdex.api.semantic_background import note_activity

        note_activity()
        return await call_next(request)

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        from agentdex.api import semantic_background

        filler = semantic_background.start(home)
        try:
            async with manager.run(), inner(asgi_app) as state:
                yield state
        finally:
            filler.stop()

    app.router.lifespan_context = lifespan
    return app


def server_config(app: FastAPI, *, log_level: str = "warning") -> uvicorn.Config:
    """uvicorn settings for ``serve``: slow request headers are cut off, idle connections closed."""
    import uvicorn

    from agentdex.http.connections import KEEP_ALIVE_SECONDS, protocol_class

    return uvicorn.Config(
        app,
        log_level=log_level,
        lifespan="on",
        http=protocol_class(),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )


def issue_login_code(app: FastAPI) -> str:
    """A one-time code the web page trades for the token (``agentdex ui``)."""
    code: str = app.state.ui_login_codes.issue()
    return code


def run_mcp_stdio(*, home: str | None = None, max_bytes: int | None = None) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects (``agentdex mcp``)."""
    from functools import partial

    import anyio

    from agentdex.api import semantic_background
    from agentdex.mcp.server import serve_stdio

    filler = semantic_background.start(home)
    try:
        anyio.run(partial(serve_stdio, home=home, max_bytes=max_bytes))
    finally:
        filler.stop()

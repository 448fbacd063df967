"""The ASGI app factory: wires routers and auth, owns no logic.

Each capability contributes a router module (``ROUTERS``) with a
``router: fastapi.APIRouter``; missing modules are skipped so the app
builds at every stage of the project. Every route requires the bearer
token except the OpenAPI document and the web explorer's static page
(:mod:`agentdex.http.ui`, which holds no data): :class:`~agentdex.http.auth.AuthGate`
checks it (and bounds the body) before anything else runs. There is no
``/docs``: the interactive docs load their assets from a CDN, and the page
works offline.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from agentdex import __version__
from agentdex.errors import AgentdexError
from agentdex.http.auth import MAX_BODY_BYTES, PUBLIC_PATHS, AuthGate, load_or_create_token

#: (module, URL prefix) of every router the app mounts.
ROUTERS: tuple[tuple[str, str], ...] = (
    ("agentdex.http.context_api", "/api/v0/context"),
    ("agentdex.http.worktrees_api", "/api/v0/worktrees"),
    ("agentdex.http.sessions_api", "/api/v0/sessions"),
    ("agentdex.http.search_api", "/api/v0"),
    ("agentdex.http.facets_api", "/api/v0/facets"),
    ("agentdex.http.show_api", "/api/v0/show"),
    ("agentdex.http.sources_api", "/api/v0/sources"),
    ("agentdex.http.limits_api", "/api/v0/limits"),
    ("agentdex.http.export_api", "/api/v0"),
    ("agentdex.http.archive_api", "/api/v0/archive"),
)

_STATUS = {2: 400, 3: 404, 4: 409, 5: 422, 6: 500}


class ErrorBody(BaseModel):
    """What every failing request returns (AgentdexError mapped by exit code)."""

    error: str
    message: str
    detail: Any = None


#: Documented on every route: any library call can fail in these ways.
COMMON_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Invalid input (usage error)"},
    401: {"model": ErrorBody, "description": "Missing, invalid or repeated bearer token"},
    408: {"model": ErrorBody, "description": "The request body arrived too slowly"},
    413: {"model": ErrorBody, "description": f"Request body over {MAX_BODY_BYTES} bytes"},
    404: {"model": ErrorBody, "description": "Not found"},
    409: {"model": ErrorBody, "description": "Conflict with current state"},
    422: {"model": ErrorBody, "description": "Over a limit, or a request that fails validation"},
}


def create_app(*, token: str | None = None, data: Path | None = None) -> FastAPI:
    """Build the app. ``token`` defaults to the data dir's serve token."""
    expected = token if token is not None else load_or_create_token(data)
    app = FastAPI(
        title="agentdex",
        version=__version__,
        description="Local API over agent history, workspace context, worktrees and sessions.",
        docs_url=None,
        redoc_url=None,
    )
    app.state.token = expected
    from agentdex.http import ui

    app.add_middleware(
        AuthGate, token=expected, public=lambda path: path in PUBLIC_PATHS or ui.is_public(path)
    )

    @app.exception_handler(AgentdexError)
    async def _agentdex_error(_request: Request, exc: AgentdexError) -> JSONResponse:
        status = _STATUS.get(exc.exit_code, 500)
        body: dict[str, Any] = {"error": exc.code, "message": exc.message, "detail": exc.detail}
        return JSONResponse(status_code=status, content=body)

    for module_name, prefix in ROUTERS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        app.include_router(module.router, prefix=prefix, responses=COMMON_ERRORS)
    ui.add_ui_routes(app)
    return app

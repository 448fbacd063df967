"""The ASGI app factory: wires routers and auth, owns no logic.

Each capability contributes a router module (``ROUTERS``) with a
``router: fastapi.APIRouter``; missing modules are skipped so the app
builds at every stage of the project. Every route requires the bearer
token except the OpenAPI document and the web explorer's static page
(:mod:`agentdex.http.ui`, which holds no data): :class:`~agentdex.http.auth.AuthGate`
checks it (and bounds the body) before anything else runs. There is no
``/docs``: the interactive docs load their assets from a CDN, and the page
works offline.

The OpenAPI document is a contract a schema-driven fuzzer checks
(``tests/test_openapi_contract.py``): every failure answers
:class:`ErrorBody` with a documented status. A request that breaks the
schema is a 400 (never FastAPI's 422 shape, which the document no longer
lists); an ``AgentdexError`` maps by exit code (2 → 400, 3 → 404, 4 and 5 →
409: a conflict with the current state or a configured limit, told apart by
``error``), or by its ``http_status`` when it has one (403 for a refused
context source); a 405 names, in ``Allow``, exactly the methods the document
lists for that path.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

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
    ("agentdex.http.usage_api", "/api/v0/usage"),
    ("agentdex.http.show_api", "/api/v0/show"),
    ("agentdex.http.sources_api", "/api/v0/sources"),
    ("agentdex.http.limits_api", "/api/v0/limits"),
    ("agentdex.http.export_api", "/api/v0"),
    ("agentdex.http.archive_api", "/api/v0/archive"),
    ("agentdex.http.secrets_api", "/api/v0/secrets"),
)

_STATUS = {2: 400, 3: 404, 4: 409, 5: 409, 6: 500}
_HTTP_CODES = {400: "USAGE", 401: "UNAUTHORIZED", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


class ErrorBody(BaseModel):
    """What every failing request returns (AgentdexError mapped by exit code)."""

    error: str
    message: str
    detail: Any = None


#: Documented on every route: any library call can fail in these ways.
COMMON_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorBody,
        "description": "Invalid input: a parameter or body the schema refuses (`detail` lists "
        "what), or a malformed query (`USAGE`)",
    },
    401: {"model": ErrorBody, "description": "Missing, invalid or repeated bearer token"},
    408: {"model": ErrorBody, "description": "The request body arrived too slowly"},
    413: {"model": ErrorBody, "description": f"Request body over {MAX_BODY_BYTES} bytes"},
    404: {"model": ErrorBody, "description": "Not found"},
    409: {
        "model": ErrorBody,
        "description": "Conflict with the current state (`CONFLICT`), or a configured limit "
        "would be exceeded (`LIMIT`)",
    },
}


def invalid_request_body(errors: Any) -> dict[str, Any]:
    """What a schema-breaking request gets: ``ErrorBody`` with pydantic's errors as detail."""
    problems = jsonable_encoder(errors, custom_encoder={Exception: str})
    parts = []
    for problem in problems[:3]:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {problem.get('msg', 'invalid')}")
    message = "invalid request: " + "; ".join(parts) if parts else "invalid request"
    for problem in problems:
        problem.pop("input", None)  # may hold what was sent; the location says enough
        problem.pop("url", None)
    return {"error": "USAGE", "message": message, "detail": problems}


_METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


def documented_methods(request: Request) -> list[str]:
    """The methods some route answers for this request's path (for ``Allow``)."""
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document without its automatic 422 (this app answers 400 instead)."""
    if app.openapi_schema is None:
        from fastapi.openapi.utils import get_openapi

        doc = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        for operations in doc.get("paths", {}).values():
            for operation in operations.values():
                operation.get("responses", {}).pop("422", None)
        schemas = doc.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        app.openapi_schema = doc
    return app.openapi_schema


def create_app(
    *, token: str | None = None, data: Path | None = None, loopback_only: bool = False
) -> FastAPI:
    """Build the app. ``token`` defaults to the data dir's serve token.

    ``loopback_only``: refuse (421) requests whose ``Host`` is not a loopback
    name; ``serve`` sets it whenever it binds a loopback address.
    """
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
        AuthGate,
        token=expected,
        public=lambda path: path in PUBLIC_PATHS or ui.is_public(path),
        loopback_only=loopback_only,
    )

    @app.exception_handler(AgentdexError)
    async def _agentdex_error(_request: Request, exc: AgentdexError) -> JSONResponse:
        status = getattr(exc, "http_status", None) or _STATUS.get(exc.exit_code, 500)
        body: dict[str, Any] = {"error": exc.code, "message": exc.message, "detail": exc.detail}
        retry = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(retry)} if retry is not None else None
        return JSONResponse(status_code=status, content=body, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=400, content=invalid_request_body(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """The framework's own errors (unparsable body, no token, no route) as ErrorBody."""
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(documented_methods(request))
        body = {
            "error": _HTTP_CODES.get(exc.status_code, f"HTTP_{exc.status_code}"),
            "message": str(exc.detail),
            "detail": None,
        }
        return JSONResponse(body, status_code=exc.status_code, headers=headers)

    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
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

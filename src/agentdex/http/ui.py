"""The web explorer's static page, and the one-time login link that hands it the token.

The page (``http/ui/``: plain HTML, CSS and ES modules, no build step, no
external asset) is public like ``/openapi.json``: it holds no data, and
every request it makes for data carries the bearer token.

How the page gets the token without the token ever appearing in a URL:
``agentdex ui`` asks :class:`LoginCodes` for a random one-time code and opens
``/#login=<code>``. A URL fragment is never sent to the server (so it is in
no access log); the page posts the code to ``POST /ui/login``, which answers
the token once and forgets the code (it also expires after
``LOGIN_CODE_SECONDS``). The page keeps the token in ``sessionStorage`` (this
tab only, gone when it closes) and removes the fragment from the address bar.
A page opened without a code asks for the token (``agentdex serve`` prints
it; it is stored 0600 in the data dir).

Responses carry a strict Content-Security-Policy (``'self'`` only, no inline
script), ``nosniff``, ``no-referrer`` and ``frame-ancestors 'none'``.
"""

from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

if TYPE_CHECKING:
    from fastapi import FastAPI

ASSETS = Path(__file__).with_name("ui")
LOGIN_CODE_SECONDS = 600.0
MAX_PENDING_CODES = 16

_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
}

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


#: What the page needs without a token: the page, its files, and the code exchange.
PUBLIC_PATHS = frozenset({"/", "/ui/login"})
PUBLIC_PREFIX = "/ui/"


def is_public(path: str) -> bool:
    """True for the paths this module answers without the bearer token (no data in them)."""
    return path in PUBLIC_PATHS or (path.startswith(PUBLIC_PREFIX) and "/" not in path[4:])


class LoginCodes:
    """One-time codes that each buy the token once, within ``ttl`` seconds."""

    def __init__(self, ttl: float = LOGIN_CODE_SECONDS) -> None:
        self._ttl = ttl
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {}

    def issue(self) -> str:
        """A fresh code (the oldest pending one is dropped past ``MAX_PENDING_CODES``)."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._expire()
            while len(self._pending) >= MAX_PENDING_CODES:
                self._pending.pop(next(iter(self._pending)))
            self._pending[code] = time.monotonic() + self._ttl
        return code

    def redeem(self, code: str) -> bool:
        """True once for a pending, unexpired code; the code is spent either way."""
        with self._lock:
            self._expire()
            match = next((c for c in self._pending if secrets.compare_digest(c, code)), None)
            if match is None:
                return False
            del self._pending[match]
            return True

    def _expire(self) -> None:
        now = time.monotonic()
        for code in [c for c, deadline in self._pending.items() if deadline < now]:
            del self._pending[code]


def _asset_names() -> dict[str, Path]:
    """The files the page may load, by name (nothing outside this folder is reachable)."""
    return {
        path.name: path
        for path in sorted(ASSETS.iterdir())
        if path.is_file() and path.suffix in _MEDIA_TYPES
    }


def add_ui_routes(app: FastAPI) -> None:
    """Serve ``/`` and ``/ui/<file>`` publicly, and ``POST /ui/login`` for a one-time code."""
    assets = _asset_names()
    codes = LoginCodes()
    app.state.ui_login_codes = codes

    def file_response(path: Path) -> Response:
        return Response(
            path.read_bytes(),
            media_type=_MEDIA_TYPES[path.suffix],
            headers=SECURITY_HEADERS,
        )

    async def index(_request: Request) -> Response:
        return file_response(assets["index.html"])

    async def asset(request: Request) -> Response:
        path = assets.get(request.path_params["name"])
        if path is None:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return file_response(path)

    async def login(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            body = None
        code = body.get("code") if isinstance(body, dict) else None
        if not isinstance(code, str) or not code or len(code) > 200 or not codes.redeem(code):
            return JSONResponse(
                {
                    "error": "UNAUTHORIZED",
                    "message": "this login link was already used or has expired; "
                    "run `agentdex ui` again, or paste the token",
                },
                status_code=401,
                headers={"Cache-Control": "no-store"},
            )
        return JSONResponse({"token": app.state.token}, headers={"Cache-Control": "no-store"})

    app.router.routes.extend(
        [
            Route("/", index, methods=["GET"], include_in_schema=False),
            Route("/ui/login", login, methods=["POST"], include_in_schema=False),
            Route("/ui/{name}", asset, methods=["GET"], include_in_schema=False),
        ]
    )

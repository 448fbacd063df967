"""Bearer-token auth for ``agentdex serve``, checked before any work is done.

The token lives in the data dir (``serve-token``, mode 0600), is created on
first serve and printed, and is compared in constant time, as bytes (any
header value, ASCII or not, is simply right or wrong).

:class:`AuthGate` is the outermost ASGI layer of the whole app, ``/mcp``
included, so there is one rule everywhere. A server bound to loopback
answers only requests addressed to a loopback name (``Host`` is localhost
or a loopback address such as 127.0.0.1 or [::1], any port; else 421), so
a web page that rebinds its own DNS name to 127.0.0.1 gets nothing, not
even the public paths. Then exactly one ``Authorization: Bearer <token>``
header, else 401, answered before the body is read; then the body is read
up to ``MAX_BODY_BYTES`` (413 beyond, 408 when it trickles in slower than
``BODY_TIMEOUT_SECONDS``) and handed to the app.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.paths import data_dir, ensure_private_dir

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_FILE = "serve-token"
#: Largest request body any route accepts (bodies are small JSON documents).
MAX_BODY_BYTES = 1024 * 1024
#: A request body must arrive within this many seconds of its headers.
BODY_TIMEOUT_SECONDS = 30.0
#: Paths answered without a token (the API's description, nothing else).
PUBLIC_PATHS = frozenset({"/openapi.json"})


def token_path(base: Path | None = None) -> Path:
    return (base or data_dir()) / TOKEN_FILE


def load_or_create_token(base: Path | None = None) -> str:
    """Read the serve token, creating it (0600) when missing or empty."""
    path = token_path(base)
    try:
        existing = path.read_text(encoding="utf-8").strip()
    except OSError:
        existing = ""
    if existing:
        return existing
    ensure_private_dir(path.parent)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)
    return token


def token_matches(expected: str, header: str | bytes | None) -> bool:
    """True when ``header`` is ``Bearer <expected>`` (scheme in any case)."""
    if not header:
        return False
    raw = header if isinstance(header, bytes) else header.encode("utf-8", "surrogateescape")
    scheme, _, value = raw.strip().partition(b" ")
    return scheme.lower() == b"bearer" and secrets.compare_digest(
        value.strip(), expected.encode("utf-8")
    )


def authorized(expected: str, headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Exactly one Authorization header, and it carries the token (two are refused)."""
    values = [value for name, value in headers if name.lower() == b"authorization"]
    return len(values) == 1 and token_matches(expected, values[0])


def loopback_host(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Exactly one ``Host`` header, naming localhost or a loopback address (any port).

    >>> loopback_host([(b"host", b"127.0.0.1:8765")]), loopback_host([(b"host", b"[::1]")])
    (True, True)
    >>> loopback_host([(b"host", b"evil.example:8765")]), loopback_host([])
    (False, False)
    """
    values = [value for name, value in headers if name.lower() == b"host"]
    if len(values) != 1:
        return False
    host = values[0].decode("latin-1").strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name += "]"
    else:
        name, _, rest = host.partition(":")
        rest = ":" + rest if rest else ""
    port = rest[1:] if rest.startswith(":") else rest
    if port and not port.isdigit():
        return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _error(status: int, code: str, message: str) -> tuple[dict[str, Any], bytes]:
    import orjson

    body = orjson.dumps({"error": code, "message": message, "detail": None})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),  # the unread body makes the connection unusable
    ]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    return {"type": "http.response.start", "status": status, "headers": headers}, body


async def _answer(send: Send, status: int, code: str, message: str) -> None:
    start, body = _error(status, code, message)
    await send(start)
    await send({"type": "http.response.body", "body": body})


class AuthGate:
    """ASGI middleware: the token first, then a bounded body, then the app."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        *,
        max_body: int = MAX_BODY_BYTES,
        body_timeout: float = BODY_TIMEOUT_SECONDS,
        public: Callable[[str], bool] | None = None,
        loopback_only: bool = False,
    ) -> None:
        self.app = app
        #: answer only requests whose Host names loopback (a server bound to loopback)
        self.loopback_only = loopback_only
        self.token = token
        self.max_body = max_body
        self.body_timeout = body_timeout
        #: paths answered without the token (they hold no data)
        self.public = public if public is not None else PUBLIC_PATHS.__contains__

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        if self.loopback_only and not loopback_host(headers):
            await _answer(
                send,
                421,
                "MISDIRECTED",
                "this server answers only requests addressed to localhost or a loopback address",
            )
            return
        if not self.public(scope.get("path", "")) and not authorized(self.token, headers):
            await _answer(send, 401, "UNAUTHORIZED", "missing or invalid bearer token")
            return
        declared = _content_length(headers)
        if declared is not None and declared > self.max_body:
            await _answer(send, 413, "TOO_LARGE", self._too_large())
            return
        import anyio

        try:
            with anyio.fail_after(self.body_timeout):
                first = await self._read_body(receive)
        except TimeoutError:
            await _answer(send, 408, "TIMEOUT", "the request body arrived too slowly")
            return
        if first is None:
            await _answer(send, 413, "TOO_LARGE", self._too_large())
            return
        await self.app(scope, _replay(first, receive), send)

    def _too_large(self) -> str:
        return f"request body over {self.max_body} bytes"

    async def _read_body(self, receive: Receive) -> Message | None:
        """The whole body as one message, or None when it is over the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message  # the client went away: let the app see it
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}


def _content_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(first: Message, receive: Receive) -> Receive:
    """``receive`` that hands out the body read already, then defers to the server."""
    pending: list[Message] = [first]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay

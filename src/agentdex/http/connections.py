"""Connection limits for ``agentdex serve``: a client cannot hold a connection by going slow.

uvicorn closes a connection left idle after a response (``timeout_keep_alive``)
but has no limit on how long a request's *headers* may take: a client that
trickles a header byte every few seconds keeps its connection (and a file
descriptor) forever. :func:`protocol_class` is uvicorn's h11 protocol with
that limit: the headers of each request must be complete within
``HEADER_TIMEOUT_SECONDS`` of the connection opening (or of the previous
response ending), else the connection is closed. The body has its own limit
in :class:`agentdex.http.auth.AuthGate`.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: Seconds a client has to send a request's complete headers.
HEADER_TIMEOUT_SECONDS = 10.0
#: Seconds an idle keep-alive connection stays open after a response.
KEEP_ALIVE_SECONDS = 5


def protocol_class(header_timeout: float = HEADER_TIMEOUT_SECONDS) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing connections whose headers are too slow."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self._header_timer = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            # IDLE: the request line and headers are not complete yet
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol

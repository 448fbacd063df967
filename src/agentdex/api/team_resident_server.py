"""The resident team searcher's process: ``python -m agentdex.api.team_resident_server``.

Started by :func:`agentdex.api.team_resident.search` (see there). It lives as the
resident embedder does (:class:`agentdex.semantic.resident_server.Resident`: one per
socket name and data dir under ``<socket>.lock``, the socket bound before anything
slow, only peers of its own uid, gone after ``--idle`` seconds without a request,
when its socket is removed or replaced, on ``stop`` or SIGTERM), but answers in its
main thread, one search at a time: a search's time budget is enforced with
``SIGALRM`` (:func:`agentdex.search.budget.enforced`), which only the main thread
receives, and one search keeps one connection busy. A second search waits for the first.

It keeps an open connection per team URL a client sent (at most ``KEPT``; and one
more for reading bands ahead, :mod:`agentdex.team.ahead`), reused
when it is idle and healthy after a search, else closed; a kept connection the server
dropped meanwhile is replaced once, in the same search. Statements are never
prepared on a kept connection (``prepare_threshold = None``): PostgreSQL's generic
plan of a prepared statement ignores the trigram pattern's selectivity, and a
search must be planned as one made on a new connection is.
"""

from __future__ import annotations

import socket
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

from agentdex.api import team_resident as wire
from agentdex.errors import AgentdexError
from agentdex.semantic.resident_server import MainThreadResident, serve

#: connections kept open (one per URL), the least recently used closed first
KEPT = 4
#: what a client may pass on to :func:`agentdex.api.team.search`
OPTIONS: dict[str, type | tuple[type, ...]] = {
    "regex": bool,
    "word": bool,
    "case": str,
    "limit": (int, type(None)),
    "sort": str,
    "dedup": bool,
    "now": (int, float, type(None)),
    "exact_total": bool,
}


class TeamResident(MainThreadResident):
    def __init__(self, folder: Path, name: str, idle: float) -> None:
        super().__init__(folder, name, "team", idle)
        #: URL -> an open connection, idle between searches (least recently used first)
        self.connections: dict[str, Any] = {}
        #: URL -> the second connection a search reads ahead on (``team.ahead``)
        self.helpers: dict[str, Any] = {}
        self.digest = wire.environment_digest()

    # -- life (the rest is Resident's) --------------------------------------------------------

    def _load(self) -> None:
        """Import what a search needs while the first client sends its request."""
        try:
            import psycopg  # noqa: F401

            from agentdex.api import team  # noqa: F401
            from agentdex.team import search  # noqa: F401
        except ImportError as exc:
            self.error = f"cannot import the team search: {exc}"
        self.ready.set()

    def _closing(self) -> None:
        _close([*self.connections.values(), *self.helpers.values()])
        self.connections.clear()
        self.helpers.clear()

    def _receive(self, conn: socket.socket) -> dict[str, Any]:
        return wire.receive(conn)

    def _send(self, conn: socket.socket, answer: dict[str, Any]) -> None:
        wire.send(conn, answer)

    # -- requests ------------------------------------------------------------------------------

    def _status(self) -> dict[str, Any]:
        info = super()._status()
        info["connections"] = len(self.connections) + len(self.helpers)
        return info

    def _search(self, request: dict[str, Any]) -> dict[str, Any]:
        url, query, seconds = request.get("url"), request.get("query"), request.get("seconds")
        options = request.get("options")
        if request.get("env") != self.digest:
            return {"ok": False, "fallback": "another environment (PG* variables, HOME)"}
        if (
            not isinstance(url, str)
            or not isinstance(query, str)
            or not isinstance(seconds, int | float)
            or isinstance(seconds, bool)
            or not isinstance(options, dict)
            or any(
                key not in OPTIONS or not isinstance(value, OPTIONS[key])
                for key, value in options.items()
            )
        ):
            return {"ok": False, "fallback": "malformed search request"}
        self.ready.wait()
        if self.error is not None:
            return {"ok": False, "fallback": self.error}
        self.requests += 1
        try:
            result = self._run(url, query, options, float(seconds))
        except AgentdexError as exc:
            error = {"code": exc.code, "message": exc.message, "exit": exc.exit_code}
            if exc.detail is not None:
                error["detail"] = exc.detail
            return {"ok": False, "error": error}
        except Exception as exc:  # a bug: the client searches itself (and says what it is)
            print(f"team search failed: {type(exc).__name__}", file=sys.stderr, flush=True)
            return {"ok": False, "fallback": f"resident failed: {type(exc).__name__}"}
        return {"ok": True, "result": result.to_json(), "highlights": result.highlights}

    def _run(self, url: str, query: str, options: dict[str, Any], seconds: float) -> Any:
        """The search, on the connection kept for ``url`` (opened when there is none:
        after the query is checked, as in a process of its own); one kept connection the
        server dropped while it was idle is replaced once."""
        from agentdex.api import team
        from agentdex.search.budget import Budget
        from agentdex.team.connect import TeamUnreachable

        kept = self.connections.pop(url, None)
        opened: list[Any] = []
        kept_helper = self.helpers.pop(url, None)
        helpers: list[Any] = []

        def connection() -> Any:
            if kept is not None and not opened:
                opened.append(kept)
            else:
                opened.append(_connect(url))
            return opened[-1]

        def helper() -> Any:
            if not helpers:
                usable = kept_helper is not None and not kept_helper.closed
                helpers.append(kept_helper if usable else _connect(url))
            return helpers[0]

        def search() -> Any:
            budget = Budget(seconds)
            return team.search(
                query, url=url, budget=budget, connection=connection, helper=helper, **options
            )

        try:
            try:
                result = search()
            except TeamUnreachable:
                if kept is None or opened != [kept]:
                    raise
                result = search()  # a new connection: the kept one was dropped meanwhile
        except AgentdexError as exc:  # a refused query, a newer schema, no server...
            if not opened and kept is not None:
                self.connections[url] = kept  # not used: the query was refused before
            elif opened and not isinstance(exc, TeamUnreachable):
                self._keep(url, opened.pop())
            _close(opened)
            raise
        except BaseException:
            _close(opened)
            raise
        finally:
            self._keep_helper(url, kept_helper, helpers)
        self._keep(url, opened.pop())
        _close(opened)
        return result

    def _keep(self, url: str, conn: Any, pool: dict[str, Any] | None = None) -> None:
        """Keep ``conn`` for the next search of ``url`` if it is idle and healthy."""
        from psycopg.pq import TransactionStatus

        pool = self.connections if pool is None else pool
        if conn.closed or conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
            _close([conn])
            return
        pool[url] = conn
        while len(pool) > KEPT:
            _close([pool.pop(next(iter(pool)))])

    def _keep_helper(self, url: str, kept: Any, used: list[Any]) -> None:
        """After a search: the helper connection it used (or the one kept, unused)."""
        conn = used[0] if used else kept
        if conn is not None:
            self._keep(url, conn, self.helpers)
        if kept is not None and used and used[0] is not kept:
            _close([kept])  # it was closed: replaced


def _connect(url: str) -> Any:
    from agentdex.team.connect import connect, mask_url

    conn = connect(url, masked=mask_url(url))
    conn.prepare_threshold = None  # planned as on a new connection (the module docstring)
    return conn


def _close(connections: list[Any]) -> None:
    for conn in connections:
        with suppress(Exception):
            conn.close()


def main(argv: list[str] | None = None) -> int:
    return serve(
        argv,
        "agentdex-resident-team",
        wire.IDLE_SECONDS,
        lambda args, folder: TeamResident(folder, args.socket, args.idle),
    )


if __name__ == "__main__":
    raise SystemExit(main())

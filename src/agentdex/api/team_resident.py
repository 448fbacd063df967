"""The resident team searcher: ``search --team`` answered by a process that stays.

A fresh ``agentdex search --team`` process spends most of its time before the
query reaches the server: ``import psycopg`` (~0.2 s: libpq, asyncio, ssl,
importlib.metadata), the search modules (~0.1 s), and the connection (TCP or
socket, TLS, authentication). The query itself takes 20-200 ms at 1 GB. So the CLI
asks a small resident process (:mod:`agentdex.api.team_resident_server`) that has
all of that loaded and keeps an open connection per team URL (and a second one
to read a first page's bands ahead on, :mod:`agentdex.team.ahead`): the first
``search --team`` starts it (it binds its socket at once, then imports and
connects while that first search waits for its answer); it answers over a unix
socket in the data dir and exits by itself after ``idle_seconds()`` without a
request. Only the CLI uses it (``serve --team`` and MCP search in their own process).

The answer is what the same search run in this process would give: the resident
runs :func:`agentdex.api.team.search` on the URL this process resolved (``--url``,
``AGENTDEX_TEAM_URL``, the config), with this process's options, time budget and
pinned clock, and errors come back as the same one-line error and exit status.
What libpq reads from the environment (``PG*`` variables, ``~/.pgpass`` through
``HOME``) must be the resident's too: a client whose environment differs, or whose
URL names a file by a relative path, searches in its own process instead.

Safety: the socket lives in ``<data dir>/run/`` (0700) and is 0600; the resident
checks each peer's uid (``SO_PEERCRED``), never prints or logs a URL unmasked, and
is a unix socket only: nothing on the network reaches it (its database
connections are the client's own URLs). ``AGENTDEX_RESIDENT_TEAM=0`` turns it off
(every search connects itself); ``AGENTDEX_TEAM_IDLE_SECONDS`` sets the idle time
before it exits (default 600: while it runs it holds one idle connection per URL on
the server).

Wire: the client sends one JSON request and closes its writing side; the resident
answers one JSON document and closes. This module imports nothing heavy.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from agentdex.api.search_resident import Answer
from agentdex.errors import RemoteError
from agentdex.semantic import sockets
from agentdex.semantic.sockets import connect, digest

#: bumped when the messages change: a resident of another protocol listens elsewhere
PROTOCOL = 1
IDLE_SECONDS = 600.0
#: an answer may take the search's budget, plus a connection (``team.connect``: 10 s)
ANSWER_MARGIN = 25.0
#: largest message either end accepts
MAX_MESSAGE = 256 << 20
#: URL parameters naming a file: a relative one is read from the resident's folder
_FILE_PARAMETERS = ("sslcert", "sslkey", "sslrootcert", "sslcrl", "sslcrldir", "passfile")


def enabled() -> bool:
    """Whether the CLI may use (and start) a resident team searcher."""
    from agentdex.semantic.switches import switched_on

    return switched_on("AGENTDEX_RESIDENT_TEAM")


def idle_seconds() -> float:
    from agentdex.semantic.switches import seconds_setting

    return seconds_setting("AGENTDEX_TEAM_IDLE_SECONDS", IDLE_SECONDS)


def run_dir() -> Path:
    """The residents' folder (the embedder's too: one private ``run/`` per data dir)."""
    from agentdex.semantic.switches import run_dir as residents_dir

    return residents_dir()


def socket_name() -> str:
    """``team-<8 hex of this agentdex's source folder and version>-p<protocol>.sock``:
    another checkout or version of agentdex gets its own resident."""
    import agentdex

    where = f"{Path(agentdex.__file__).resolve().parent}\0{agentdex.__version__}"
    return f"team-{digest(where)}-p{PROTOCOL}.sock"


def environment_digest(environ: Any = None) -> str:
    """A digest of what libpq reads from the environment (never sent as values)."""
    env = os.environ if environ is None else environ
    items = sorted((k, v) for k, v in env.items() if k.startswith("PG") or k == "HOME")
    return digest("\0".join(f"{k}={v}" for k, v in items))


def servable(url: str) -> bool:
    """Whether the resident reads ``url`` as this process would (no relative file names)."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        pairs = parse_qsl(urlsplit(url).query)
    except ValueError:
        return False
    return all(
        os.path.isabs(value) or value == "system"
        for key, value in pairs
        if key in _FILE_PARAMETERS and value
    )


# -- wire (both ends) ----------------------------------------------------------------------


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    """One JSON message, then this end's writing side closed (the message's end)."""
    import orjson

    sock.sendall(orjson.dumps(message))
    sock.shutdown(socket.SHUT_WR)


def receive(sock: socket.socket) -> dict[str, Any]:
    """The other end's message: everything until it closes its writing side."""
    import orjson

    parts, size = [], 0
    while True:
        part = sock.recv(1 << 20)
        if not part:
            break
        size += len(part)
        if size > MAX_MESSAGE:
            raise ValueError("message too large")
        parts.append(part)
    message = orjson.loads(b"".join(parts))
    if not isinstance(message, dict):
        raise ValueError("malformed message")
    return message


# -- the client ----------------------------------------------------------------------------


def team_search(query: str, *, url: str | None, time_budget: float | None, **options: Any) -> Any:
    """``search --team``: by the resident when one can serve it (this process then imports
    neither psycopg nor the search code, and connects to nothing), else in this process
    (:func:`agentdex.api.team.search`); the same answer and errors either way.
    ``time_budget``: seconds (None: the configured budget)."""
    from agentdex.api import team
    from agentdex.errors import UsageError

    try:
        resolved: str | None = team.settings(url, "-").url
    except UsageError:
        resolved = None  # said by the search below, after the query's own errors as always
    if resolved is not None and enabled():
        from agentdex.config import load_config

        # the configured budget (``search.budget.default_seconds``; that module, and its
        # signal handling, are the resident's to load)
        seconds = load_config().time_budget if time_budget is None else time_budget
        answer = search(resolved, query, options, seconds)
        if answer is not None:
            return answer
    from agentdex.search.budget import Budget

    budget = None if time_budget is None else Budget(time_budget)
    return team.search(query, url=resolved or url, budget=budget, **options)


def search(url: str, query: str, options: dict[str, Any], seconds: float) -> Answer | None:
    """``query`` searched in the team database at ``url`` by the resident (started when
    none runs): the answer, or None when no resident can serve it (the caller searches
    itself). ``options``: :func:`agentdex.api.team.search`'s keywords (no budget);
    ``seconds``: the time budget. Raises :class:`RemoteError` for the search's own
    errors (unreachable server, wrong password, bad query...)."""
    if not servable(url):
        return None
    request = {
        "op": "search",
        "env": environment_digest(),
        "url": url,
        "query": query,
        "options": options,
        "seconds": seconds,
    }
    answer = _request(request, seconds + ANSWER_MARGIN)
    if answer is None:
        return None
    if answer.get("ok"):
        data, spans = answer.get("result"), answer.get("highlights")
        if not isinstance(data, dict) or not isinstance(spans, list):
            return None
        return Answer(data, [[(a, b) for a, b in row] for row in spans])
    error = answer.get("error")
    if isinstance(error, dict) and isinstance(error.get("exit"), int):
        raise RemoteError(
            str(error.get("code", "ERROR")),
            str(error.get("message", "team search failed")),
            error["exit"],
            error.get("detail"),
        )
    return None  # not served (another environment, a resident shutting down)


def _request(request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    folder, name = run_dir(), socket_name()
    sock = connect(folder, name, timeout)
    if sock is None:
        from agentdex.semantic.resident import _await as await_socket
        from agentdex.semantic.resident import spawn

        module = "agentdex.api.team_resident_server"
        child = spawn(folder, name, module, ["--idle", str(idle_seconds())])
        if child is None:
            return None
        sock = await_socket(folder, name, child)  # it binds before it imports or connects
        if sock is None:
            return None
        sock.settimeout(timeout)
    try:
        with sock:
            send(sock, request)
            return receive(sock)
    except (OSError, ValueError):
        return None


def _header(sock: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
    send(sock, request)
    return receive(sock)


def status() -> dict[str, Any]:
    """Whether a resident team searcher runs, and what it says (never starts one)."""
    keys = ("pid", "started", "last_used", "requests", "connections", "rss_mb")
    return sockets.status(
        run_dir(), socket_name(), _header, enabled=enabled(), idle=idle_seconds(), keys=keys
    )


def stop() -> bool:
    """Ask a running resident to close its connections and exit now; True if one answered."""
    return sockets.stop(run_dir(), socket_name(), _header)

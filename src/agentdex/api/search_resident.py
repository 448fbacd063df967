"""The resident searcher: a fresh ``agentdex search`` answered by a process that stays.

A fresh search process spends ~120-150 ms before it can search at all (the
interpreter, ~170 modules, tantivy, opening the index), then ~100-150 ms
searching at 1 GB, the semantic half asked of the resident embedder. A resident
(:mod:`agentdex.api.search_resident_server`) keeps all of that imported and
answers the whole search; the CLI is then a thin client that reads its command
line, forks its refresh check as always (:mod:`agentdex.api.check_early`),
sends the search here and prints the answer itself (the same code prints an
answer of its own process: the output cannot differ).

**When the resident answers, and when it does not.** The client sends the search
and meanwhile waits for its own forked check, as an in-process search does
(:mod:`agentdex.api.check_ahead`): the resident's answer is kept only when the
check says nothing changed (the resident opens the index afresh for every
search, after the check started: the same guarantee). When something changed,
the answer is dropped and the search runs in this process, refreshing first
(only the files the check named); ``--no-refresh`` takes the answer as it is.
Everything else also runs here as before: no resident (one is then started
*after* this search has printed its answer, detached), a resident that does not
answer within ``CONNECT_SECONDS`` / the time budget plus ``ANSWER_MARGIN``, one
of other code (the socket's name holds this source folder and version; the
resident also leaves once a module file it runs changed on disk), one whose
environment differs in what a search reads (:func:`environment_digest`), a
socket another uid owns, a relative ``--home`` or path in the environment
(the resident's folder is not this one), and ``AGENTDEX_RESIDENT_SEARCH=0``.

Safety: the socket lives in ``<data dir>/run/`` (0700) and is 0600; the resident
checks each peer's uid (``SO_PEERCRED``) and the client checks the resident's.
It is a unix socket only. ``AGENTDEX_SEARCH_IDLE_SECONDS`` sets the idle time
before it exits (default 600). This module imports nothing of the search.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

from agentdex.errors import RemoteError
from agentdex.semantic import sockets
from agentdex.semantic.sockets import connect, digest

#: bumped when the messages change: a resident of another protocol listens elsewhere
PROTOCOL = 3
IDLE_SECONDS = 600.0
#: how long a client waits to be accepted by a resident that runs
CONNECT_SECONDS = 1.0
#: an answer may take the search's time budget, plus this
ANSWER_MARGIN = 2.0
#: largest message either end accepts
MAX_MESSAGE = 256 << 20
#: environment variables a search reads (besides every ``AGENTDEX_*``): the resident
#: serves only clients whose values are its own
_READ = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "TZ")
#: ``AGENTDEX_*`` variables that say where work runs, never what a search answers
_WHERE = frozenset(
    {
        "AGENTDEX_RESIDENT_SEARCH",
        "AGENTDEX_RESIDENT_EMBEDDER",
        "AGENTDEX_RESIDENT_TEAM",
        "AGENTDEX_SEARCH_IDLE_SECONDS",
        "AGENTDEX_EMBEDDER_IDLE_SECONDS",
        "AGENTDEX_TEAM_IDLE_SECONDS",
    }
)
#: those naming a path: a relative one is read from the resident's folder, not the client's
_PATHS = (
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "AGENTDEX_HOME",
    "AGENTDEX_CONFIG",
    "AGENTDEX_DATA_DIR",
    "AGENTDEX_MODEL_PATH",
)
#: what the client may pass on to :func:`agentdex.api.search.answer_now`
OPTIONS: dict[str, type | tuple[type, ...]] = {
    "mode": str,
    "home": (str, type(None)),
    "regex": bool,
    "word": bool,
    "case": str,
    "limit": (int, type(None)),
    "sort": str,
    "here": (str, type(None)),
    "only_here": bool,
    "dedup": bool,
    "now": (int, float, type(None)),
    "exact_total": bool,
}

#: set when this process found no resident: :func:`start_after` starts one
_wanted = False


class Answer:
    """What the CLI reads of a :class:`agentdex.api.search.SearchResult`, from a resident
    (this one, or the team searcher: :mod:`agentdex.api.team_resident`)."""

    __slots__ = ("data", "highlights", "results", "status")

    def __init__(self, data: dict[str, Any], highlights: list[list[tuple[int, int]]]) -> None:
        self.data = data
        self.status: str = data.get("status", "ok")
        self.results: list[dict[str, Any]] = data.get("results", [])
        self.highlights = highlights

    def to_json(self) -> dict[str, Any]:
        return self.data


class Printed:
    """A search's ``--json`` or ``--ndjson`` output as the resident rendered it (with the
    CLI's own functions, :mod:`agentdex.api.json_text`), and what the exit needs."""

    __slots__ = ("coverage", "found", "output", "stats", "status")

    def __init__(self, header: dict[str, Any], output: bytes) -> None:
        self.output = output
        self.status: str = header.get("status", "ok")
        #: anything found (exit 0), else exit 1
        self.found = bool(header.get("found"))
        #: for a partial answer's line on stderr
        self.stats: dict[str, Any] = header.get("stats") or {}
        self.coverage: Any = header.get("coverage")


class Fallback:
    """No answer from the resident: search in this process (``known``: the store files
    the check found changed, when they are all that changed)."""

    __slots__ = ("known",)

    def __init__(self, known: Any = None) -> None:
        self.known = known


def enabled() -> bool:
    """Whether the CLI may use (and start) a resident searcher."""
    from agentdex.semantic.switches import switched_on

    return switched_on("AGENTDEX_RESIDENT_SEARCH")


def idle_seconds() -> float:
    from agentdex.semantic.switches import seconds_setting

    return seconds_setting("AGENTDEX_SEARCH_IDLE_SECONDS", IDLE_SECONDS)


def run_dir() -> Path:
    """The residents' folder (the embedder's too: one private ``run/`` per data dir)."""
    from agentdex.paths import data_dir

    return data_dir() / "run"


def code_stamp() -> str:
    """This agentdex's source folder and version: a resident of other code is not asked."""
    import agentdex

    return f"{Path(agentdex.__file__).resolve().parent}\0{agentdex.__version__}\0{PROTOCOL}"


def socket_name() -> str:
    """``search-<8 hex of the code stamp>-p<protocol>.sock``."""
    return f"search-{digest(code_stamp())}-p{PROTOCOL}.sock"


def environment_digest(environ: Any = None) -> str:
    """A digest of what a search reads from the environment (never sent as values)."""
    env = os.environ if environ is None else environ
    items = sorted(
        (k, v)
        for k, v in env.items()
        if (k.startswith("AGENTDEX_") and k not in _WHERE) or k in _READ
    )
    return digest("\0".join(f"{k}={v}" for k, v in items))


def servable(home: str | None) -> bool:
    """Whether the resident reads this search's places as this process would: no relative
    ``--home``, nor a relative path in the environment (the resident's cwd is its own)."""
    if home is not None and not os.path.isabs(os.path.expanduser(home)):
        return False
    for name in _PATHS:
        value = os.environ.get(name)
        if value and not os.path.isabs(os.path.expanduser(value)):
            return False
    return True


# -- wire (both ends) ----------------------------------------------------------------------


def send(sock: socket.socket, message: dict[str, Any], body: bytes = b"") -> None:
    """One message (:mod:`agentdex.semantic.framing`: a JSON header the standard
    library reads, so a client never imports orjson for it; then ``body`` as it is, the
    answer's JSON or the printed output)."""
    from agentdex.semantic import framing

    framing.send(sock, message, body)


def receive(sock: socket.socket) -> tuple[dict[str, Any], bytes]:
    """The other end's message: its header and body (see :func:`send`)."""
    from agentdex.semantic import framing

    return framing.receive(sock, MAX_MESSAGE)


# -- the client ----------------------------------------------------------------------------


def search(
    query: str,
    *,
    refresh_first: bool,
    seconds: float | None,
    render: str | None = None,
    **options: Any,
) -> Answer | Printed | Fallback:
    """``query`` answered by the resident, or :class:`Fallback` (search in this process).

    ``options``: :data:`OPTIONS` (``search``'s keywords); ``seconds``: the time budget
    (None: the configured one). ``refresh_first``: keep the answer only when this
    process's forked check (:func:`agentdex.api.check_early.start`) says nothing
    changed, or, when none was forked (:func:`listening`), the resident's own check,
    run after the request came. ``render`` (``"json"``, ``"ndjson"``): the resident may
    print that itself (:class:`Printed`). Raises :class:`RemoteError` for the search's own
    errors (a bad query...) when the index is fresh, as the search here would have."""
    global _wanted
    if not enabled() or not servable(options.get("home")):
        return Fallback()
    folder, name = run_dir(), socket_name()
    sock = connect(folder, name, CONNECT_SECONDS)
    if sock is None:
        _wanted = True
        return Fallback()
    with sock:
        # no check forked unless its module was imported (cli.main imports it to fork one)
        check_early = sys.modules.get("agentdex.api.check_early")
        early = None
        if refresh_first and check_early is not None:
            early = check_early.take(None, options.get("home"))
        # no forked check (cli.main forks none when a resident listens): the resident checks
        checks_there = refresh_first and early is None
        if early is not None and early.changed:  # signalled already: no answer to ask for
            return Fallback(_checked(early, options.get("home"))[1])
        request = {
            "op": "search",
            "stamp": code_stamp(),
            "env": environment_digest(),
            "query": query,
            "options": options,
            "seconds": seconds,
            "check": checks_there,
            # the resident prints only what needs nothing of this process (its check's line)
            "render": render if checks_there or not refresh_first else None,
        }
        try:
            send(sock, request)
        except OSError:
            if early is not None and check_early is not None:
                check_early.give_back(early)
            return Fallback()
        refresh: dict[str, Any] | None = None
        if early is not None:
            fresh, found = _checked(early, options.get("home"))
            if not fresh:
                return Fallback(found)
            refresh = found
        budget = seconds if seconds is not None else _configured_seconds()
        sock.settimeout(budget + ANSWER_MARGIN)
        try:
            answer, body = receive(sock)
        except (OSError, ValueError):
            return Fallback()
    if checks_there:
        if not answer.get("ok") and "changed" in answer:  # refresh here, then search
            return Fallback(_sent_changes(answer["changed"], options.get("home")))
        refresh = answer.get("refresh")
        if not isinstance(refresh, dict) and answer.get("printed") is not True:
            return Fallback()  # printed: the check's line is in the output already
    return _read(answer, body, refresh)


def listening(home: str | None) -> bool:
    """Is a resident searcher likely to answer a search of ``home`` here (enabled, a
    servable search, its socket there)? :func:`agentdex.cli.main` then forks no refresh
    check: the resident checks (a wrong guess: the search here checks for itself)."""
    if not enabled() or not servable(home):
        return False
    try:
        return (run_dir() / socket_name()).exists()
    except OSError:
        return False


def _sent_changes(sent: Any, home: str | None) -> Any:
    """The resident's check's changed store files, as this process's refresh takes them
    (None: only discovery knows, or the manifest changed since)."""
    if not isinstance(sent, dict):
        return None
    from agentdex.api.check_ahead import index_root
    from agentdex.ingest.manifest import changes_from

    try:
        location = Path(index_root(None, home=home))
        return changes_from(location, home, sent["stamp"], sent["now"], sent["sources"])
    except (KeyError, TypeError, AttributeError):
        return None


def _configured_seconds() -> float:
    from agentdex.config import load_config

    return load_config().time_budget


def _checked(early: Any, home: str | None) -> tuple[bool, Any]:
    """The forked check's answer: ``(True, stats.refresh)`` nothing changed, else
    ``(False, the changed store files or None)`` (:mod:`agentdex.api.check_ahead`)."""
    import signal

    from agentdex.api.check_ahead import PendingCheck, _changes, index_root
    from agentdex.api.check_early import CHANGED_SIGNAL

    location = index_root(None, home=home)
    try:
        line, seconds = PendingCheck(early.pid, early.reader, early.started, location).result()
    finally:
        signal.signal(CHANGED_SIGNAL, early.previous)
    if line.startswith(b"="):
        refresh = {"seconds": round(seconds, 4), "files_parsed": 0, "files_removed": 0}
        return True, {**refresh, "records_added": 0}
    if line.startswith(b"C"):
        return False, _changes(location, home, line[1:])
    return False, None


def _read(answer: dict[str, Any], body: bytes, refresh: dict[str, Any] | None) -> Any:
    """The resident's answer as this process's search would have returned it: an
    :class:`Answer`, or :class:`Printed` when the resident rendered the output."""
    if answer.get("ok"):
        if answer.get("printed") is True:
            return Printed(answer, body)
        import json  # not orjson: ~29 ms of imports a fresh process would pay for it

        try:
            whole = json.loads(body)
        except ValueError:
            return Fallback()
        data = whole.get("result") if isinstance(whole, dict) else None
        spans = whole.get("highlights") if isinstance(whole, dict) else None
        if not isinstance(data, dict) or not isinstance(spans, list):
            return Fallback()
        if refresh is not None:  # as api.search puts its check's line first
            data["stats"] = {"refresh": refresh, **data.get("stats", {})}
        return Answer(data, [[(a, b) for a, b in row] for row in spans])
    error = answer.get("error")
    if isinstance(error, dict) and isinstance(error.get("exit"), int):
        raise RemoteError(
            str(error.get("code", "ERROR")),
            str(error.get("message", "search failed")),
            error["exit"],
            error.get("detail"),
        )
    return Fallback()  # not served (another environment, code changed, a bug there)


def start_after() -> None:
    """Start a resident, detached, when this process's search found none (call it once the
    answer is out: its start does not take this search's time)."""
    global _wanted
    if not _wanted:
        return
    _wanted = False
    spawn(run_dir(), socket_name())


def spawn(folder: Path, name: str) -> int | None:
    """Start ``python -m agentdex.api.search_resident_server`` in a session of its own, its
    output in ``<name>.log``: the pid, or None if it cannot be started. ``posix_spawn``:
    no ``subprocess`` to import, and no copy of this process's pages."""
    from agentdex.paths import ensure_private_dir

    try:
        ensure_private_dir(folder)
        log = os.open(
            folder / (name.removesuffix(".sock") + ".log"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
            0o600,
        )
    except OSError:
        return None
    import agentdex

    env = dict(os.environ)
    # the resident runs this very code, whatever the interpreter's own path says
    source = str(Path(agentdex.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    module = "agentdex.api.search_resident_server"
    argv = [sys.executable, "-m", module, "--socket", name, "--idle", str(idle_seconds())]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, log, 1),
        (os.POSIX_SPAWN_DUP2, log, 2),
    ]
    try:
        return os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    except (OSError, AttributeError, NotImplementedError):
        return None
    finally:
        os.close(log)


def _header(sock: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
    send(sock, request)
    return receive(sock)[0]


def status() -> dict[str, Any]:
    """Whether a resident searcher runs, and what it says (never starts one)."""
    keys = ("pid", "started", "last_used", "requests", "rss_mb")
    return sockets.status(
        run_dir(), socket_name(), _header, enabled=enabled(), idle=idle_seconds(), keys=keys
    )


def stop() -> bool:
    """Ask a running resident to exit now; True if one answered."""
    return sockets.stop(run_dir(), socket_name(), _header)

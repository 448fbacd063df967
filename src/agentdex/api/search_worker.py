"""Searches for long-running servers: in a worker process that can really be stopped.

A runaway regex holds the GIL inside one ``re.search`` call, so a search in
a server thread would freeze every other request (and ignore cancellation).
The HTTP and MCP surfaces therefore call :func:`search_in_worker`: the index
refresh runs here, then the search itself runs in a worker process, in *its* main
thread, where the budget's alarm can interrupt the regex
(:mod:`agentdex.search.budget`). The worker answers with the results it has;
cancelling sends it ``SIGUSR1`` (it stops and answers with what it found),
and a worker that does not answer within ``GRACE_SECONDS`` of its deadline is
killed — then the answer is a partial result with no results. Workers that
answered are kept (at most ``MAX_IDLE_WORKERS`` idle) for the next search.

Workers come from a fork server (``multiprocessing``'s ``forkserver``, with
the search modules preloaded), never forked from the threaded server
itself. A worker takes the caller's environment and working directory, so
it searches the same index the caller would.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from typing import Any

from agentdex.api.index import maybe_refresh
from agentdex.api.search import Budget, SearchResult, search, validate_query
from agentdex.errors import AgentdexError, BusyError, UsageError
from agentdex.tuning import env_float, env_int

#: How long past its deadline (or a cancel) a worker may take to answer before it is killed.
GRACE_SECONDS = 2.0
#: Time a fresh worker may need before its own clock starts (the fork server's first start).
STARTUP_SECONDS = 3.0
#: How often the waiting thread looks at the cancel flag.
POLL_SECONDS = 0.05
#: The signal a worker takes as "cancel": stop and answer with what you have.
CANCEL_SIGNAL = getattr(signal, "SIGUSR1", signal.SIGTERM)
#: Imported once in the fork server, so a worker starts warm (~100 ms saved per search).
_PRELOAD = [
    "agentdex.api.search_worker",
    "agentdex.search.engine",
    "agentdex.search.ranking",
    "agentdex.search.snippets",
    "agentdex.search.query",
    "agentdex.search.timeparse",
    "agentdex.search.fields",
    "agentdex.search.plan",
    "agentdex.search.run",
    "agentdex.index.postings",
    "tantivy",  # imported only (no index opened): forking after it is safe
]

_context_lock = threading.Lock()
_context: Any = None


def _mp_context() -> Any:
    """The multiprocessing context, with its fork server running and preloaded."""
    global _context
    with _context_lock:
        if _context is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                context: Any = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(_PRELOAD)
            else:  # Windows
                context = multiprocessing.get_context("spawn")
            _context = context
        if _context.get_start_method() == "forkserver":
            _ensure_fork_server()
        return _context


def _ensure_fork_server() -> None:
    """Start the fork server (if it is not running) importing *this* agentdex.

    On Python 3.11 the fork server ignores the caller's ``sys.path``; it
    starts from the environment, so ``PYTHONPATH`` is pointed at the
    directory this agentdex was imported from while it starts (a preloaded
    agentdex from another checkout would break the workers).
    """
    from multiprocessing import forkserver

    import agentdex

    package_root = os.path.dirname(os.path.dirname(os.path.abspath(agentdex.__file__)))
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, previous) if p)
    try:
        forkserver.ensure_running()
    finally:
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous


#: searches that may run at once in worker processes (HTTP and MCP); later ones queue ...
MAX_CONCURRENT_SEARCHES = env_int("AGENTDEX_MAX_SEARCHES", 4, minimum=1)
#: ... this many seconds for a slot, then are refused (HTTP 429 with Retry-After)
QUEUE_SECONDS = env_float("AGENTDEX_SEARCH_QUEUE_SECONDS", 5.0)
#: the longest a search may hold a slot (a larger ``time_budget`` is cut to it; the CLI,
#: which runs in its own process, keeps ``[search] time_budget``'s 3600 s maximum)
MAX_SECONDS = 60.0
_slots = threading.BoundedSemaphore(MAX_CONCURRENT_SEARCHES)


def search_in_worker(
    query: str,
    *,
    home: str | None = None,
    refresh_first: bool = True,
    time_budget: float | None = None,
    cancel: threading.Event | None = None,
    team_url: str | None = None,
    team: bool = False,
    **options: Any,
) -> SearchResult:
    """:func:`agentdex.api.search.search` in a worker process, stoppable however it runs.

    ``time_budget`` defaults to ``[search] time_budget``; ``cancel`` set by
    another thread stops the search (status ``partial``, ``stopped:
    "cancelled"``). ``options`` are the search's own keyword arguments.
    ``team`` (or a ``team_url``) searches the team database instead
    (:func:`agentdex.api.team.search`; no local refresh).
    """
    from agentdex.search.budget import default_seconds

    check = validate_query(
        query, regex=options.get("regex", False), word=options.get("word", False)
    )
    if not check.valid:
        raise UsageError(check.error or "invalid query")
    seconds = min(default_seconds() if time_budget is None else time_budget, MAX_SECONDS)
    if not _slots.acquire(timeout=QUEUE_SECONDS):
        raise BusyError(
            f"{MAX_CONCURRENT_SEARCHES} searches are already running; try again shortly",
            retry_after=max(1, round(min(seconds, QUEUE_SECONDS))),
        )
    try:
        where = (home, refresh_first, team or team_url is not None, team_url)
        return _search_in_slot(query, where, seconds, cancel, options)
    finally:
        _slots.release()


def _search_in_slot(
    query: str,
    where: tuple[str | None, bool, bool, str | None],
    seconds: float,
    cancel: threading.Event | None,
    options: dict[str, Any],
) -> SearchResult:
    """The search, holding a slot: ``where`` is (home, refresh first, team, team URL)."""
    home, refresh_first, team, team_url = where
    refresh_stats: dict[str, Any] = {}
    if team:
        from agentdex.api.team import settings

        settings(team_url, "-")  # a missing or bad URL is a usage error here, not in the worker
        if options.get("mode") == "semantic":
            raise UsageError("search by meaning uses this machine's embeddings: not the team's")
        # the team database is searched exactly (hybrid falls back to lexical there)
        options = {k: v for k, v in options.items() if k not in ("here", "only_here", "mode")}
    else:
        maybe_refresh(refresh_first, None, home, None, refresh_stats)
        options = {**options, "home": home}
    request = {
        "query": query,
        "team": team,
        "team_url": team_url,
        "options": options,
        "seconds": seconds,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
    }
    answer = _run_worker(request, seconds, cancel)
    if answer is None:  # killed: it did not stop by itself
        reason = "cancelled" if cancel is not None and cancel.is_set() else "time-budget"
        result = SearchResult(query=query, status="partial")
        result.stats.update(
            {
                "total": 0,
                "returned": 0,
                "time_budget": seconds,
                "stopped": reason,
                "worker": "killed: it did not stop within the grace period",
            }
        )
    else:
        result = _result_of(query, answer)
    for key, value in refresh_stats.items():
        result.stats.setdefault(key, value)
    return result


def _result_of(query: str, answer: tuple[Any, ...]) -> SearchResult:
    kind = answer[0]
    if kind == "ok":
        data: dict[str, Any] = answer[1]
        return SearchResult(
            query=data["query"],
            status=data["status"],
            results=data["results"],
            stats=data["stats"],
            highlights=answer[2] if len(answer) > 2 else [],
            coverage=data.get("coverage"),  # a first build's answer says how much it held
        )
    if kind == "error":
        _, class_name, message, detail = answer
        raise _error_class(class_name)(message, detail=detail)
    raise AgentdexError(f"search failed in its worker process: {answer[1]}")


def _error_class(name: str) -> type[AgentdexError]:
    """The AgentdexError subclass the worker raised (same exit code and code), by name."""
    pending: list[type[AgentdexError]] = [AgentdexError]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name:
            return cls
        pending.extend(cls.__subclasses__())
    return AgentdexError


class _Worker:
    """One worker process, answering search requests on its pipe until the pipe closes."""

    def __init__(self, context: Any) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_loop, args=(child,), daemon=True)
        self.process.start()
        child.close()

    def discard(self) -> None:
        """Close the pipe (an idle worker then exits) and kill it if it is busy or stuck."""
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)


#: Idle workers kept for the next searches (each started ones costs ~40 ms).
MAX_IDLE_WORKERS = 2
_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def _take_worker() -> _Worker:
    with _idle_lock:
        while _idle:
            worker = _idle.pop()
            if worker.process.is_alive():
                return worker
            worker.discard()
    return _Worker(_mp_context())


def _give_back(worker: _Worker) -> None:
    with _idle_lock:
        if len(_idle) < MAX_IDLE_WORKERS:
            _idle.append(worker)
            return
    worker.discard()


def _run_worker(
    request: dict[str, Any], seconds: float, cancel: threading.Event | None
) -> tuple[Any, ...] | None:
    """The worker's answer, or None when it had to be killed.

    A worker that answered goes back to the idle pool; one that was killed,
    died or stopped answering is discarded.
    """
    worker = _take_worker()
    try:
        worker.conn.send(request)
    except (BrokenPipeError, OSError):  # it died while idle: one fresh try
        worker.discard()
        worker = _Worker(_mp_context())
        worker.conn.send(request)
    kill_at = time.monotonic() + seconds + GRACE_SECONDS + STARTUP_SECONDS
    cancelled = False
    answer: tuple[Any, ...] | None = None
    try:
        while True:
            if worker.conn.poll(POLL_SECONDS):
                try:
                    answer = worker.conn.recv()
                except EOFError:
                    return _died(worker.process)
                return answer
            if cancel is not None and cancel.is_set() and not cancelled:
                cancelled = True
                _signal(worker.process, CANCEL_SIGNAL)
                kill_at = min(kill_at, time.monotonic() + GRACE_SECONDS)
            if time.monotonic() >= kill_at:
                return None
    finally:
        if answer is not None:
            _give_back(worker)
        else:
            worker.discard()


def _died(process: Any) -> tuple[Any, ...] | None:
    process.join(1.0)
    if process.exitcode == -CANCEL_SIGNAL:  # cancelled before it could install its handler
        return None
    return ("crash", f"worker exited with status {process.exitcode}")


def _signal(process: Any, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, TypeError):
        os.kill(process.pid, signum)


def _worker_loop(conn: Any) -> None:
    """In a worker: answer requests in this process's main thread until the pipe closes."""
    from agentdex.search.budget import cancel_on_signal

    cancel_on_signal(Budget(None), CANCEL_SIGNAL)  # a cancel before the first request
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(_answer(request))


def _answer(request: dict[str, Any]) -> tuple[Any, ...]:
    """One search, as a picklable answer; the cancel signal stops this request's budget."""
    from agentdex.search.budget import cancel_on_signal

    budget = Budget(request["seconds"])
    cancel_on_signal(budget, CANCEL_SIGNAL)
    os.environ.clear()
    os.environ.update(request["env"])
    with contextlib.suppress(OSError):  # the caller's directory is gone: search anyway
        os.chdir(request["cwd"])
    try:
        if request.get("team"):
            from agentdex.api import team

            result = team.search(
                request["query"], url=request["team_url"], budget=budget, **request["options"]
            )
        else:
            result = search(
                request["query"], refresh_first=False, budget=budget, **request["options"]
            )
        return ("ok", result.to_json(), result.highlights)
    except AgentdexError as exc:
        return ("error", type(exc).__name__, exc.message, exc.detail)
    except Exception as exc:  # reported to the caller, which raises it as a failure
        return ("crash", f"{type(exc).__name__}: {exc}")

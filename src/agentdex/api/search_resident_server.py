"""The resident searcher's process: ``python -m agentdex.api.search_resident_server``.

Started by :func:`agentdex.api.search_resident.start_after` (see there). It lives as
the resident embedder does (:class:`agentdex.semantic.resident_server.Resident`: one
per socket name and data dir under ``<socket>.lock``, the socket bound before anything
slow, only peers of its own uid, gone after ``--idle`` seconds without a request,
when its socket is removed or replaced, on ``stop`` or SIGTERM), but answers in its
main thread, one search at a time: a search's time budget is enforced with
``SIGALRM`` (:func:`agentdex.search.budget.enforced`), which only the main thread
receives. A second search waits for the first.

Each search is :func:`agentdex.api.search.answer_now`: the index opened afresh (its
current generation, one read snapshot), so whatever another process committed
before is what it reads. The semantic half asks the resident embedder, as a CLI
search does (the model and the mapped vectors stay in that process: one copy for
both, the scan on the other core while this process runs the lexical half). What
this process caches is dropped before each search (``git_info``, for ``--here``).
A module file of agentdex changed on disk since it started (a checkout, an
upgrade) makes it refuse the search and leave: its client searches itself.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from agentdex.api import search_resident as wire
from agentdex.errors import AgentdexError
from agentdex.semantic.resident_server import Resident, _same_user

#: how long a client may take to send its request, and to read the answer
REQUEST_SECONDS = 5.0
ANSWER_SECONDS = 60.0
#: a time budget above this is refused (the client searches itself)
MAX_SECONDS = 3600.0


class SearchResident(Resident):
    def __init__(self, folder: Path, name: str, idle: float) -> None:
        super().__init__(folder, name, "search", idle)
        self.digest = wire.environment_digest()
        self.stamp = wire.code_stamp()
        self.born = time.time_ns()

    # -- life (the rest is Resident's) --------------------------------------------------------

    def _load(self) -> None:
        """Import what a search needs while the first client connects."""
        try:
            import tantivy  # noqa: F401

            from agentdex.api import search, semantic_search  # noqa: F401
            from agentdex.api.semantic import use_resident_embedder
            from agentdex.search import engine, run  # noqa: F401

            use_resident_embedder()  # the model and the vectors stay in that one process
        except ImportError as exc:
            self.error = f"cannot import the search: {exc}"
        self.ready.set()

    def _serve(self, listener: socket.socket) -> None:
        while not self.done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if self._should_exit():
                    return
                continue
            except OSError:
                return
            self._serve_one(conn)

    def _serve_one(self, conn: socket.socket) -> None:
        with conn:
            try:
                if not _same_user(conn):
                    return
                conn.settimeout(REQUEST_SECONDS)
                request = wire.receive(conn)
                answer = self._answer(request)
                conn.settimeout(ANSWER_SECONDS)
                wire.send(conn, answer)
            except (OSError, ValueError):
                return
            finally:
                self.last = time.monotonic()

    # -- requests ------------------------------------------------------------------------------

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        op = request.get("op")
        if op == "status":
            return self._status()
        if op == "stop":
            self.done.set()
            return {"ok": True}
        if op == "search":
            return self._search(request)
        return {"ok": False, "fallback": f"unknown op {op!r}"}

    def _status(self) -> dict[str, Any]:
        info = super()._status()
        info.pop("model", None)
        info.pop("loaded", None)
        return info

    def _search(self, request: dict[str, Any]) -> dict[str, Any]:
        query, seconds, options = (request.get(k) for k in ("query", "seconds", "options"))
        if request.get("stamp") != self.stamp:
            return {"ok": False, "fallback": "another agentdex"}
        if request.get("env") != self.digest:
            return {"ok": False, "fallback": "another environment"}
        if (
            not isinstance(query, str)
            or not (
                seconds is None
                or (
                    isinstance(seconds, int | float)
                    and not isinstance(seconds, bool)
                    and 0 < seconds <= MAX_SECONDS
                )
            )
            or not isinstance(options, dict)
            or set(options) != set(wire.OPTIONS)
            or any(not isinstance(v, wire.OPTIONS[k]) for k, v in options.items())
            or any(isinstance(options[k], bool) for k in ("limit", "now"))
        ):
            return {"ok": False, "fallback": "malformed search request"}
        if not wire.servable(options["home"]) or (
            options["here"] is not None and not os.path.isabs(options["here"])
        ):
            return {"ok": False, "fallback": "a relative path"}
        self.ready.wait()
        if self.error is not None:
            return {"ok": False, "fallback": self.error}
        if self._changed_code():
            self.done.set()  # leave: the next search starts one of the new code
            return {"ok": False, "fallback": "agentdex changed on disk"}
        self.requests += 1
        from agentdex.api.search import answer_now
        from agentdex.gitinfo import git_info

        git_info.cache_clear()  # a repository moved or a worktree added since the last search
        try:
            result = answer_now(query, seconds, root=None, **options)
        except AgentdexError as exc:
            error = {"code": exc.code, "message": exc.message, "exit": exc.exit_code}
            if exc.detail is not None:
                error["detail"] = exc.detail
            return {"ok": False, "error": error}
        except Exception as exc:  # a bug: the client searches itself (and says what it is)
            print(f"search failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            return {"ok": False, "fallback": f"resident failed: {type(exc).__name__}"}
        return {"ok": True, "result": result.to_json(), "highlights": result.highlights}

    def _changed_code(self) -> bool:
        """Was a module file of agentdex this process runs written after it started?"""
        for name, module in list(sys.modules.items()):
            if not name.startswith("agentdex"):
                continue
            path = getattr(module, "__file__", None)
            try:
                if path and os.stat(path).st_mtime_ns > self.born:
                    return True
            except OSError:
                return True  # removed
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentdex-resident-search")
    parser.add_argument("--socket", required=True, help="socket file name, in the run dir")
    parser.add_argument("--idle", type=float, default=wire.IDLE_SECONDS)
    args = parser.parse_args(argv)
    if "/" in args.socket or args.socket.startswith("."):
        parser.error("--socket is a file name in the run dir")
    folder = wire.run_dir()
    if not folder.is_dir():
        print(f"no run dir {folder}", file=sys.stderr)
        return 1
    os.chdir(folder)
    server = SearchResident(folder, args.socket, max(args.idle, 0.5))
    signal.signal(signal.SIGTERM, _leave)
    code = server.run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _leave(*_: Any) -> None:
    raise SystemExit(0)  # through run()'s cleanup: the socket is removed


if __name__ == "__main__":
    raise SystemExit(main())

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
import contextlib
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.api import search_resident as wire
from agentdex.errors import AgentdexError
from agentdex.semantic import framing
from agentdex.semantic.resident_server import MainThreadResident, serve

if TYPE_CHECKING:
    from agentdex.ingest.manifest import KeptCheck

#: a time budget above this is refused (the client searches itself)
MAX_SECONDS = 3600.0


class SearchResident(MainThreadResident):
    def __init__(self, folder: Path, name: str, idle: float) -> None:
        super().__init__(folder, name, "search", idle)
        self.digest = wire.environment_digest()
        self.stamp = wire.code_stamp()
        self.born = time.time_ns()
        self.kept: KeptCheck | None = None
        #: the checker process's end (:func:`fork_checker`), None: check in a thread
        self.checker: socket.socket | None = None

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

    def _receive(self, conn: socket.socket) -> dict[str, Any]:
        return wire.receive(conn)[0]

    def _send(self, conn: socket.socket, answer: dict[str, Any]) -> None:
        body = answer.pop("body", b"")  # the bytes after the header (see wire.send)
        wire.send(conn, answer, body)

    # -- requests ------------------------------------------------------------------------------

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
            or not isinstance(request.get("check", False), bool)
            or request.get("render") not in (None, "json", "ndjson")
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
        check = None
        if request.get("check") is True:  # the client forked no check: this one is it
            check = _Check(self, options["home"])
        try:
            cancel = None if check is None else check.changed
            result = answer_now(query, seconds, cancel, root=None, **options)
        except AgentdexError as exc:
            if check is not None and check.wait():  # changed: the search there refreshes
                return {"ok": False, "changed": check.found["changed"]}
            error = {"code": exc.code, "message": exc.message, "exit": exc.exit_code}
            if exc.detail is not None:
                error["detail"] = exc.detail
            return {"ok": False, "error": error}
        except Exception as exc:  # a bug: the client searches itself (and says what it is)
            if check is not None:
                check.wait()
            print(f"search failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            return {"ok": False, "fallback": f"resident failed: {type(exc).__name__}"}
        refresh = None
        if check is not None:
            if check.wait():
                return {"ok": False, "changed": check.found["changed"]}
            refresh = check.found
        return _answered(result, refresh, request.get("render"))

    def check(self, home: str | None) -> dict[str, Any]:
        """The search's no-change check, here (:class:`agentdex.ingest.manifest.KeptCheck`,
        started after the request came, so after the client started): ``stats.refresh``
        when nothing changed, else ``{"changed": ...}`` with what
        :func:`agentdex.api.search_resident.search` hands its own search to refresh
        (the changed store files' parts as the forked check sends them; None: only
        discovery knows)."""
        from agentdex.index.store import index_root
        from agentdex.ingest.manifest import KeptCheck

        started = time.monotonic()
        if self.kept is None:
            self.kept = KeptCheck()
        files, changes = self.kept.check(Path(index_root(None, home=home)), home)
        return _found(files, changes, started)

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


def _answered(result: Any, refresh: dict[str, Any] | None, render: Any) -> dict[str, Any]:
    """A search's answer: ``--json`` / ``--ndjson`` printed here as the CLI prints them
    (:mod:`agentdex.api.json_text`; its check's line first in ``stats``), else the result
    for the client to print; the JSON goes in ``body``, after the header."""
    from agentdex.api.json_text import json_bytes, json_document, ndjson_line

    data = result.to_json()
    answer: dict[str, Any] = {"ok": True}
    if render in ("json", "ndjson"):
        if refresh is not None:  # as api.search puts its check's line first
            data["stats"] = {"refresh": refresh, **data.get("stats", {})}
        if render == "json":
            answer["body"] = json_document(data)
        else:
            answer["body"] = b"".join(ndjson_line(item) for item in data["results"])
        answer.update(printed=True, status=data.get("status", "ok"), found=bool(data["results"]))
        if answer["status"] == "partial":
            answer.update(stats=data["stats"], coverage=data.get("coverage"))
        return answer
    if refresh is not None:
        answer["refresh"] = refresh
    answer["body"] = json_bytes({"result": data, "highlights": result.highlights})
    return answer


class _Check:
    """The no-change check beside the search, started before the search opens the index:
    in the checker process when there is one (:func:`fork_checker`: the other core, no
    share of this interpreter), else in a thread (its ``stat`` calls leave the interpreter
    to the search; its Python does not). A change found by the thread cancels the
    search at once (``changed``); the checker's answer is read after it."""

    def __init__(self, resident: SearchResident, home: str | None) -> None:
        self.changed = threading.Event()
        self.found: dict[str, Any] = {}
        self._resident, self._home = resident, home
        self._thread: threading.Thread | None = None
        self._asked = resident.checker is not None and _ask_checker(resident.checker, home)
        if not self._asked:
            resident.checker = None
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self.found = self._resident.check(self._home)
        except Exception as exc:  # a bug: say so, and let the client search itself
            print(f"check failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            self.found = {"changed": None}
        if "changed" in self.found:
            self.changed.set()

    def wait(self) -> bool:
        """Wait for the check: True if something changed (or it could not tell)."""
        if self._asked:
            checker = self._resident.checker
            found = None if checker is None else _checker_answer(checker)
            if found is None:  # the checker is gone: check here, now
                self._resident.checker = None
                self._run()
            else:
                self.found = found
        elif self._thread is not None:
            self._thread.join()
        return "changed" in self.found


#: the longest the resident waits for its checker's answer before checking itself
CHECKER_SECONDS = 30.0


def fork_checker() -> socket.socket | None:
    """Fork the checker: a child that runs the no-change check for each request (its
    manifest kept parsed, :class:`agentdex.ingest.manifest.KeptCheck`) and leaves when
    the resident closes its end. Forked before the resident starts a thread."""
    from agentdex.ingest.manifest import KeptCheck

    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None
    if pid == 0:  # the child
        status = 1
        try:
            ours.close()
            status = _checker_loop(theirs, KeptCheck())
        finally:
            os._exit(status)
    theirs.close()
    threading.Thread(target=_reap, args=(pid,), daemon=True).start()
    return ours


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _checker_loop(conn: socket.socket, kept: Any) -> int:
    """The checker's life: a request (the home), its answer, until the resident closes."""
    from agentdex.index.store import index_root

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        try:
            request, _ = framing.receive(conn, wire.MAX_MESSAGE)
        except (OSError, ValueError):  # the resident closed its end (or a bug): leave
            return 0
        home = request.get("home")
        started = time.monotonic()
        try:
            files, changes = kept.check(Path(index_root(None, home=home)), home)
        except Exception as exc:  # a bug: the search here says it cannot tell
            print(f"check failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            files, changes = None, None
        framing.send(conn, _found(files, changes, started))


def _found(files: int | None, changes: Any, started: float) -> dict[str, Any]:
    """``stats.refresh`` when nothing changed, else ``{"changed": ...}`` (see ``check``)."""
    if files is None:
        if changes is None:
            return {"changed": None}
        return {"changed": {"stamp": changes.stamp, "now": changes.now, "sources": changes.sources}}
    seconds = round(time.monotonic() - started, 4)
    return {"seconds": seconds, "files_parsed": 0, "files_removed": 0, "records_added": 0}


def _ask_checker(checker: socket.socket, home: str | None) -> bool:
    try:
        framing.send(checker, {"home": home})
    except OSError:
        return False
    return True


def _checker_answer(checker: socket.socket) -> dict[str, Any] | None:
    try:
        checker.settimeout(CHECKER_SECONDS)
        found, _ = framing.receive(checker, wire.MAX_MESSAGE)
    except (OSError, ValueError):
        return None
    return found


def main(argv: list[str] | None = None) -> int:
    def make(args: argparse.Namespace, folder: Path) -> SearchResident:
        os.chdir(folder)
        checker = fork_checker()  # before any thread
        server = SearchResident(folder, args.socket, args.idle)
        server.checker = checker
        return server

    return serve(argv, "agentdex-resident-search", wire.IDLE_SECONDS, make)


if __name__ == "__main__":
    raise SystemExit(main())

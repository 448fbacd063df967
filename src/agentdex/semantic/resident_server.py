"""The resident embedder's process: ``python -m agentdex.semantic.resident_server``.

Started by :func:`agentdex.semantic.resident.embed` (never by hand, though it
does no harm). One per model and data dir: it takes ``<socket>.lock`` first
and leaves quietly when another holds it. It binds its socket (0600, in the
0700 run dir) before it loads the model, so the client that started it waits
on its first answer rather than polling; a model that cannot run is answered
as that one-line error, and the process then exits. It answers ``embed``,
``nearest`` (embed a query and scan a vector store for it), ``records``
(``nearest``, then the store's records and titles holding what it found: a
CLI search's whole semantic half but the live check), ``status`` and
``stop``, only to peers of its own uid, and exits after
``--idle`` seconds without a request, when its socket is removed or replaced,
or on SIGTERM.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import signal
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from agentdex.semantic import resident, sockets
from agentdex.semantic.model import DEFAULT, SPECS, Embedder, ModelUnavailable

#: how often an idle resident wakes to look at its socket and its idle time
TICK = 5.0
#: how long a connection may take to send its request
REQUEST_SECONDS = 5.0
#: how long a client of a searcher may take to read its answer
ANSWER_SECONDS = 60.0
#: how long a starting resident waits for one that holds the lock but does not answer
TAKEOVER_SECONDS = 10.0
#: a query is cut to this many characters before it is embedded (its first 128 tokens count)
MAX_TEXT = 4_000
MAX_TEXTS = 64
#: most contents one ``nearest`` returns; vector stores kept mapped between requests
MAX_TOP = 5_000
MAPPED = 4
_VFILE = re.compile(r"vec-[0-9]{6,}")


class Resident:
    def __init__(self, folder: Path, name: str, model: str, idle: float) -> None:
        self.folder, self.name, self.model, self.idle = folder, name, model, idle
        self.started = time.time()
        self.last = time.monotonic()
        self.requests = 0
        self.embedder: Embedder | None = None
        self.error: str | None = None
        self.ready = threading.Event()
        self.done = threading.Event()
        self.inode: tuple[int, int] | None = None
        self.handlers: set[threading.Thread] = set()
        self.listener: socket.socket | None = None
        #: (store folder, vfile, device, inode) -> its rows mapped (``nearest``), newest last
        self.mapped: dict[tuple[str, str, int, int], Any] = {}
        self.mapping = threading.Lock()
        #: (store folder, device, inode of vectors.db) -> its SQLite kept open (``records``)
        self.stores: dict[tuple[str, int, int], _Store] = {}
        self.opening = threading.Lock()

    # -- life ---------------------------------------------------------------------------

    def run(self) -> int:
        os.umask(0o077)
        lock = os.open(self.folder / (self.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if not self._take(lock):
                return 0  # another resident serves this socket
            listener = self._bind()
            threading.Thread(target=self._load, name="load", daemon=True).start()
            try:
                self._serve(listener)
            finally:
                listener.close()
                self._unlink()
                for thread in list(self.handlers):
                    thread.join(REQUEST_SECONDS)
        finally:
            os.close(lock)
        return 0

    def _take(self, lock: int) -> bool:
        """The lock, unless a live resident answers on the socket. A resident that holds
        the lock without answering is starting (it binds soon) or leaving (it lets go
        soon): wait for either."""
        deadline = time.monotonic() + TAKEOVER_SECONDS
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
            sock = sockets.connect(self.folder, self.name, 1.0)
            if sock is not None:
                sock.close()
                return False
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)

    def _bind(self) -> socket.socket:
        dir_fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with suppress(FileNotFoundError):  # a resident that died left it
                os.unlink(self.name, dir_fd=dir_fd)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            with sockets.address(self.folder, self.name) as where:
                listener.bind(where)
            os.chmod(self.name, 0o600, dir_fd=dir_fd)
            st = os.stat(self.name, dir_fd=dir_fd)
            self.inode = (st.st_dev, st.st_ino)
        finally:
            os.close(dir_fd)
        listener.listen(16)
        listener.settimeout(min(TICK, self.idle))
        self.listener = listener
        return listener

    def _load(self) -> None:
        try:
            self.embedder = Embedder(SPECS[self.model], threads=1)
            self.embedder.embed(["warm up"])  # the first run allocates; keep that off a query
        except ModelUnavailable as exc:
            self.error = exc.message
        except Exception as exc:  # onnxruntime's own errors: say it, then leave
            self.error = f"cannot run the embedding model: {type(exc).__name__}: {exc}"
        self.last = time.monotonic()  # idle time counts from ready, not from start
        self.ready.set()

    def _serve(self, listener: socket.socket) -> None:
        while not self.done.is_set():
            if self.ready.is_set() and self.error is not None:
                # answer the clients already waiting with the error, then leave
                self.done.set()
                listener.settimeout(0.2)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if self.done.is_set() or self._should_exit():
                    return
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            self.handlers.add(thread)
            thread.start()

    def _should_exit(self) -> bool:
        # idle only once loaded: the client that started it may not have connected yet
        # (a loaded machine), and leaving then would make it start another one
        if self.ready.is_set() and time.monotonic() - self.last > self.idle:
            return True
        try:
            st = os.stat(self.folder / self.name)
        except OSError:
            return True  # the data dir or the socket was removed
        return (st.st_dev, st.st_ino) != self.inode  # another resident took the name

    def _unlink(self) -> None:
        with suppress(OSError):
            st = os.stat(self.folder / self.name)
            if (st.st_dev, st.st_ino) == self.inode:
                os.unlink(self.folder / self.name)

    # -- requests ------------------------------------------------------------------------

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                if not sockets.same_user(conn):
                    return
                conn.settimeout(REQUEST_SECONDS)
                request, _ = resident.receive(conn)
                header, payload = self._answer(request)
                resident.send(conn, header, payload)
                if request.get("op") == "stop" and self.listener is not None:
                    self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept() at once
            except (OSError, ValueError):
                return
            finally:
                self.last = time.monotonic()
                self.handlers.discard(threading.current_thread())

    def _answer(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        op = request.get("op")
        if op == "status":
            return self._status(), b""
        if op == "stop":
            self.done.set()
            return {"ok": True}, b""
        if op == "nearest":
            return self._nearest(request)
        if op == "records":
            return self._records(request)
        if op != "embed":
            return {"ok": False, "error": f"unknown op {op!r}"}, b""
        texts = request.get("texts")
        if (
            request.get("model") != self.model
            or not isinstance(texts, list)
            or not 0 < len(texts) <= MAX_TEXTS
            or not all(isinstance(t, str) for t in texts)
        ):
            return {"ok": False, "error": "malformed embed request"}, b""
        self.ready.wait()
        if self.embedder is None:
            error = self.error or "the embedding model did not load"
            return {"ok": False, "code": ModelUnavailable.code, "error": error}, b""
        self.requests += 1
        vectors = self.embedder.embed([t[:MAX_TEXT] for t in texts])
        return {"ok": True, "shape": list(vectors.shape)}, vectors.astype("<f4").tobytes()

    def _nearest(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Embed ``text`` and return the ``top`` closest contents of the first ``rows``
        rows of ``store/vfile`` (:func:`agentdex.semantic.query.best_rows`)."""
        text, folder, name = request.get("text"), request.get("store"), request.get("vfile")
        rows, top = request.get("rows"), request.get("top")
        if (
            request.get("model") != self.model
            or not isinstance(text, str)
            or not isinstance(folder, str)
            or not os.path.isabs(folder)
            or not isinstance(name, str)
            or not _VFILE.fullmatch(name)
            or not isinstance(rows, int)
            or not 0 <= rows < 1 << 40
            or not isinstance(top, int)
            or not 0 < top <= MAX_TOP
        ):
            return {"ok": False, "error": "malformed nearest request"}, b""
        vector = self._query_vector(text)
        if isinstance(vector, dict):
            return vector, b""
        from agentdex.semantic.query import best_rows

        if rows == 0:
            return {"ok": True, "ckeys": [], "sims": []}, b""
        try:
            mapped = self._rows(folder, name, rows)
            best = best_rows(mapped, vector, top)
        except (OSError, ValueError):
            return {"ok": False, "error": "cannot read that vector store"}, b""
        sims = [round(sim, 6) for sim in best.values()]
        return {"ok": True, "ckeys": list(best), "sims": sims}, b""

    def _query_vector(self, text: str) -> Any:
        """The query's vector once the model is loaded, or the error reply to send
        (a dict) when it did not load; counts the request."""
        self.ready.wait()
        if self.embedder is None:
            error = self.error or "the embedding model did not load"
            return {"ok": False, "code": ModelUnavailable.code, "error": error}
        self.requests += 1
        return self.embedder.embed([text[:MAX_TEXT]])[0]

    def _records(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """Embed ``text``, scan the store in ``store`` for the ``top`` closest contents and
        read the records and titles holding them (:func:`agentdex.semantic.resident.records`);
        ``linked`` false when the store is not linked to ``generation``."""
        text, folder, generation = (request.get(k) for k in ("text", "store", "generation"))
        top = request.get("top")
        if (
            request.get("model") != self.model
            or not isinstance(text, str)
            or not isinstance(folder, str)
            or not os.path.isabs(folder)
            or not isinstance(generation, str)
            or not isinstance(top, int)
            or not 0 < top <= MAX_TOP
        ):
            return {"ok": False, "error": "malformed records request"}, b""
        vector = self._query_vector(text)
        if isinstance(vector, dict):
            return vector, b""
        from agentdex.semantic.query import best_rows

        try:
            with self._store(folder) as view:
                if view is None:
                    return {"ok": True, "linked": False}, b""
                linked, count, name, searched = view.state(generation)
                if not linked:
                    return {"ok": True, "linked": False}, b""
                best = best_rows(self._rows(folder, name, count), vector, top) if count else {}
                # the cosines as ``nearest`` sends them (the order ties take is the same)
                best = {ckey: round(sim, 6) for ckey, sim in best.items()}
                near = view.vectors(count, name).records(best)
        except (OSError, ValueError, sqlite3.DatabaseError):
            return {"ok": False, "error": "cannot read that vector store"}, b""
        return {
            "ok": True,
            "linked": True,
            "searched": searched,
            "rids": [n.rid for n in near],
            "thashes": [n.thash for n in near],
            "ckeys": [n.ckey for n in near],
            "sims": [n.similarity for n in near],
            "titles": [n.title for n in near],
        }, b""

    @contextmanager
    def _store(self, folder: str) -> Iterator[_Store | None]:
        """The store in ``folder``, its SQLite kept open between requests (reopened when
        ``vectors.db`` was replaced), used by one request at a time; None without one."""
        path = Path(folder) / "vectors.db"
        try:
            st = os.stat(path)
        except FileNotFoundError:
            yield None
            return
        key = (folder, st.st_dev, st.st_ino)
        with self.opening:
            view = self.stores.pop(key, None)
            if view is None:
                view = _Store.open(Path(folder), SPECS[self.model].dim)
            if view is not None:
                self.stores[key] = view
            while len(self.stores) > MAPPED:
                self.stores.pop(next(iter(self.stores))).close()
        if view is None:
            yield None
            return
        with view.lock:
            yield view

    def _rows(self, folder: str, name: str, rows: int) -> Any:
        """The store's rows, mapped once and kept (remapped when the count or the file
        changed: a store removed and filled again under the same name)."""
        from agentdex.semantic.model import SPECS
        from agentdex.semantic.store import map_rows

        st = os.stat(Path(folder) / name / "q4")
        key = (folder, name, st.st_dev, st.st_ino)
        with self.mapping:
            mapped = self.mapped.pop(key, None)
            if mapped is None or len(mapped) != rows:
                mapped = map_rows(Path(folder), name, rows, SPECS[self.model].dim)
            self.mapped[key] = mapped
            while len(self.mapped) > MAPPED:
                self.mapped.pop(next(iter(self.mapped)))
            return mapped

    def _status(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "ok": True,
            "pid": os.getpid(),
            "model": self.model,
            "started": round(self.started, 3),
            "last_used": round(time.time() - (time.monotonic() - self.last), 3),
            "requests": self.requests,
            "idle": self.idle,
            "loaded": self.embedder is not None,
        }
        if self.error:
            info["error"] = self.error
        with suppress(OSError, ValueError), open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    info["rss_mb"] = round(int(line.split()[1]) / 1024, 1)
        return info


class MainThreadResident(Resident):
    """A resident that answers in its main thread, one request at a time: the searchers
    (a search's time budget is ``SIGALRM``, which only the main thread receives, and a
    second search waits for the first). Subclasses read and write their own messages
    (:meth:`_receive`, :meth:`_send`) and answer ``search`` (:meth:`_search`)."""

    def _serve(self, listener: socket.socket) -> None:
        try:
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
        finally:
            self._closing()

    def _closing(self) -> None:
        """What to release once the resident stops serving (nothing here)."""

    def _serve_one(self, conn: socket.socket) -> None:
        with conn:
            try:
                if not sockets.same_user(conn):
                    return
                conn.settimeout(REQUEST_SECONDS)
                answer = self._answer(self._receive(conn))
                conn.settimeout(ANSWER_SECONDS)
                self._send(conn, answer)
            except (OSError, ValueError):
                return
            finally:
                self.last = time.monotonic()

    def _receive(self, conn: socket.socket) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, conn: socket.socket, answer: dict[str, Any]) -> None:
        raise NotImplementedError

    def _search(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

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


class _Store:
    """A vector store's SQLite as the resident keeps it open, and its member count (cached
    until another connection commits: ``PRAGMA data_version``)."""

    def __init__(self, folder: Path, db: sqlite3.Connection, dim: int) -> None:
        self.folder, self.db, self.dim = folder, db, dim
        self.lock = threading.Lock()
        self._counted: tuple[int, int] | None = None  # (data_version, members)
        self._vectors: Any = None

    @classmethod
    def open(cls, folder: Path, dim: int) -> _Store | None:
        from agentdex.semantic import store

        db = store.connect(folder, create=False)
        return None if db is None else cls(folder, db, dim)

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def state(self, generation: str) -> tuple[bool, int, str, int]:
        """(linked to ``generation``?, committed rows, their files' folder, members)."""
        from agentdex.semantic import store

        if store.get_meta(self.db, "generation") != generation:
            return False, 0, "", 0
        version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
        if self._counted is None or self._counted[0] != version:
            members = int(self.db.execute("SELECT count(*) FROM members").fetchone()[0])
            self._counted = (version, members)
        return True, store.committed_rows(self.db), store.vfile(self.db), self._counted[1]

    def vectors(self, count: int, name: str) -> Any:
        """A :class:`~agentdex.semantic.query.VectorIndex` over this connection (unmapped:
        the rows are the resident's own mapping) to read records with."""
        from agentdex.semantic.query import VectorIndex

        if self._vectors is None:
            self._vectors = VectorIndex(self.folder, self.db, None, self.dim, count=count)
        self._vectors.count, self._vectors.vfile = count, name
        return self._vectors


#: numpy's BLAS runs on one thread here (set before numpy is imported): a scan's one
#: matrix-vector product (4,000 x 384) took ~8 ms of two cores with OpenBLAS's default
#: threads, spinning on the core the search process needs, against ~0.3 ms on one (the
#: same products, bit for bit)
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def main(argv: list[str] | None = None) -> int:
    os.environ.update(BLAS_THREADS)  # before the model's thread imports numpy

    def model(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--model", default=DEFAULT.id, choices=sorted(SPECS))

    return serve(
        argv,
        "agentdex-resident-embedder",
        resident.IDLE_SECONDS,
        lambda args, folder: Resident(folder, args.socket, args.model, args.idle),
        options=model,
    )


def serve(
    argv: list[str] | None,
    prog: str,
    idle: float,
    make: Callable[[argparse.Namespace, Path], Resident],
    *,
    options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> int:
    """A resident process's ``main``: ``--socket NAME`` (a file name in the run dir),
    ``--idle SECONDS`` (at least 0.5) and ``options``' own; then the resident ``make``
    returns runs until it leaves. SIGTERM leaves through its clean-up (the socket is
    removed), and the process exits without the interpreter's slow teardown."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--socket", required=True, help="socket file name, in the run dir")
    if options is not None:
        options(parser)
    parser.add_argument("--idle", type=float, default=idle)
    args = parser.parse_args(argv)
    if "/" in args.socket or args.socket.startswith("."):
        parser.error("--socket is a file name in the run dir")
    args.idle = max(args.idle, 0.5)
    folder = resident.run_dir()
    if not folder.is_dir():
        print(f"no run dir {folder}", file=sys.stderr)
        return 1
    server = make(args, folder)
    signal.signal(signal.SIGTERM, _leave)
    code = server.run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # its socket is gone: no need to wait for the runtime's slow teardown


def _leave(*_: Any) -> None:
    raise SystemExit(0)  # through run()'s cleanup: the socket is removed


if __name__ == "__main__":
    raise SystemExit(main())

"""The resident embedder: the model kept loaded between commands, behind a private socket.

A fresh ``agentdex search`` process that loads the model to embed one query
pays ~0.6 s (imports, reading and checking 23 MB, creating the onnxruntime
session) for ~10 ms of work. The CLI instead asks a small resident process
(:mod:`agentdex.semantic.resident_server`) that keeps the model loaded: it is
started by the first search that needs a query embedded, answers over a unix
socket in the data dir and exits by itself after ``idle_seconds()`` without a
request. Only the CLI uses it (servers keep the model in their own process).

It also scans for them (``nearest``): given a query and a vector store's
folder and row count, it embeds the query and returns the closest contents,
so a fresh search process neither imports numpy (~0.1 s) nor scans the
vectors itself, and the scan runs on the other core while the process does
the lexical half (:class:`agentdex.api.semantic.QueryVector`). ``records``
goes one step further, what a CLI search asks: given the store's folder and
the index generation it must be linked to, the resident also reads the
store's SQLite (kept open between requests) for the records and titles
holding those contents and how many records are embedded, so the search
process opens no vector store at all; it only checks that the records are
live in its index.

Safety: the socket lives in ``<data dir>/run/`` (0700) and is 0600; the
resident also checks each peer's uid (``SO_PEERCRED``) and serves nothing but
embeddings of the texts it is sent, the nearest rows of a vector store the
client names and the records holding them (read as the client would: it is
of the same uid and can read them itself) and its own status. It is a unix socket
only: nothing on the network can reach it. ``AGENTDEX_RESIDENT_EMBEDDER=0``
turns it off (every search then loads the model itself);
``AGENTDEX_EMBEDDER_IDLE_SECONDS`` sets the idle time before it exits
(default 600). ``doctor`` shows whether one runs (:func:`status`); nothing
but a search by meaning ever starts one.

This module is the client and what both ends share; it imports nothing
heavy (numpy only when vectors come back).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.semantic import framing, sockets
from agentdex.semantic.model import DEFAULT, ModelSpec, ModelUnavailable, model_file
from agentdex.semantic.sockets import connect
from agentdex.semantic.switches import run_dir, seconds_setting, switched_on

if TYPE_CHECKING:
    import numpy as np

    from agentdex.semantic.query import Near

#: bumped when the messages change: a resident of another version listens elsewhere
#: (2: ``nearest``; 3: ``records``)
PROTOCOL = 3
IDLE_SECONDS = 600.0
#: how long a client waits for a resident it started to load the model and answer
START_SECONDS = 20.0
#: how long a client waits for an answer from a resident already loaded
ANSWER_SECONDS = 10.0
#: largest message either end accepts (a query is cut to 4,000 characters before)
MAX_MESSAGE = 4 << 20


def enabled() -> bool:
    """Whether the CLI may use (and start) a resident embedder."""
    return switched_on("AGENTDEX_RESIDENT_EMBEDDER")


def idle_seconds() -> float:
    return seconds_setting("AGENTDEX_EMBEDDER_IDLE_SECONDS", IDLE_SECONDS)


def socket_name(spec: ModelSpec = DEFAULT) -> str:
    """``embed-<model>-<8 hex of the model file's path>-p<protocol>.sock``: a model file
    given by ``AGENTDEX_MODEL_PATH`` gets its own resident."""
    from agentdex.paths import sha256  # hashlib's digest without loading OpenSSL (~2.5 ms)

    where = sha256(str(model_file(spec)).encode("utf-8", "surrogateescape"))
    return f"embed-{spec.id}-{where.hexdigest()[:8]}-p{PROTOCOL}.sock"


# -- framing (both ends) -------------------------------------------------------------------


def send(sock: socket.socket, header: dict[str, Any], payload: bytes = b"") -> None:
    """One message (:mod:`agentdex.semantic.framing`)."""
    framing.send(sock, header, payload)


def receive(sock: socket.socket) -> tuple[dict[str, Any], bytes]:
    """One message of at most :data:`MAX_MESSAGE` bytes (:mod:`agentdex.semantic.framing`)."""
    return framing.receive(sock, MAX_MESSAGE)


# -- the client ----------------------------------------------------------------------------


def _ask(sock: socket.socket, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    with sock:
        send(sock, request)
        return receive(sock)


def _header(sock: socket.socket, request: dict[str, Any]) -> dict[str, Any]:
    return _ask(sock, request)[0]


def embed(texts: list[str], spec: ModelSpec = DEFAULT, *, start: bool = True) -> np.ndarray | None:
    """Unit vectors for ``texts`` from the resident embedder, starting one if none runs.

    None when no resident can serve (sockets unavailable, it could not be started
    or stopped answering): the caller loads the model itself. Raises
    :class:`ModelUnavailable` when the resident says the model cannot run.
    """
    import numpy as np

    answer = _request({"op": "embed", "model": spec.id, "texts": texts}, spec, start)
    if answer is None:
        return None
    header, payload = answer
    rows, dim = header.get("shape", (0, 0))
    if rows != len(texts) or dim != spec.dim or len(payload) != rows * dim * 4:
        return None
    return np.frombuffer(payload, dtype="<f4").reshape(rows, dim)


def nearest(
    text: str,
    folder: Path,
    vfile: str,
    rows: int,
    top: int,
    spec: ModelSpec = DEFAULT,
    *,
    start: bool = True,
    meanwhile: Callable[[], object] | None = None,
) -> dict[int, float] | None:
    """The ``top`` contents of the vector store in ``folder`` (its first ``rows`` rows
    of ``vfile``) closest to ``text``, embedded and scanned by the resident: content
    key -> cosine, best first. None when no resident can serve or it cannot read
    the store (the caller embeds and scans itself); :class:`ModelUnavailable` as
    :func:`embed`. ``meanwhile`` runs here once the request is sent, while the
    resident embeds and scans (whatever it raises is raised)."""
    request = {
        "op": "nearest",
        "model": spec.id,
        "text": text,
        "store": str(folder),
        "vfile": vfile,
        "rows": rows,
        "top": top,
    }
    answer = _request(request, spec, start, meanwhile)
    if answer is None:
        return None
    ckeys, sims = answer[0].get("ckeys"), answer[0].get("sims")
    if not isinstance(ckeys, list) or not isinstance(sims, list) or len(ckeys) != len(sims):
        return None
    if not all(isinstance(k, int) for k in ckeys):
        return None
    if not all(isinstance(v, int | float) for v in sims):
        return None
    return {key: float(sim) for key, sim in zip(ckeys, sims, strict=True)}


def records(
    text: str,
    store: Path,
    generation: str,
    top: int,
    spec: ModelSpec = DEFAULT,
    *,
    start: bool = True,
) -> tuple[list[Near], int] | None:
    """The whole semantic half but the live-record check, done by the resident: it embeds
    ``text``, scans the vector store in ``store`` (a ``semantic/`` folder) for the ``top``
    closest contents and reads which records and conversation titles hold them
    (:meth:`agentdex.semantic.query.VectorIndex.records`), with the number of embedded
    records (``members``). This process then opens no vector store and runs none of that
    Python beside its lexical half. None when no resident can serve, or the store is not
    linked to ``generation`` (the caller relinks it) or cannot be read;
    :class:`ModelUnavailable` as :func:`embed`."""
    request = {
        "op": "records",
        "model": spec.id,
        "text": text,
        "store": str(store),
        "generation": generation,
        "top": top,
    }
    answer = _request(request, spec, start)
    if answer is None or not answer[0].get("linked"):
        return None
    header = answer[0]
    searched = header.get("searched")
    near = _near_rows(header)
    if near is None or not isinstance(searched, int):
        return None
    return near, searched


def _near_rows(header: dict[str, Any]) -> list[Near] | None:
    """The records of a ``records`` answer (columns of equal length); None if malformed."""
    from agentdex.semantic.query import Near

    columns = [header.get(k) for k in ("rids", "thashes", "ckeys", "sims", "titles")]
    lists = [c for c in columns if isinstance(c, list)]
    if len(lists) != len(columns) or len({len(c) for c in lists}) != 1:
        return None
    near: list[Near] = []
    for rid, thash, ckey, sim, title in zip(*lists, strict=True):
        if not (type(rid) is int and type(thash) is int and type(ckey) is int):
            return None
        if not isinstance(sim, int | float) or isinstance(sim, bool):
            return None
        key: tuple[str, str] | None = None
        if title is not None:
            if not (isinstance(title, list) and len(title) == 2):
                return None
            if not all(isinstance(part, str) for part in title):
                return None
            key = (title[0], title[1])
        near.append(Near(rid, thash, ckey, float(sim), key))
    return near


def _request(
    request: dict[str, Any],
    spec: ModelSpec,
    start: bool,
    meanwhile: Callable[[], object] | None = None,
) -> tuple[dict[str, Any], bytes] | None:
    """One request to the resident (started when none runs and ``start``); None when
    none can serve or its answer is not ``ok``. ``meanwhile``: run between sending the
    request and reading the answer."""
    folder, name = run_dir(), socket_name(spec)
    sock = connect(folder, name, ANSWER_SECONDS)
    child = None
    if sock is None:
        if not start:
            return None
        child = _start(folder, name, spec)
        if child is None:
            return None
        sock = _await(folder, name, child)
        if sock is None:
            return None
    try:
        with sock:
            send(sock, request)
            if meanwhile is not None:
                meanwhile()
            header, payload = receive(sock)
    except (OSError, ValueError):
        return None
    if not header.get("ok"):
        if header.get("code") == "MODEL_UNAVAILABLE":
            raise ModelUnavailable(str(header.get("error")))
        return None
    return header, payload


def _start(folder: Path, name: str, spec: ModelSpec) -> Any:
    """Start a resident (detached: it outlives this process); None if it cannot be."""
    args = ["--model", spec.id, "--idle", str(idle_seconds())]
    return spawn(folder, name, "agentdex.semantic.resident_server", args)


def spawn(folder: Path, name: str, module: str, args: list[str]) -> Any:
    """Start ``python -m module --socket name *args`` in ``folder``, detached (it outlives
    this process), its output in ``<name>.log``; None if it cannot be started."""
    import subprocess

    from agentdex.paths import ensure_private_dir, open_private

    try:
        ensure_private_dir(folder)
        log = open_private(folder / (name.removesuffix(".sock") + ".log"))
    except OSError:
        return None
    import agentdex

    env = dict(os.environ)
    # the resident runs this very code, whatever the interpreter's own path says
    source = str(Path(agentdex.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    argv = [sys.executable, "-m", module, "--socket", name, *args]
    try:
        with log:
            return subprocess.Popen(
                argv,
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # not killed with this terminal's process group
                close_fds=True,
            )
    except OSError:
        return None


def _await(folder: Path, name: str, child: Any) -> socket.socket | None:
    """Connect to the resident being started (it binds first, then loads the model, so
    a connected client waits for the load on its first answer)."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        sock = connect(folder, name, START_SECONDS)
        if sock is not None:
            return sock
        if child.poll() not in (None, 0):
            return None  # it failed before binding; 0 means another resident won the race
        time.sleep(0.005)
    return None


def status(spec: ModelSpec = DEFAULT) -> dict[str, Any]:
    """Whether a resident embedder runs, and what it says about itself (never starts one)."""
    keys = ("pid", "model", "started", "last_used", "requests", "rss_mb", "error", "idle")
    info = sockets.status(
        run_dir(),
        socket_name(spec),
        _header,
        enabled=enabled(),
        idle=idle_seconds(),
        keys=keys,
        timeout=1.0,
    )
    if "idle" in info:
        info["idle_exit_seconds"] = info.pop("idle")
    return info


def stop(spec: ModelSpec = DEFAULT) -> bool:
    """Ask a running resident to exit now; True if one answered."""
    return sockets.stop(run_dir(), socket_name(spec), _header)

"""The residents' unix sockets: how a client reaches a resident of its own uid and asks
it how it is, or to stop.

Three residents listen in ``<data dir>/run/`` (0700): the embedder
(:mod:`agentdex.semantic.resident`), the local searcher
(:mod:`agentdex.api.search_resident`) and the team searcher
(:mod:`agentdex.api.team_resident`). Each client speaks its own messages; reaching
the socket, checking the peer's uid (``SO_PEERCRED``: the folder's mode says so
already, this checks) and the ``status`` and ``stop`` requests are the same for
all three, and live here. Imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

#: AF_UNIX paths longer than this are reached through ``/proc/self/fd/N/``
SUN_PATH = 100

#: sends one request on a connected socket and returns the answer's header
Ask = Callable[[socket.socket, dict[str, Any]], dict[str, Any]]


@contextlib.contextmanager
def address(folder: Path, name: str) -> Iterator[str]:
    """A path ``bind``/``connect`` accept for ``folder/name`` (long paths go through an
    open descriptor of ``folder``: AF_UNIX paths are limited to ~100 bytes)."""
    full = str(folder / name)
    if len(full.encode("utf-8", "surrogateescape")) <= SUN_PATH:
        yield full
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{name}"
    finally:
        os.close(fd)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (None where the system cannot say)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def same_user(sock: socket.socket) -> bool:
    """Is the other end a process of this uid? (True where the system cannot say: the
    0700 folder is then the guard.)"""
    uid = peer_uid(sock)
    return uid is None or uid == os.getuid()


def connect(folder: Path, name: str, timeout: float) -> socket.socket | None:
    """A connection to a resident of this uid listening at ``folder/name``, or None (none
    listens, a stale socket, no folder, another user's process: never sent anything)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with address(folder, name) as where:
            sock.settimeout(timeout)
            sock.connect(where)
        mine = same_user(sock)
    except OSError:
        sock.close()
        return None
    if not mine:
        sock.close()
        return None
    return sock


def asked(
    folder: Path, name: str, request: dict[str, Any], ask: Ask, timeout: float = 2.0
) -> dict[str, Any] | None:
    """The header of a running resident's answer to ``request``, or None (none answered)."""
    sock = connect(folder, name, timeout)
    if sock is None:
        return None
    try:
        with sock:
            return ask(sock, request)
    except (OSError, ValueError):
        return None


def status(
    folder: Path,
    name: str,
    ask: Ask,
    *,
    enabled: bool,
    idle: float,
    keys: Iterable[str],
    timeout: float = 2.0,
) -> dict[str, Any]:
    """Whether a resident runs at ``folder/name``, and the ``keys`` of what it says of
    itself (never starts one)."""
    info: dict[str, Any] = {
        "enabled": enabled,
        "running": False,
        "socket": str(folder / name),
        "idle_exit_seconds": idle,
    }
    header = asked(folder, name, {"op": "status"}, ask, timeout)
    if header is not None:
        info["running"] = bool(header.get("ok"))
        info.update((key, header[key]) for key in keys if key in header)
    return info


def stop(folder: Path, name: str, ask: Ask) -> bool:
    """Ask a running resident to exit now; True if one answered."""
    header = asked(folder, name, {"op": "stop"}, ask)
    return header is not None and bool(header.get("ok"))


def digest(text: str) -> str:
    """8 hex digits of ``text`` (CRC-32: a name, a check that two ends agree; nothing a
    secret could be read back from, and no OpenSSL to load in a fresh process)."""
    from binascii import crc32

    return f"{crc32(text.encode('utf-8', 'surrogateescape')):08x}"

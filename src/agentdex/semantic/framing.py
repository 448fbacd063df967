"""How agentdex's residents and their clients frame a message on a unix socket.

A 4-byte length, a JSON header (the standard library's ``json``: a client that
imports nothing heavy can read it), then ``header["bytes"]`` raw bytes. The
resident embedder, the resident searcher and its checker speak it.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

_HEADER = struct.Struct(">I")


def send(sock: socket.socket, header: dict[str, Any], payload: bytes = b"") -> None:
    """One message: a 4-byte length, a JSON header, then ``header['bytes']`` raw bytes."""
    if payload:
        header = {**header, "bytes": len(payload)}
    body = json.dumps(header, separators=(",", ":"), default=str).encode()
    sock.sendall(_HEADER.pack(len(body)) + body + payload)


def receive(sock: socket.socket, limit: int) -> tuple[dict[str, Any], bytes]:
    """The other end's message: its header and payload, each at most ``limit`` bytes
    (ValueError when larger or malformed; ConnectionError when the other end closed)."""
    (size,) = _HEADER.unpack(exactly(sock, _HEADER.size))
    if size > limit:
        raise ValueError("message too large")
    header = json.loads(exactly(sock, size))
    if not isinstance(header, dict):
        raise ValueError("malformed message")
    extra = header.get("bytes", 0)
    if not isinstance(extra, int) or not 0 <= extra <= limit:
        raise ValueError("malformed message")
    return header, exactly(sock, extra) if extra else b""


def exactly(sock: socket.socket, size: int) -> bytes:
    """``size`` bytes from ``sock`` (ConnectionError if it closes first)."""
    parts, left = [], size
    while left:
        part = sock.recv(min(left, 1 << 20))
        if not part:
            raise ConnectionError("the other end closed the connection")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)

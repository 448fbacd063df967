"""Append-only JSONL session logs that survive crashes and concurrent writers.

Writing: the file is opened ``O_APPEND``, locked with ``flock``, and each
event is written as ONE ``os.write`` of a full line. If a crash left a torn
(newline-less) last line, the next append starts with a newline so the new
event is never glued onto the fragment.

Reading: lines that are not complete JSON objects (a torn tail, or a torn
line that a later append sealed off) are skipped and counted; a log whose
first line is not a ``start`` event is :class:`~agentdex.errors.CorruptError`.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import orjson

from agentdex.errors import CorruptError, NotFoundError
from agentdex.sessions.events import START


def encode(event: dict[str, Any]) -> bytes:
    """One complete line; NUL-free and newline-terminated by construction."""
    return orjson.dumps(event) + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    # Regular files take the whole buffer in one write; loop only as a safeguard.
    while written < len(data):
        written += os.write(fd, data[written:])


def create_log(path: Path, start_event: dict[str, Any]) -> None:
    """Create ``path`` holding only the start event; FileExistsError if it exists.

    The log is written to a temporary name and hard-linked into place, so a
    session file never exists without its start line.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, encode(start_event))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    finally:
        os.unlink(tmp)


def append_event(path: Path, event: dict[str, Any]) -> None:
    """Append one event, atomically with respect to other agentdex writers."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError as exc:
        raise NotFoundError(f"session log not found: {path}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        line = encode(event)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # seal off a torn tail left by a crash
        _write_all(fd, line)
    finally:
        os.close(fd)


def read_events(path: Path) -> tuple[list[dict[str, Any]], int]:
    """All complete events and the number of lines skipped as torn or unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise NotFoundError(f"session log not found: {path}") from exc
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: empty, or a torn line
    skipped = 1 if tail.strip() else 0
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            event = None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            if number == 0:
                raise CorruptError(f"session log {path.name} does not start with a start event")
            skipped += 1
            continue
        events.append(event)
    if not events or events[0].get("type") != START:
        raise CorruptError(f"session log {path.name} does not start with a start event")
    return events, skipped

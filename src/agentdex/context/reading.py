"""Symlink-safe, capped reads: the only place context bytes are read.

Two phases. :func:`inspect` looks without reading: it resolves a symlink,
refuses targets outside the scan root or named like secrets (their bytes
are never read), reports broken links and loops as ``unreadable`` and
refuses anything that is not a regular file (a FIFO named ``CLAUDE.md``
would otherwise block the reader). :func:`read_capped` then opens the
inspected target with ``O_NONBLOCK | O_NOFOLLOW``, checks the open file is
the one inspected, and reads at most ``cap + 1`` bytes, so a 1 GB file
costs one 64 KiB read and its capped prefix is still hashed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass

from agentdex.readers import is_secret


@dataclass(frozen=True, slots=True)
class Inspection:
    """What :func:`inspect` learned about a discovered path, before any read."""

    path: str
    target: str | None  # resolved path when ``path`` is a symlink
    status: str  # "ok" (readable candidate), "invalid" or "unreadable"
    error: str | None = None
    identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the regular file
    size: int = 0

    @property
    def is_link(self) -> bool:
        return self.target is not None

    @property
    def open_path(self) -> str:
        return self.target or self.path


@dataclass(frozen=True, slots=True)
class ReadResult:
    status: str  # "ok", "oversize" or "unreadable"
    data: bytes  # the whole file when ok, the capped prefix when oversize
    size: int
    content_hash: str | None
    error: str | None = None


def is_within(path: str, root: str) -> bool:
    """True when ``path`` equals ``root`` or lies under it (both already resolved)."""
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def _describe(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOENT:
        return "no such file"
    return exc.strerror or type(exc).__name__


def _non_regular(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "not a regular file (FIFO)"
    if stat.S_ISDIR(mode):
        return "not a regular file (directory)"
    if stat.S_ISSOCK(mode):
        return "not a regular file (socket)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not a regular file (device)"
    return "not a regular file"


def inspect(path: str, root_real: str) -> Inspection:
    """Classify ``path`` as readable, invalid or unreadable without reading it."""
    try:
        lst = os.lstat(path)
    except OSError as exc:
        return Inspection(path, None, "unreadable", _describe(exc))
    target: str | None = None
    st = lst
    if stat.S_ISLNK(lst.st_mode):
        try:
            target = os.path.realpath(path, strict=True)
        except OSError as exc:
            reason = "broken symlink" if exc.errno == errno.ENOENT else _describe(exc)
            return Inspection(
                path, os.readlink(path) if _safe_islink(path) else None, "unreadable", reason
            )
        if not is_within(target, root_real):
            return Inspection(
                path,
                target,
                "invalid",
                f"symlink target {target} is outside the scan root {root_real}",
            )
        if is_secret(target):
            return Inspection(
                path, target, "invalid", "symlink target is a secret file; it is never read"
            )
        try:
            st = os.stat(target)
        except OSError as exc:
            return Inspection(path, target, "unreadable", _describe(exc))
    if not stat.S_ISREG(st.st_mode):
        return Inspection(path, target, "unreadable", _non_regular(st.st_mode))
    return Inspection(path, target, "ok", None, (st.st_dev, st.st_ino), st.st_size)


def _safe_islink(path: str) -> bool:
    try:
        return os.path.islink(path)
    except OSError:
        return False


def read_capped(inspection: Inspection, cap: int) -> ReadResult:
    """Read at most ``cap`` bytes of an inspected regular file (never blocks, never follows)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(inspection.open_path, flags)
    except OSError as exc:
        return ReadResult("unreadable", b"", inspection.size, None, _describe(exc))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ReadResult("unreadable", b"", st.st_size, None, _non_regular(st.st_mode))
        if inspection.identity is not None and (st.st_dev, st.st_ino) != inspection.identity:
            return ReadResult(
                "unreadable", b"", st.st_size, None, "file was replaced while being read"
            )
        chunks: list[bytes] = []
        remaining = cap + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        return ReadResult("unreadable", b"", inspection.size, None, _describe(exc))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    size = max(st.st_size, len(data))
    if len(data) > cap or size > cap:
        prefix = data[:cap]
        return ReadResult(
            "oversize",
            prefix,
            size,
            hashlib.sha256(prefix).hexdigest(),
            f"{size} bytes is over the {cap}-byte cap; hash covers the first {cap}",
        )
    return ReadResult("ok", data, size, hashlib.sha256(data).hexdigest())

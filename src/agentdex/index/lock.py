"""One writer at a time: an ``flock``'d lock file beside the index.

Readers never take it (they read SQLite WAL snapshots). The lock dies with
its process, so a ``kill -9`` never leaves the index locked.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: best effort, no cross-process lock
    fcntl = None  # type: ignore[assignment]


class LockBusy(Exception):
    """Another process holds the writer lock."""


class WriterLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, timeout: float | None = None) -> None:
        """Take the lock; wait up to ``timeout`` seconds (None: forever, 0: do not wait)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is None:
            self._fd = fd
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockBusy(str(self.path)) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            if fcntl is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

"""The writer's memory: glibc malloc settings and mapped pages that keep a build's peak RSS down.

All are no-ops off Linux/glibc. They exist because the writer process
hosts tantivy's indexing threads (Rust, on the system allocator) beside
Python: memory one of them frees stays in the process unless told otherwise.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import threading
import time
from typing import Any


@functools.cache
def libc() -> Any:
    """The C library of this process (None off Linux, or when it cannot be loaded)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def limit_malloc_arenas() -> None:
    """Two malloc arenas for this process.

    glibc gives threads their own arenas; tantivy's indexing threads and the
    block packer then each keep memory freed by the others: two arenas took
    the 250 MB cold build's peak RSS from 254 to 212 MB at the same CPU time.
    """
    lib = libc()
    if lib is not None and hasattr(lib, "mallopt"):
        lib.mallopt(-8, 2)  # M_ARENA_MAX


def release_free_memory() -> None:
    """Hand memory freed since (tantivy's flushed segments, its closed heap) back to the system.

    Called after each postings commit and before the term list is rebuilt at
    the end of a big build. Without the per-commit call, freed memory stayed
    in the process: the 1 GB build's anonymous memory grew from 95 to 225 MB
    over the build and peaked at 278 MB; with it, it stayed within 150-190 MB
    and peaked at 246 MB (one trace each, ``bench/`` notes in
    docs/performance.md).
    """
    lib = libc()
    if lib is not None and hasattr(lib, "malloc_trim"):
        lib.malloc_trim(0)


#: ``madvise`` advice that unmaps pages from this process: a file's pages leave the resident
#: set but stay in the page cache, so a page read again is a minor fault, not a disk read.
#: ``MADV_PAGEOUT`` (21), used before, evicted them from the page cache: tantivy's merges in
#: the writer read them back from disk (a 1 GB build's merges ~4 CPU-s more, and their wall
#: ~30 s longer in a replay of its postings; docs/performance.md, s13-tantivy)
MADV_DONTNEED = 4
#: file-backed memory this process may map beyond what it mapped when it began, before
#: :class:`MappedPages` hands the pages of the watched folder back
MAPPED_SLACK_BYTES = 4 * 1024 * 1024
#: :meth:`MappedPages.check` looks at most this often
MAPPED_CHECK_SECONDS = 0.25


class MappedPages:
    """Keeps the pages of one folder's files that this process maps out of its resident set.

    tantivy reads segments through ``mmap``: while it merges, every page of
    the segments it reads stays resident in the writer (up to ~50-100 MB at
    1 GB) until the merge ends. :meth:`check`, called often, reads the
    process's file-backed RSS (cheap) and, once it grew more than
    :data:`MAPPED_SLACK_BYTES` past its level at the start, unmaps the pages
    mapped from ``folder``'s read-only mappings (:data:`MADV_DONTNEED`). That
    never changes what any mapping reads (a page is mapped again from the page
    cache, or read from the file, on its next access; a read-only mapping has
    no private copies to lose), so it is safe against tantivy mapping and
    unmapping files meanwhile. Linux only; elsewhere it does nothing.
    """

    def __init__(self, folder: str) -> None:
        self.prefix = os.fsencode(folder.rstrip("/") + "/")
        #: this instance's :data:`MAPPED_SLACK_BYTES` (the merge child keeps a wider one)
        self.slack = MAPPED_SLACK_BYTES
        lib = libc()
        self._madvise = getattr(lib, "madvise", None) if lib is not None else None
        self.base = self._file_rss() if self._madvise is not None else None
        self.reclaims = 0
        self._next = 0.0

    @staticmethod
    def _file_rss() -> int | None:
        return _status_bytes(b"RssFile:")

    def check(self) -> None:
        if self.base is None or self._madvise is None or time.monotonic() < self._next:
            return
        self._next = time.monotonic() + MAPPED_CHECK_SECONDS
        mapped = self._file_rss()
        if mapped is None or mapped - self.base <= self.slack:
            return
        import ctypes

        try:
            with open("/proc/self/maps", "rb") as handle:
                maps = handle.read()
        except OSError:
            return
        self.reclaims += 1
        for line in maps.splitlines():
            parts = line.split(None, 5)
            if len(parts) < 6 or not parts[5].startswith(self.prefix) or b"w" in parts[1]:
                continue
            start, end = (int(bound, 16) for bound in parts[0].split(b"-"))
            refused = self._madvise(
                ctypes.c_void_p(start), ctypes.c_size_t(end - start), ctypes.c_int(MADV_DONTNEED)
            )
            if refused and ctypes.get_errno() == errno.EINVAL:
                self.base = None  # this system refuses the advice: stop asking
                return


#: :class:`MemoryKeeper` looks at the process's memory this often
KEEP_SECONDS = 0.25
#: anonymous memory may grow this much past its lowest level since the last trim before
#: :class:`MemoryKeeper` hands freed memory back
TRIM_SLACK_BYTES = 8 * 1024 * 1024


def anon_rss() -> int | None:
    """This process's resident anonymous memory in bytes (``RssAnon``; None off Linux)."""
    return _status_bytes(b"RssAnon:")


def _status_bytes(field: bytes) -> int | None:
    """A kB field of ``/proc/self/status`` in bytes (None off Linux)."""
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


class MemoryKeeper:
    """A thread that keeps memory the writer no longer uses out of its resident set.

    tantivy's indexing threads free their buffers each time they write a segment
    (every few seconds in a big build), its merges free theirs, SQLite and Python
    free theirs; glibc keeps what they free for reuse, and between two commits of
    a 1 GB first build (up to ~80 s apart) ~60-90 MB of freed memory stayed
    resident: the build's peak RSS fell at such a commit (docs/performance.md,
    s9-rss). Every :data:`KEEP_SECONDS` the thread reads the process's anonymous
    RSS and, once it grew more than :data:`TRIM_SLACK_BYTES` past its lowest level
    since the last trim, hands the free memory back (``malloc_trim``: a few ms,
    the interpreter lock released); it also runs ``mapped``'s check
    (:class:`MappedPages`), so both hold while the main thread waits in a long
    step (a commit, tantivy's last merges). No-op off Linux/glibc.
    """

    def __init__(self, mapped: MappedPages | None = None) -> None:
        self.mapped = mapped
        self.trims = 0
        #: the lowest anonymous RSS seen since the last trim (growth is measured from it)
        self.low = anon_rss() or 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        lib = libc()
        if lib is None or not hasattr(lib, "malloc_trim") or anon_rss() is None:
            return
        self._thread = threading.Thread(target=self._run, name="agentdex-memory", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(KEEP_SECONDS):
            anon = anon_rss()
            if anon is None:
                return
            if anon < self.low:
                self.low = anon
            elif anon - self.low > TRIM_SLACK_BYTES:
                release_free_memory()
                self.trims += 1
                self.low = anon_rss() or anon
            if self.mapped is not None:
                self.mapped.check()

    def stop(self) -> None:
        """Stop the thread (waits for it: at most one check)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

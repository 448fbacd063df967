"""Fill missing embeddings on a background thread while a server is idle.

``agentdex serve``, ``ui`` and ``mcp`` start one :class:`BackgroundFill`; their
request handlers call :meth:`BackgroundFill.note` on every request. After
``IDLE_SECONDS`` without a request it embeds what is missing in small batches
(:func:`agentdex.api.semantic.embed_missing`), checking between batches and
stopping as soon as a request comes in; the thread runs at a lower CPU
priority. When the index has not changed since its last complete pass it
only looks again every ``RECHECK_SECONDS`` (one cheap query). A model that
cannot run or a full disk stops it for ``BACKOFF_SECONDS`` (``error`` says
why; ``doctor`` reports the model problem). ``AGENTDEX_BACKGROUND_EMBED=0``
turns it off.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import suppress
from typing import Any

IDLE_SECONDS = 3.0
RECHECK_SECONDS = 30.0
BACKOFF_SECONDS = 600.0
#: records per commit in the background: small, so a request never waits long
BATCH = 16


def enabled() -> bool:
    return os.environ.get("AGENTDEX_BACKGROUND_EMBED", "1") not in ("0", "false", "no", "off")


class BackgroundFill:
    def __init__(self, home: str | None = None) -> None:
        self.home = home
        self.last_activity = time.monotonic()
        self.error: str | None = None
        self.passes = 0
        self.embedded = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: Any = None

    def note(self) -> None:
        """A request came in: the next batch boundary stops the fill."""
        self.last_activity = time.monotonic()

    def start(self) -> BackgroundFill:
        if enabled() and self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="agentdex-embed-fill", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _idle(self, seconds: float) -> bool:
        return time.monotonic() - self.last_activity >= seconds

    def _run(self) -> None:
        with suppress(OSError, AttributeError):  # this thread only (Linux: a thread is a task)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        wait = IDLE_SECONDS
        while not self._stop.wait(wait):
            wait = IDLE_SECONDS
            if not self._idle(IDLE_SECONDS):
                continue
            signature = self._signature()
            if signature is None or signature == self._seen:
                wait = RECHECK_SECONDS
                continue
            wait = self._fill(signature)

    def _fill(self, signature: Any) -> float:
        from agentdex.api.semantic import embed_missing
        from agentdex.errors import AgentdexError

        def should_stop() -> bool:
            return self._stop.is_set() or not self._idle(0.5)

        try:
            stats = embed_missing(
                home=self.home, should_stop=should_stop, wait=False, batch=BATCH, threads=1
            )
        except AgentdexError as exc:
            self.error = exc.message
            return BACKOFF_SECONDS
        except (OSError, sqlite3.Error) as exc:  # never take the server down
            self.error = f"{type(exc).__name__}: {exc}"
            return BACKOFF_SECONDS
        self.error = None
        self.passes += 1
        self.embedded += stats.texts_embedded
        if stats.complete:
            self._seen = signature
            return RECHECK_SECONDS
        return IDLE_SECONDS

    def _signature(self) -> Any:
        """(generation, newest record, records): changes whenever the index does."""
        from agentdex.index.store import Location, index_root, open_reader_db

        try:
            gen = Location(index_root(None, home=self.home)).current()
            if gen is None:
                return None
            db = open_reader_db(gen)
            try:
                row = db.execute("SELECT max(id), count(*) FROM record_rows").fetchone()
            finally:
                db.close()
        except Exception:  # no index yet, or one being rebuilt: look again later
            return None
        return (gen.name, row[0], row[1])


_current: BackgroundFill | None = None


def start(home: str | None = None) -> BackgroundFill:
    """Start this process's background fill (``serve``, ``ui``, ``mcp``)."""
    global _current
    if _current is None:
        _current = BackgroundFill(home).start()
    return _current


def stop() -> None:
    global _current
    if _current is not None:
        _current.stop()
        _current = None


def note_activity() -> None:
    """Called by the surfaces on every request: the background fill steps aside."""
    if _current is not None:
        _current.note()

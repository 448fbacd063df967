"""The refresh check in a forked child, while the parent searches the committed index.

A fresh ``agentdex search`` spends tens of milliseconds on the no-change
check (one ``stat`` per noted path, :mod:`agentdex.index.manifest`) and about
as long importing the search modules and answering from the index. The two
need different cores, not one after the other: the check is system calls,
the search is Python and tantivy. Threads would share one interpreter lock,
so the check runs in a forked child that writes one line to a pipe:
``<files>`` when nothing changed, ``-`` otherwise.

The parent keeps its answer only when the child says nothing changed; on any
other outcome (a change, no manifest, a child that fails or is slow) it
refreshes and searches again, as it would have without the child. The
guarantee is the sequential one: the answer reflects every store file as it
was when the check started.

Forking is used only where it is safe and cheap: Linux, and a process with
one thread (the CLI; not the HTTP server, whose searches run in their own
workers). Everything the child runs is imported before the fork.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: the longest the parent waits for the child's answer before checking itself
WAIT_SECONDS = 5.0


@dataclass(slots=True)
class PendingCheck:
    """A check running in a child process (see the module docstring)."""

    pid: int
    reader: int
    started: float

    def result(self) -> float | None:
        """The check's seconds when nothing changed; None when the parent must refresh."""
        try:
            ready, _, _ = select.select([self.reader], [], [], WAIT_SECONDS)
            answer = os.read(self.reader, 64) if ready else b""
        except OSError:
            answer = b""
        finally:
            os.close(self.reader)
            self._reap(bool(answer))
        text = answer.decode("ascii", "replace").strip()
        if not text.isdigit():
            return None
        return time.monotonic() - self.started

    def _reap(self, answered: bool) -> None:
        if not answered:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def answered_ahead(
    root: str | os.PathLike[str] | None, home: str | None, answer: Callable[[], T]
) -> tuple[T, dict[str, Any]] | None:
    """``answer()`` while a forked child checks: ``(answer, stats.refresh)`` when nothing
    changed; None when the caller must refresh and answer again (or could not fork)."""
    pending = start_check(root, home)
    if pending is None:
        return None
    try:
        value = answer()
    finally:
        seconds = pending.result()
    if seconds is None:
        return None
    refresh = {"seconds": round(seconds, 4), "files_parsed": 0, "files_removed": 0}
    return value, {**refresh, "records_added": 0}


def start_check(root: str | os.PathLike[str] | None, home: str | None) -> PendingCheck | None:
    """Fork a child that runs the no-change check; None where forking is not safe."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return None
    from agentdex.index.manifest import check
    from agentdex.index.store import index_root

    location = Path(index_root(root, home=home))
    started = time.monotonic()
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return None
    if pid == 0:  # the child: answer, then leave without running the parent's cleanups
        status = 1
        try:
            os.close(reader)
            files, _changes = check(location, home)
            os.write(writer, b"-\n" if files is None else b"%d\n" % files)
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    return PendingCheck(pid=pid, reader=reader, started=started)

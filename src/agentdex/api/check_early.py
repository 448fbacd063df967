"""The forked refresh check's child, and the check started at a search process's start.

:mod:`agentdex.api.check_ahead` runs the no-change check in a forked child
while the parent answers. This module holds the fork and what the child
runs, and lets the command line start that child first thing: a fresh
``agentdex search`` process forks it in :func:`agentdex.cli.main` before
it imports click and the search modules (about 60-80 ms of the parent's
work), so at 1 GB (10,700 paths to ``stat``, 30-40 ms of the other core)
the check has answered before the search wants it instead of making a
quick search wait. :func:`start` is a guess made from the command line
alone; the search takes the child only when it searches the same home's
default index (:func:`take`), and a child nobody took is killed and
reaped when the command ends (:func:`discard`): a wrong guess costs a
fork, never an answer.

Before the fork, :func:`start` imports what the child runs (the manifest
check and the index's location: dataclasses, sqlite3, orjson, the config),
which the search needs later anyway: imported once, in the parent, not again
in the child (~25 ms of CPU), and still nothing of click or the search.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Any

#: the child's niceness above the parent's: where the two (or the resident embedder of a
#: hybrid search) want one core, the search goes first; the check has the answer's time
#: (the parent waits for it only after answering, and then the child runs alone in its
#: session's scheduling group, whatever its niceness)
CHILD_NICE = 10
#: what the child sends the parent when something changed (cancels its answer); the
#: attribute is looked up safely because this module is imported off Linux too
CHANGED_SIGNAL: int = getattr(signal, "SIGUSR1", 0)


def can_fork() -> bool:
    """Linux, and the main thread of a process with no other thread (the CLI; not the
    HTTP server, whose searches run in their own workers)."""
    if not sys.platform.startswith("linux") or not CHANGED_SIGNAL:
        return False
    threading = sys.modules.get("threading")  # not imported yet: no thread was started
    return threading is None or (
        threading.active_count() == 1 and threading.current_thread() is threading.main_thread()
    )


def fork_check(
    root: str | os.PathLike[str] | None, home: str | None
) -> tuple[int, int, float] | None:
    """Fork a child that runs the no-change check: ``(pid, pipe to read, started)``, or
    None when the fork failed. The caller handles :data:`CHANGED_SIGNAL` (the child sends
    it when something changed, before it writes its line; see :mod:`.check_ahead`)."""
    started = time.monotonic()
    reader, writer = os.pipe()
    parent = os.getpid()
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
            with contextlib.suppress(OSError):
                os.nice(CHILD_NICE)
            line = _check_line(root, home, parent)
            with os.fdopen(writer, "wb") as out:
                out.write(line + b"\n")
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    return pid, reader, started


def _check_line(root: str | os.PathLike[str] | None, home: str | None, parent: int) -> bytes:
    """The child's answer: ``=<files>`` nothing changed, ``C<json>`` only these store
    files changed, ``-`` only discovery knows (the parent is signalled for both)."""
    from pathlib import Path

    import orjson

    from agentdex.index.store import index_root
    from agentdex.ingest import manifest

    files, changes = manifest.check(Path(index_root(root, home=home)), home)
    if files is not None:
        return b"=%d" % files
    os.kill(parent, CHANGED_SIGNAL)  # before the answer: the parent stops now
    if changes is None:
        return b"-"
    sent = {"stamp": changes.stamp, "now": changes.now, "sources": changes.sources}
    return b"C" + orjson.dumps(sent)


class Early:
    """A check forked at the process's start."""

    __slots__ = ("changed", "home", "pid", "previous", "reader", "started")

    def __init__(self, home: str | None, previous: Any) -> None:
        self.home = home
        #: the handler of :data:`CHANGED_SIGNAL` before :func:`start` (restored after)
        self.previous = previous
        #: the child signalled a change before a search took it
        self.changed = False
        self.pid = self.reader = 0
        self.started = 0.0

    def noted(self, _signum: int, _frame: object) -> None:
        self.changed = True


_early: Early | None = None


def start(home: str | None) -> None:
    """Fork the no-change check of ``home``'s default index now (a fresh search's CLI,
    before it imports anything else); :func:`take` hands it to that search."""
    global _early
    if _early is not None or not can_fork():
        return
    # what the child runs, imported here once: the search needs these too
    import orjson  # noqa: F401

    from agentdex.index import store  # noqa: F401
    from agentdex.ingest import manifest  # noqa: F401

    early = Early(home, signal.getsignal(CHANGED_SIGNAL))
    signal.signal(CHANGED_SIGNAL, early.noted)
    forked = fork_check(None, home)
    if forked is None:
        signal.signal(CHANGED_SIGNAL, early.previous)
        return
    early.pid, early.reader, early.started = forked
    _early = early


def take(root: str | os.PathLike[str] | None, home: str | None) -> Early | None:
    """The check :func:`start` forked, when it checks what this search would (the default
    index of the same home); the caller then owns it (its child, pipe and the signal
    handler to restore). Otherwise None, and that check is discarded."""
    early = _early
    if early is None:
        return None
    if root is not None or home != early.home:
        discard()
        return None
    _forget()
    return early


def give_back(early: Early) -> None:
    """Hand back a check :func:`take` gave (its taker could not use it): the next
    :func:`take` or :func:`discard` has it again."""
    global _early
    _early = early


def _forget() -> None:
    global _early
    _early = None


def discard() -> None:
    """Kill and reap a check nobody took (the command was not that search)."""
    early = _early
    if early is None:
        return
    _forget()
    with contextlib.suppress(OSError):
        os.kill(early.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(early.pid, 0)
    with contextlib.suppress(OSError):
        os.close(early.reader)
    signal.signal(CHANGED_SIGNAL, early.previous)

"""The refresh check in a forked child, while the parent searches the committed index.

A fresh ``agentdex search`` spends tens of milliseconds on the no-change
check (one ``stat`` per noted path, :mod:`agentdex.ingest.manifest`) and about
as long importing the search modules and answering from the index. The two
need different cores, not one after the other: the check is system calls,
the search is Python and tantivy. Threads would share one interpreter lock,
so the check runs in a forked child that writes one line to a pipe:
``=<files>`` when nothing changed, ``C<json>`` with the changed store files
when they are all that changed, ``-`` when only discovery knows.

The parent keeps its answer only when the child says nothing changed. When
something changed, the child first sends ``SIGUSR1``: it cancels the
parent's answer at once (its time budget, :mod:`agentdex.search.budget`),
so no more work is wasted than the check took. The parent then refreshes
(just the changed files the child named, without checking again) and
answers, as it would have without the child. The guarantee is the
sequential one: the answer reflects every store file as it was when the
check started.

Forking is used only where it is safe and cheap: Linux, and the main thread
of a process with one thread (the CLI; not the HTTP server, whose searches
run in their own workers). The signal handler is in place before the fork.
A fresh ``agentdex search`` forks the child at the very start of the
process, before click and the search modules are imported
(:mod:`agentdex.api.check_early`); :func:`answered_ahead` takes that child
when it checks the same home's index, and forks its own otherwise.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentdex.api.check_early import CHANGED_SIGNAL as CHANGED_SIGNAL
from agentdex.api.check_early import CHILD_NICE as CHILD_NICE
from agentdex.api.check_early import can_fork, fork_check, take

if TYPE_CHECKING:
    from agentdex.ingest.manifest import Changes
    from agentdex.search.budget import Budget

T = TypeVar("T")

#: the longest the parent waits for the child's answer before checking itself
WAIT_SECONDS = 5.0


class Ahead(Generic[T]):
    """What a search answered while the child checked, and what the child found.

    Plain classes here, not dataclasses: creating one costs every fresh search ~0.5 ms."""

    __slots__ = ("answer", "changes", "refresh")

    def __init__(
        self,
        answer: T | None = None,
        refresh: dict[str, Any] | None = None,
        changes: Changes | None = None,
    ) -> None:
        #: the answer, final: nothing changed (None otherwise)
        self.answer = answer
        #: ``stats.refresh`` of that answer
        self.refresh: dict[str, Any] = {} if refresh is None else refresh
        #: the changed store files, when they are all that changed (refresh just them)
        self.changes = changes


def answered_ahead(
    root: str | os.PathLike[str] | None,
    home: str | None,
    seconds: float | None,
    answer: Callable[[Budget], T],
    cancel: threading.Event | None = None,
) -> Ahead[T] | None:
    """``answer(budget)`` while a forked child checks for changes (the module docstring).

    ``seconds`` and ``cancel`` make the budget the answer runs under. None
    when forking is not possible here: the caller refreshes and answers.
    """
    early = take(root, home)  # forked by the CLI at the process's start
    if early is None and not can_fork():
        return None
    from agentdex.search.budget import CANCELLED, Budget

    budget = Budget(seconds, cancel=cancel)

    def changed(_signum: int, _frame: object) -> None:
        budget.interrupt(CANCELLED)

    previous = signal.signal(CHANGED_SIGNAL, changed)
    if early is not None:
        previous = early.previous  # what was there before the CLI forked it
    pending: PendingCheck | None
    try:
        if early is not None:
            location = Path(index_root(root, home=home))
            pending = PendingCheck(early.pid, early.reader, early.started, location)
        else:
            pending = _start_check(root, home)
        if pending is None:
            return None
        try:
            # a change the child signalled before this search took it: no answer to waste
            value = None if early is not None and early.changed else answer(budget)
        finally:
            line, seconds_taken = pending.result()
    finally:
        signal.signal(CHANGED_SIGNAL, previous)  # the child signalled before it wrote
    if line.startswith(b"="):
        refresh = {"seconds": round(seconds_taken, 4), "files_parsed": 0, "files_removed": 0}
        return Ahead(answer=value, refresh={**refresh, "records_added": 0})
    if line.startswith(b"C"):
        return Ahead(changes=_changes(pending.location, home, line[1:]))
    return Ahead()


def _changes(location: Path, home: str | None, payload: bytes) -> Changes | None:
    import orjson

    from agentdex.ingest.manifest import changes_from

    try:
        sent = orjson.loads(payload)
        return changes_from(location, home, sent["stamp"], sent["now"], sent["sources"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None


class PendingCheck:
    """A check running in a child process (see the module docstring)."""

    __slots__ = ("location", "pid", "reader", "started")

    def __init__(self, pid: int, reader: int, started: float, location: Path) -> None:
        self.pid = pid
        self.reader = reader
        self.started = started
        self.location = location

    def result(self) -> tuple[bytes, float]:
        """The child's answer line (empty when it failed or was slow) and the seconds taken."""
        chunks: list[bytes] = []
        deadline = time.monotonic() + WAIT_SECONDS
        try:
            while (left := deadline - time.monotonic()) > 0:
                ready, _, _ = select.select([self.reader], [], [], left)
                chunk = os.read(self.reader, 65536) if ready else b""
                if not chunk:
                    break
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            os.close(self.reader)
        line = b"".join(chunks)
        complete = line.endswith(b"\n")
        self._reap(complete)
        return (line.rstrip(b"\n") if complete else b""), time.monotonic() - self.started

    def _reap(self, answered: bool) -> None:
        if not answered:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _start_check(root: str | os.PathLike[str] | None, home: str | None) -> PendingCheck | None:
    """Fork a child that runs the no-change check; None when the fork fails.

    Only from :func:`answered_ahead`, which checked that forking is safe and
    handles :data:`CHANGED_SIGNAL` (the child sends it when something changed).
    """
    location = Path(index_root(root, home=home))
    forked = fork_check(location, home)
    if forked is None:
        return None
    pid, reader, started = forked
    return PendingCheck(pid=pid, reader=reader, started=started, location=location)


def index_root(root: str | os.PathLike[str] | None, *, home: str | None) -> Path:
    from agentdex.index.store import index_root as root_of

    return root_of(root, home=home)

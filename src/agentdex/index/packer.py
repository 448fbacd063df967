"""One helper thread that runs a function over jobs in order: the text blocks' packing.

The writer's main thread seals a text block every ~16 KiB of records (~36,000
blocks in a 1 GB cold build) and hands it to one packing thread
(:meth:`agentdex.index.segments.BlockWriter.seal`). A ``ThreadPoolExecutor``
made a ``Future`` (a ``Condition`` with its lock), a work item and a check of
its idle threads for each block, and each result was read back through that
condition. With one thread and jobs done in the order given, two of C's
``SimpleQueue`` do the same: a job goes in one, its result comes out of the
other in the same order, and how many results wait is what is done.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Any


class _Failed:
    """A job's exception, carried to :meth:`OrderedWorker.result` (raised there)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class OrderedWorker:
    """Runs ``work(*job)`` for each :meth:`submit`\\ ted job on one thread of its own, in
    order; :meth:`result` gives the results back in the same order (raising a job's
    exception in its turn)."""

    def __init__(
        self,
        work: Callable[..., Any],
        *,
        name: str,
        initializer: Callable[[], None] | None = None,
    ) -> None:
        self._jobs: SimpleQueue[tuple[Any, ...] | None] = SimpleQueue()
        self._results: SimpleQueue[Any] = SimpleQueue()
        # the thread holds the queues, not this object: a worker dropped without stop()
        # is collected, and its thread told to end (as a ThreadPoolExecutor's would be)
        self._thread = threading.Thread(
            target=_run,
            args=(self._jobs, self._results, work, initializer),
            name=name,
            daemon=True,
        )
        self._thread.start()
        weakref.finalize(self, self._jobs.put, None)

    def submit(self, *job: Any) -> None:
        """Queue ``work(*job)`` after the jobs submitted before it."""
        self._jobs.put(job)

    def done(self) -> int:
        """How many results are ready (those of the oldest jobs not yet read)."""
        return self._results.qsize()

    def result(self) -> Any:
        """The oldest unread job's result, waiting for it."""
        out = self._results.get()
        if isinstance(out, _Failed):
            raise out.error
        return out

    def stop(self) -> None:
        """Drop the jobs not started, let the running one end, and stop the thread."""
        while True:
            try:
                self._jobs.get_nowait()
            except Empty:
                break
        self._jobs.put(None)
        self._thread.join()


def _run(
    jobs: SimpleQueue[tuple[Any, ...] | None],
    results: SimpleQueue[Any],
    work: Callable[..., Any],
    initializer: Callable[[], None] | None,
) -> None:
    """The worker's thread: each job's result (or its exception) in order, until None."""
    if initializer is not None:
        initializer()
    while True:
        job = jobs.get()
        if job is None:
            return
        try:
            out = work(*job)
        except BaseException as exc:  # handed to result(), in its turn
            out = _Failed(exc)
        results.put(out)

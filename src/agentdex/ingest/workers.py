"""Parse workers: forked processes that parse store files while the writer writes.

Each worker has its own pipe; jobs go to workers in turn and come back in
the order they were sent, so the writer indexes files in discovery order
with no queue threads of its own (``multiprocessing.Pool`` spent ~17 s of
CPU in its handler thread on a 1 GB build, waking once per finished file).
A worker sends its results from a thread of its own, so it goes on parsing
while a result bigger than a pipe's buffer waits for the writer's read
(results kept there, not in the writer, whose peak RSS is the one bounded).
A result is pickled as soon as it is made, by the parsing thread, and waits
as bytes: pickled later by the sending thread, a waiting result's objects
were cold in the cache by then, and every garbage collection of the worker
walked the lists of every result still waiting (docs/performance.md, s18-parse).
A worker is forked before the writer starts any thread (tantivy's), and takes
every job waiting in its pipe before each parse, so the writer's sends never
wait long, even for the many jobs it sends before a commit.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from agentdex.tuning import env_int

#: jobs queued per worker (each a few hundred bytes: far under a pipe's buffer); enough that
#: the workers keep parsing through a writer's commit (16, ~1.6 MB of a 1 GB home's files,
#: kept them busy for a fraction of a second of its ~1-2 s commits); 128 so that the job count
#: does not bind before ``parallel.IN_FLIGHT_BYTES`` does (64 a worker held ~12.8 MB at 1 GB)
MAX_JOBS = 128
#: how much lower a worker's scheduling priority is than the writer's (``os.nice``): on two
#: cores the writer's main thread is the build's critical path, and two workers at its
#: priority took a share of the cores from it while their results already waited for it
WORKER_NICE = env_int("AGENTDEX_INDEX_WORKER_NICE", 5)


def _serve(conn: Any, work: Callable[..., Any], inherited: list[Any]) -> None:
    """A worker's loop: run each job, send its result back, stop on ``None`` or EOF.

    ``inherited`` are the writer's ends of the pipes (this worker's and those of
    workers forked before it): closed here, so that when the writer dies (even by
    SIGKILL) this worker reads EOF and exits, releasing what it inherited (the
    writer lock among them).

    Results are sent by a thread of this worker (:func:`_send`), so that the worker
    parses its next jobs while the writer has not read a result yet (a result bigger
    than the pipe's buffer waits for the writer's read; at most ``MAX_JOBS`` of them
    wait here, as jobs come no faster). Each is pickled here, at once, as
    ``Connection.send`` would pickle it (the writer's ``recv`` reads the same bytes):
    its objects are still in the cache, are freed at once, and a result that waits is
    one ``bytes`` object, which no garbage collection walks (a build's workers spent
    ~1.3-1.5x a standalone parse's CPU a record; the sending threads' pickling of cold
    results and the collections' walks over waiting ones were part of it).
    """
    import queue
    import threading
    from collections import deque
    from multiprocessing.reduction import ForkingPickler

    for other in inherited:
        other.close()
    if WORKER_NICE > 0:
        with suppress(OSError):
            os.nice(WORKER_NICE)  # before the sending thread starts: it inherits it
    results: queue.SimpleQueue[Any] = queue.SimpleQueue()
    sender = threading.Thread(target=_send, args=(conn, results), daemon=True)
    sender.start()
    jobs: deque[Any] = deque()
    eof = False
    while True:
        try:
            # every job already in the pipe is taken out before the next parse: the pipe
            # then never fills behind one (the writer sends many at once before a commit)
            while not eof and (not jobs or conn.poll()):
                jobs.append(conn.recv())
        except EOFError:
            eof = True
        if not jobs:
            return
        job = jobs.popleft()
        if job is None:
            results.put(_DONE)
            sender.join()
            return
        results.put(ForkingPickler.dumps(work(*job)))


#: what tells a worker's sending thread that no result follows
_DONE = object()


def _send(conn: Any, results: Any) -> None:
    """A worker's sending thread: each result in turn, pickled already (what
    ``conn.send`` of the result would write); the worker dies if one cannot be sent
    (the writer then reads EOF, as when a worker crashes)."""
    try:
        while True:
            result = results.get()
            if result is _DONE:
                return
            conn.send_bytes(result)
    except BaseException:
        os._exit(1)


class ParseWorkers:
    """``count`` forked processes running ``work(*job)``; results in submission order."""

    def __init__(self, count: int, work: Callable[..., Any]) -> None:
        context = multiprocessing.get_context("fork")
        self.conns: list[Any] = []
        self.processes: list[Any] = []
        for _ in range(count):
            parent, child = context.Pipe(duplex=True)
            inherited = [*self.conns, parent]
            process = context.Process(target=_serve, args=(child, work, inherited), daemon=True)
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)
        self.sent = 0
        self.received = 0
        #: jobs a worker may hold (the caller raises it for a while: before a commit)
        self.max_jobs = MAX_JOBS

    def can_submit(self) -> bool:
        """Room for one more job in the next worker's queue."""
        return self.sent - self.received < self.max_jobs * len(self.conns)

    def submit(self, *job: Any) -> None:
        self.conns[self.sent % len(self.conns)].send(job)
        self.sent += 1

    def next_result(self) -> Any:
        """The result of the oldest job not yet taken."""
        result = self.conns[self.received % len(self.conns)].recv()
        self.received += 1
        return result

    def abandon(self) -> None:
        """Stop the workers now, dropping the jobs they still hold (``close`` then has
        nothing to wait for)."""
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.join(1.0)

    def close(self) -> None:
        for conn in self.conns:
            with suppress(OSError):
                conn.send(None)
            conn.close()
        for process in self.processes:
            process.join(5.0)
            if process.is_alive():
                process.kill()
                process.join(1.0)

    def __enter__(self) -> ParseWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

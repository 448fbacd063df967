"""Parse workers: forked processes that parse store files while the writer writes.

Each worker has its own pipe; jobs go to workers in turn and come back in
the order they were sent, so the writer indexes files in discovery order
with no queue threads of its own (``multiprocessing.Pool`` spent ~17 s of
CPU in its handler thread on a 1 GB build, waking once per finished file).
A worker is forked before the writer starts any thread (tantivy's), and at
most ``MAX_JOBS`` jobs wait in a worker's pipe, so a job never blocks
behind a result the writer has not read yet.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from contextlib import suppress
from typing import Any

#: jobs queued per worker (each a few hundred bytes: far under a pipe's buffer)
MAX_JOBS = 16


def _serve(conn: Any, work: Callable[..., Any], inherited: list[Any]) -> None:
    """A worker's loop: run each job, send its result back, stop on ``None`` or EOF.

    ``inherited`` are the writer's ends of the pipes (this worker's and those of
    workers forked before it): closed here, so that when the writer dies (even by
    SIGKILL) this worker reads EOF and exits, releasing what it inherited (the
    writer lock among them).
    """
    for other in inherited:
        other.close()
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        conn.send(work(*job))


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

    def can_submit(self) -> bool:
        """Room for one more job in the next worker's pipe."""
        return self.sent - self.received < MAX_JOBS * len(self.conns)

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

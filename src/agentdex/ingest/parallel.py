"""How the changed files of a refresh are parsed: here, or in forked workers while this
process writes, and whether their records wait as the tail.

Big refreshes parse in forked worker processes (one per core) while this
process writes: at most ``IN_FLIGHT_BYTES`` of input is parsed ahead of the
writer, so memory stays bounded at any corpus size.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from agentdex.discovery import Source
from agentdex.ingest.feed import Plan, Refresher, parse_in_worker
from agentdex.tuning import env_int

#: parse in worker processes only when there is this much to read
PARALLEL_MIN_BYTES = env_int("AGENTDEX_INDEX_PARALLEL_MIN_BYTES", 32 * 1024 * 1024)
#: parsed-but-not-yet-written input kept in flight (bounds memory: the workers hold their
#: results until the writer reads them, one at a time); 8 MB left the workers idle through
#: most of each commit of a cold build; 16 MB (~128 jobs at 1 GB's ~100 KB a file) left
#: them idle while the writer's main thread waited for tantivy's queue. Workers a few nice
#: levels below the writer (``workers.WORKER_NICE``) parse this far ahead only in room
#: the writer's threads leave, so a longer window costs the writer no CPU
IN_FLIGHT_BYTES = 32 * 1024 * 1024
#: ... and this much more, in at most ``COMMIT_AHEAD_JOBS`` jobs a worker, just before the
#: writer commits: a commit holds the writer 1-3 s at 1 GB (SQLite, the archive, tantivy's
#: commit on one core) and the workers, their window parsed, stood idle through it (the
#: results wait in the workers; the writer still reads one at a time)
COMMIT_AHEAD_BYTES = env_int("AGENTDEX_INDEX_COMMIT_AHEAD_BYTES", 32 * 1024 * 1024)
COMMIT_AHEAD_JOBS = 256
#: a refresh reading less than this leaves its records out of the postings (the tail) ...
DEFER_BYTES = 1024 * 1024
#: ... while the tail holds fewer records than this (readers verify it on every query)
TAIL_RECORDS = 2000

Progress = Callable[[int, int, int, int], None]


def index_changed(refresher: Refresher, changed: list[Source], progress: Progress | None) -> None:
    stats = refresher.stats
    total_bytes = sum(s.size for s in changed)
    index = refresher.index
    if total_bytes >= PARALLEL_MIN_BYTES:
        index.start_bulk_load()
    # a small refresh (an agent appending a message) opens no tantivy writer: its records
    # join the tail that readers verify directly, indexed in one go once it has grown
    tail = index.tail_size()
    stats.deferred = total_bytes < DEFER_BYTES and tail < TAIL_RECORDS
    if stats.deferred:
        index.defer_postings()
    # workers are forked: only while this process runs no threads (tantivy starts some)
    workers = 0 if index.threads_started else worker_count(total_bytes)
    stats.workers = workers
    if workers:
        run_parallel(refresher, changed, workers, progress, total_bytes)
        return
    if tail and not stats.deferred:
        index.catch_up()
    done_bytes = 0
    for i, source in enumerate(changed):
        refresher.index_source(source)
        refresher.file_done(source)
        done_bytes += source.size
        refresher.maybe_commit()
        if progress is not None:
            progress(i + 1, len(changed), done_bytes, total_bytes)
        if refresher.out_of_time():
            return


#: the most parse workers by default: past them the writer process's one thread is the limit
MAX_WORKERS = 4


def worker_count(total_bytes: int) -> int:
    """Parse workers for a refresh of ``total_bytes``: one per core for big ones (at most
    :data:`MAX_WORKERS`).

    On two cores one worker beside the writer was faster than two in three quiet sittings
    at 1 GB and slower in the quietest one (docs/performance.md, s8-build), so the
    default stays one per core. ``AGENTDEX_INDEX_WORKERS=N`` overrides (0 parses in
    this process).
    """
    if total_bytes < PARALLEL_MIN_BYTES:
        return 0
    setting = os.environ.get("AGENTDEX_INDEX_WORKERS", "")
    workers = int(setting) if setting.isdigit() else min(MAX_WORKERS, cores())
    if not workers:
        return 0
    import multiprocessing

    return workers if "fork" in multiprocessing.get_all_start_methods() else 0


def run_parallel(
    refresher: Refresher,
    changed: list[Source],
    workers: int,
    progress: Progress | None,
    total_bytes: int,
) -> None:
    """Parse in ``workers`` forked processes while this one writes, in file order.

    At most ``IN_FLIGHT_BYTES`` of input is parsed ahead of the writer (and
    ``COMMIT_AHEAD_BYTES`` more sent just before a commit), so memory stays
    bounded; commits still happen at file boundaries here.
    """
    from collections import deque

    from agentdex.ingest.workers import MAX_JOBS, ParseWorkers

    pending: deque[Plan] = deque()
    in_flight = 0
    done_bytes = 0
    index = 0

    def submit(window: int) -> None:
        """Send the workers the next files while less than ``window`` bytes are in flight."""
        nonlocal in_flight, done_bytes, index
        while index < len(changed) and (not pending or in_flight < window) and pool.can_submit():
            source = changed[index]
            index += 1
            plan = refresher.plan(source)
            if plan is None:
                refresher.file_done(source)
                done_bytes += source.size
                continue
            pool.submit(source, plan.cursor, refresher.stages)
            pending.append(plan)
            in_flight += source.size

    with ParseWorkers(workers, parse_in_worker) as pool:
        if refresher.index.tail_size():
            refresher.index.catch_up()  # after the fork: it starts tantivy's threads
        while index < len(changed) or pending:
            submit(IN_FLIGHT_BYTES)
            if not pending:
                break
            plan = pending.popleft()
            refresher.index_parsed(plan, pool.next_result())
            refresher.file_done(plan.source)
            in_flight -= plan.source.size
            done_bytes += plan.source.size
            if refresher.commit_due():
                # work for the workers to parse while the commit holds this process
                pool.max_jobs = COMMIT_AHEAD_JOBS
                submit(IN_FLIGHT_BYTES + COMMIT_AHEAD_BYTES)
                pool.max_jobs = MAX_JOBS
            refresher.maybe_commit()
            if progress is not None:
                progress(index - len(pending), len(changed), done_bytes, total_bytes)
            if refresher.out_of_time():
                pool.abandon()  # what the workers still parse is read again next time
                return


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

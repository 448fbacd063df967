"""The text blocks' packing thread (``index/packer.py``): results in the order of the jobs,
a job's exception raised in its turn, and a stop that drops the jobs not started."""

from __future__ import annotations

import gc
import threading

import pytest

from agentdex.index.packer import OrderedWorker


def test_results_come_back_in_the_order_the_jobs_went_in() -> None:
    worker = OrderedWorker(lambda a, b: a * b, name="test-packer")
    try:
        for n in range(200):
            worker.submit(n, 3)
        got = [worker.result() for _ in range(200)]
    finally:
        worker.stop()
    assert got == [3 * n for n in range(200)]


def test_a_failed_job_raises_in_its_turn_and_the_next_still_runs() -> None:
    def work(n: int) -> int:
        if n == 1:
            raise ValueError("job 1")
        return n

    worker = OrderedWorker(work, name="test-packer")
    try:
        for n in range(3):
            worker.submit(n)
        assert worker.result() == 0
        with pytest.raises(ValueError, match="job 1"):
            worker.result()
        assert worker.result() == 2
    finally:
        worker.stop()


def test_done_counts_the_ready_results_and_stop_drops_the_jobs_not_started() -> None:
    gate = threading.Event()
    started = threading.Event()
    ran: list[int] = []

    def work(n: int) -> int:
        if n == 0:
            started.set()
            gate.wait(5)
        ran.append(n)
        return n

    worker = OrderedWorker(work, name="test-packer")
    for n in range(5):
        worker.submit(n)
    # job 0 holds the thread (waited for: a stop() before the thread took job 0 would
    # rightly drop it too, as a job not started)
    assert started.wait(5)
    assert worker.done() == 0
    # stop() takes the four waiting jobs out at once, then waits for job 0
    threading.Timer(0.2, gate.set).start()
    worker.stop()
    assert ran == [0]
    assert worker.done() == 1


def test_a_worker_dropped_without_stop_ends_its_thread() -> None:
    worker = OrderedWorker(lambda n: n, name="test-packer-dropped")
    thread = worker._thread
    worker.submit(1)
    assert worker.result() == 1
    del worker
    gc.collect()
    thread.join(5)
    assert not thread.is_alive()

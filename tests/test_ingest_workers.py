"""Parse workers: results in submission order, and a worker is never held up sending a
result while the writer waits for another worker's job."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentdex.ingest import parallel
from agentdex.ingest.workers import ParseWorkers

#: far longer than any wait the test needs: reached only when a worker is stuck
PATIENCE_S = 60.0


def _job(kind: str, arg: str, size: int) -> tuple[str, str, bytes]:
    """``wait``: until the file ``arg`` exists; ``touch``: create it; ``echo``: nothing.
    Each returns ``size`` bytes (more than a pipe holds makes the sender wait for a read)."""
    if kind == "wait":
        deadline = time.monotonic() + PATIENCE_S
        while not Path(arg).exists():
            if time.monotonic() > deadline:
                return kind, "gave up", b""
            time.sleep(0.01)
        return kind, "found", b""
    if kind == "touch":
        Path(arg).write_text("")
    if kind == "unpicklable":
        return kind, arg, lambda: None  # type: ignore[return-value]
    return kind, arg, b"x" * size


def test_results_come_back_in_the_order_jobs_were_sent() -> None:
    sizes = [10, 300_000, 5, 200_000, 70_000, 1, 0, 1_000_000, 3, 123_456]
    with ParseWorkers(3, _job) as pool:
        for i, size in enumerate(sizes):
            pool.submit("echo", str(i), size)
        got = [pool.next_result() for _ in sizes]
    assert [(r[1], len(r[2])) for r in got] == [(str(i), s) for i, s in enumerate(sizes)]


def test_a_worker_goes_on_while_the_writer_waits_for_another(tmp_path: Path) -> None:
    """Job 0 (worker 0) finishes only once job 3 (worker 1) ran; worker 1 first sends
    job 1's big result, which it can only do if it is read before job 0's."""
    flag = tmp_path / "flag"
    with ParseWorkers(2, _job) as pool:
        pool.submit("wait", str(flag), 0)  # worker 0
        pool.submit("echo", "1", 4 * 1024 * 1024)  # worker 1: far more than a pipe's buffer
        pool.submit("echo", "2", 0)  # worker 0
        pool.submit("touch", str(flag), 0)  # worker 1
        results = [pool.next_result() for _ in range(4)]
    assert results[0][:2] == ("wait", "found")
    assert [r[:2] for r in results[1:]] == [("echo", "1"), ("echo", "2"), ("touch", str(flag))]
    assert len(results[1][2]) == 4 * 1024 * 1024


def test_a_worker_parses_on_before_the_writer_reads_its_result(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    with ParseWorkers(1, _job) as pool:
        pool.submit("echo", "0", 4 * 1024 * 1024)  # far more than a pipe's buffer
        pool.submit("touch", str(flag), 0)
        deadline = time.monotonic() + PATIENCE_S
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert flag.exists(), "the worker waited for the writer to read its first result"
        assert len(pool.next_result()[2]) == 4 * 1024 * 1024
        assert pool.next_result()[:2] == ("touch", str(flag))


def test_a_result_that_cannot_be_sent_ends_the_worker() -> None:
    with ParseWorkers(1, _job) as pool:
        pool.submit("unpicklable", "0", 0)
        with pytest.raises(EOFError):
            pool.next_result()


@pytest.mark.parametrize("count", [1, 2])
def test_many_jobs_in_flight_stay_in_order(count: int) -> None:
    with ParseWorkers(count, _job) as pool:
        got: list[str] = []
        sent = 0
        while sent < 100 or len(got) < 100:
            while sent < 100 and pool.can_submit():
                pool.submit("echo", str(sent), (sent * 7919) % 150_000)
                sent += 1
            got.append(pool.next_result()[1])
    assert got == [str(i) for i in range(100)]


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 2), (3, 3), (4, 4), (8, 4), (64, 4)])
def test_big_refreshes_run_a_worker_per_core_up_to_four(
    monkeypatch: pytest.MonkeyPatch, cores: int, workers: int
) -> None:
    monkeypatch.delenv("AGENTDEX_INDEX_WORKERS", raising=False)
    monkeypatch.setattr(parallel, "cores", lambda: cores)
    assert parallel.worker_count(parallel.PARALLEL_MIN_BYTES) == workers
    assert parallel.worker_count(parallel.PARALLEL_MIN_BYTES - 1) == 0  # small: in-process


def test_the_worker_setting_overrides_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    monkeypatch.setenv("AGENTDEX_INDEX_WORKERS", "3")
    assert parallel.worker_count(parallel.PARALLEL_MIN_BYTES) == 3
    monkeypatch.setenv("AGENTDEX_INDEX_WORKERS", "0")
    assert parallel.worker_count(parallel.PARALLEL_MIN_BYTES) == 0


def test_cores_counts_the_cores_this_process_may_use() -> None:
    assert 1 <= parallel.cores() <= (os.cpu_count() or 1)


def test_a_burst_of_jobs_beyond_a_pipes_buffer_is_taken_and_kept_in_order(
    tmp_path: Path,
) -> None:
    """Before a commit the writer sends many jobs at once (far more bytes than a pipe holds):
    the worker takes them out of its pipe between parses, and they come back in order."""
    flag = tmp_path / "flag"
    count = 600
    with ParseWorkers(1, _job) as pool:
        pool.max_jobs = count + 1
        pool.submit("wait", str(flag), 0)  # the worker is busy while the burst goes out
        flag.write_text("")
        for i in range(count):
            pool.submit("echo", "j" * 1000 + str(i), 0)  # ~1 KB each: ~600 KB in all
        got = [pool.next_result()[1] for _ in range(count + 1)]
    assert got[0] == "found"
    assert got[1:] == ["j" * 1000 + str(i) for i in range(count)]


def _nice_of_threads(kind: str, arg: str, size: int) -> list[int]:
    """The nice value of every thread of this (worker) process, from ``/proc``."""
    values = []
    for task in os.listdir("/proc/self/task"):
        stat = Path(f"/proc/self/task/{task}/stat").read_text()
        values.append(int(stat[stat.rindex(")") + 2 :].split()[16]))  # field 19: nice
    return values


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("lower", [3, 0])
def test_workers_run_below_the_writers_priority(
    monkeypatch: pytest.MonkeyPatch, lower: int
) -> None:
    """Both threads of a worker (the parsing one and the sending one) run ``WORKER_NICE``
    lower than the writer, so the writer's main thread, the build's critical path, goes
    first; 0 leaves them at the writer's."""
    from agentdex.ingest import workers

    monkeypatch.setattr(workers, "WORKER_NICE", lower)
    writer = os.getpriority(os.PRIO_PROCESS, 0)
    expected = min(19, writer + lower)
    with ParseWorkers(2, _nice_of_threads) as pool:
        pool.submit("echo", "0", 0)
        pool.submit("echo", "1", 0)
        got = [pool.next_result() for _ in range(2)]
    for threads in got:
        assert len(threads) == 2  # the worker's main thread and its sender
        assert threads == [expected, expected]
    assert os.getpriority(os.PRIO_PROCESS, 0) == writer  # the writer's own is untouched


class _Pipe:
    """A worker's end of its pipe, in this process: the jobs to hand out, what is sent."""

    def __init__(self, jobs: list[object]) -> None:
        self.jobs = jobs
        self.sent_bytes: list[bytes] = []
        self.sent_objects: list[object] = []

    def poll(self) -> bool:
        return bool(self.jobs)

    def recv(self) -> object:
        if not self.jobs:
            raise EOFError
        return self.jobs.pop(0)

    def send(self, obj: object) -> None:
        self.sent_objects.append(obj)

    def send_bytes(self, data: bytes) -> None:
        self.sent_bytes.append(bytes(data))


def test_a_result_waits_pickled_and_is_sent_as_the_writers_recv_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parsing thread pickles each result as it is made (a waiting result is one bytes
    object: no collection walks it, no cold objects are pickled later), and the bytes sent
    are what ``Connection.send`` of the result writes, so the writer's ``recv`` is as
    before."""
    from multiprocessing.reduction import ForkingPickler

    from agentdex.ingest import workers

    monkeypatch.setattr(workers, "WORKER_NICE", 0)  # (in this process: never lower it)
    shared = ("claude-code", "transcripts", "s1")
    pipe = _Pipe([(shared, 1), (shared, 2), None])
    workers._serve(pipe, lambda context, n: [context, context, n], [])
    assert pipe.sent_objects == []
    expected = [[shared, shared, 1], [shared, shared, 2]]
    assert pipe.sent_bytes == [bytes(ForkingPickler.dumps(item)) for item in expected]
    first = ForkingPickler.loads(pipe.sent_bytes[0])
    assert first == expected[0] and first[0] is first[1]  # one object still, as sent whole

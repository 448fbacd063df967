"""Real processes: an index killed with SIGKILL resumes consistently; readers racing a
writer see whole files only; two writers at once lose nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.index.store import Location, index_root
from test_index_fixtures import ROWS, register, store_dir, write_file

TESTS_DIR = Path(__file__).resolve().parent
SRC_DIR = TESTS_DIR.parent / "src"
N_FILES, PER_FILE = 160, 40

SCRIPT = """
import sys
sys.path[:0] = [{src!r}, {tests!r}]
import test_index_fixtures as fx
fx.register()
from agentdex.api import search as api
stats = api.refresh(home=sys.argv[1], rows=fx.ROWS)
print(stats.records_added, stats.files_parsed + stats.files_resumed)
"""


def _corpus(home: Path) -> dict[str, int]:
    d = store_dir(home)
    counts = {}
    for f in range(N_FILES):
        path = d / f"f{f:04d}.jsonl"
        write_file(
            path,
            [
                {"session": f"s{f}", "text": f"rec f{f}r{r} " + "lorem ipsum dolor " * 20}
                for r in range(PER_FILE)
            ],
        )
        counts[str(path)] = PER_FILE
    return counts


def _indexer(home: Path, workers: int = 0) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["AGENTDEX_INDEX_COMMIT_BYTES"] = "40000"
    env["AGENTDEX_INDEX_WORKERS"] = str(workers)
    env["AGENTDEX_INDEX_PARALLEL_MIN_BYTES"] = "0"
    script = SCRIPT.format(src=str(SRC_DIR), tests=str(TESTS_DIR))
    return subprocess.Popen(
        [sys.executable, "-c", script, str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _committed_files() -> int:
    gen = Location(index_root()).current()
    if gen is None or not (gen / "index.db").exists():
        return 0
    try:
        db = sqlite3.connect(gen / "index.db", timeout=5)
        try:
            return int(db.execute("SELECT count(*) FROM files").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def _per_file() -> Counter[str]:
    result = api.search("rec", refresh_first=False, limit=None, dedup=False)
    return Counter(r["source_path"] for r in result.results)


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


@pytest.mark.serial
@pytest.mark.parametrize("workers", [0, 1])
def test_sigkill_mid_index_resumes_consistently(home: Path, workers: int) -> None:
    expected = _corpus(home)
    proc = _indexer(home, workers)
    deadline = time.monotonic() + 60
    while _committed_files() < 5:
        assert proc.poll() is None, "indexer finished before it could be killed; corpus too small"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    partial = _per_file()
    assert 0 < len(partial) < N_FILES
    assert all(n == PER_FILE for n in partial.values())  # whole files only
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.files_unchanged == len(partial)  # committed work is kept
    assert _per_file() == Counter(expected)
    assert api.index_status()["records"] == N_FILES * PER_FILE


@pytest.mark.serial
def test_readers_and_two_writers_at_once(home: Path) -> None:
    expected = _corpus(home)
    first, second = _indexer(home), _indexer(home, workers=1)
    snapshots = 0
    while first.poll() is None or second.poll() is None:
        seen = _per_file()  # a reader racing the writers
        assert all(n == PER_FILE for n in seen.values()), seen
        snapshots += 1
        time.sleep(0.02)
    out1, err1 = first.communicate()
    out2, err2 = second.communicate()
    assert first.returncode == 0, err1
    assert second.returncode == 0, err2
    added = [int(out.split()[0]) for out in (out1, out2)]
    assert sum(added) == N_FILES * PER_FILE  # the second writer waited, then found no work
    assert snapshots > 0
    assert _per_file() == Counter(expected)

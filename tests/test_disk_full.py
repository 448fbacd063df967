"""A full disk while indexing: one line, exit 1, the index as it was committed.

The limit is real: ``ulimit -f`` in a shell that then runs ``agentdex index``
(Python ignores SIGXFSZ, so writes past the limit fail with EFBIG, which
SQLite reports as a disk I/O error and plain writes as OSError).
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hardening_support import child_env
from mcp_support import write_claude_session


def _batch(home: Path, prefix: str, sessions: int, words: int) -> None:
    rng = random.Random(prefix)
    vocabulary = ["".join(rng.choice("abcdefghijklmnop") for _ in range(7)) for _ in range(4000)]
    for n in range(sessions):
        turns = [
            ("user", f"{prefix} " + " ".join(rng.choice(vocabulary) for _ in range(words)))
            for _ in range(40)
        ]
        write_claude_session(home, f"{prefix}{n:04d}-0000", home / "proj", turns)


def _limited(*args: str) -> subprocess.CompletedProcess[str]:
    """``agentdex ARGS`` in a shell whose file size limit is 256 blocks."""
    return subprocess.run(
        ["bash", "-c", 'ulimit -f 256 && exec "$0" -m agentdex "$@"', sys.executable, *args],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )


def _total(run_cli: Any, word: str) -> int:
    done = run_cli("search", "--no-refresh", "--json", word)
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)["stats"]["total"])


def _index_then_grow(home: Path, run_cli: Any) -> None:
    """Index a small "firstbatch" history (120 records), then add megabytes of
    "secondbatch" (1,600 records) that the next refresh must write."""
    _batch(home, "firstbatch", sessions=3, words=20)
    assert run_cli("index").returncode == 0
    _batch(home, "secondbatch", sessions=40, words=120)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for ulimit -f")
def test_a_file_size_limit_mid_index_is_one_line_and_keeps_the_index(
    home: Path, run_cli: Any
) -> None:
    _index_then_grow(home, run_cli)
    before = _total(run_cli, "firstbatch")
    assert before == 120
    limited = _limited("index")
    assert limited.returncode == 1, limited.stderr[-2000:]
    assert "Traceback" not in limited.stderr
    lines = limited.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agentdex: "), limited.stderr[-2000:]
    assert "index keeps its last committed state" in lines[0]
    assert "size limit" in lines[0] or "cannot write the index" in lines[0]

    # the index is intact: what was committed is searchable and the database checks out
    assert _total(run_cli, "firstbatch") == before
    from agentdex.index.store import index_root

    index_dir = index_root()  # this home's index (one per home)
    current = (index_dir / "CURRENT").read_text().strip()
    db = sqlite3.connect(index_dir / current / "index.db")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()

    assert run_cli("index").returncode == 0  # with room again, the next index completes
    assert _total(run_cli, "firstbatch") == before
    assert _total(run_cli, "secondbatch") == 40 * 40


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for ulimit -f")
def test_a_search_whose_refresh_fills_the_disk_searches_the_index_as_it_is(
    home: Path, run_cli: Any
) -> None:
    _index_then_grow(home, run_cli)  # the search's refresh must write megabytes
    limited = _limited("search", "--json", "firstbatch")
    assert limited.returncode == 0, limited.stderr[-2000:]
    assert "Traceback" not in limited.stderr
    stats = json.loads(limited.stdout)["stats"]
    assert stats["total"] == 120  # what the last commit held
    assert stats["refresh"] == "failed: disk full"
    assert any("searched the index as it is" in w for w in stats["warnings"])
    human = _limited("search", "firstbatch")
    assert human.returncode == 0 and "searched the index as it is" in human.stderr
    assert run_cli("index").returncode == 0  # with room again, everything is there
    assert _total(run_cli, "secondbatch") == 40 * 40

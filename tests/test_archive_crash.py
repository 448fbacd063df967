"""Crash safety of the archive: real ``agentdex`` processes killed with SIGKILL in a loop.

Each kill is timed by the archive's own files: the process is killed once the archive
database's WAL and chunk file have grown by a random amount since it started (so kills
land while chunks are appended, while batches commit, while a vanished file's records
are kept or re-imported, during a rebuild), or once a forget has started writing its new
chunk file (and, in some rounds, while a forget is held inside its switch: a fast machine
can finish the switch between two looks at the folder). After every kill the archive
database passes ``integrity_check``, every entry it lists reads back as exactly a text
that was indexed (no half entry is visible), and nothing archived before is lost. A final
complete run holds every record the sources ever showed it.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.archive.store import archive_path, open_reader
from agentdex.index.store import index_root
from test_index_fixtures import ROWS, register, store_dir, write_file

TESTS_DIR = Path(__file__).resolve().parent
SRC_DIR = TESTS_DIR.parent / "src"
PER_FILE = 40
WORDS = [f"w{n:x}{'xyz'[n % 3]}" for n in range(3000)]

INDEX = """
import sys
sys.path[:0] = [{src!r}, {tests!r}]
import test_index_fixtures as fx
fx.register()
from agentdex.api import search as api
api.refresh(home=sys.argv[1], rows=fx.ROWS, full=sys.argv[2] == "full")
"""

FORGET = """
import sys, time
from pathlib import Path
sys.path[:0] = [{src!r}, {tests!r}]
from agentdex.api import archive
if len(sys.argv) > 2:  # hold: stop inside the switch, new chunk file written, not committed
    from agentdex.archive.rewrite import ChunkRewrites
    rewrite = ChunkRewrites._rewrite_without
    def held(self, *args, **kw):
        rewrite(self, *args, **kw)
        Path(sys.argv[2]).touch()
        time.sleep(120)
    ChunkRewrites._rewrite_without = held
archive.forget(archive.forget_plan(session=sys.argv[1]))
"""


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _text(f: int, r: int) -> str:
    """Text that compresses about as badly as real prose (so chunks fill and get appended)."""
    chance = random.Random(f * 1000 + r)
    return f"rec f{f}r{r} " + " ".join(chance.choice(WORDS) for _ in range(60))


def _write(files: dict[int, Path], home: Path, first: int, count: int) -> None:
    d = store_dir(home)
    for f in range(first, first + count):
        files[f] = d / f"f{f:04d}.jsonl"
        rows = [
            {"session": f"s{f}", "text": _text(f, r), "ts": f * 100 + r} for r in range(PER_FILE)
        ]
        write_file(files[f], rows)


def _run(script: str, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["AGENTDEX_INDEX_COMMIT_BYTES"] = "30000"
    env["AGENTDEX_INDEX_WORKERS"] = "0"
    code = script.format(src=str(SRC_DIR), tests=str(TESTS_DIR))
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _archive_bytes() -> int:
    folder = archive_path(index_root())
    names = ["archive.db-wal", *(p.name for p in folder.glob("chunks-*.blobs"))]
    total = 0
    for name in names:
        try:
            total += (folder / name).stat().st_size
        except FileNotFoundError:
            continue
    return total


def _kill_when(proc: subprocess.Popen[bytes], ready: object) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()`` is true; False when it finished first."""
    deadline = time.monotonic() + 120
    while not ready():  # type: ignore[operator]
        if proc.poll() is not None:
            stderr = proc.stderr.read() if proc.stderr else b""
            assert proc.returncode == 0, stderr.decode()
            return False
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return True


def _archived() -> dict[int, tuple[str, str]]:
    """key -> (session, text) of every entry, after checking the database is whole."""
    folder = archive_path(index_root())
    if not (folder / "archive.db").exists():
        return {}
    check = sqlite3.connect(folder / "archive.db")
    try:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        check.close()
    store = open_reader(index_root())  # None: killed before its schema was committed
    if store is None:
        return {}
    try:
        return {int(e[0]): (str(e[5]), store.text(e[16], e[17], e[18])) for e in store.entries()}
    finally:
        store.close()


def _is_indexed_text(session: str, text: str) -> bool:
    f = int(session[1:])
    return any(text == _text(f, r) for r in range(PER_FILE))


@pytest.mark.serial
def test_sigkill_while_archiving_loses_nothing_and_shows_no_half_entry(home: Path) -> None:
    files: dict[int, Path] = {}
    _write(files, home, 0, 60)
    chance = random.Random(13)
    before: dict[int, tuple[str, str]] = {}
    gone: set[int] = set()  # files deleted or truncated once their records were archived
    kills = 0
    for round_ in range(9):
        _write(files, home, len(files), 12)  # new conversations: new archive work every round
        start = _archive_bytes()
        grow = chance.uniform(500, 120_000)
        mode = "full" if round_ % 3 == 2 else "incremental"
        proc = _run(INDEX, str(home), mode)
        kills += _kill_when(proc, lambda start=start, grow=grow: _archive_bytes() - start >= grow)
        now = _archived()
        for session, text in now.values():
            assert _is_indexed_text(session, text), (session, text[:40])  # whole and right
        assert before.keys() <= now.keys(), "an archived record was lost"
        before = now
        # change sources whose records are all archived: later runs keep and re-import them
        archived = Counter(session for session, _ in now.values())
        for f in [f for f in files if f not in gone and archived[f"s{f}"] == PER_FILE][:3]:
            gone.add(f)
            if (f + round_) % 2:
                files[f].unlink()
            else:
                write_file(files[f], [{"session": f"s{f}", "text": _text(f, 0), "ts": f * 100}])
    assert kills >= 5, f"only {kills} of 9 runs were killed before they finished"
    api.refresh(home=str(home), rows=ROWS)
    final = _archived()
    assert before.keys() <= final.keys() and len(final) == len(files) * PER_FILE
    found = api.search("rec", refresh_first=False, limit=None, dedup=False)
    texts = Counter(r["text"] for r in found.results)
    assert texts == Counter(_text(f, r) for f in files for r in range(PER_FILE))
    for result in found.results:
        f = int(result["session_id"][1:])
        still_there = f not in gone or (files[f].exists() and result["text"] == _text(f, 0))
        assert result["source_gone"] is (not still_there), result["ref"]


class _ForgetStarted:
    """True ``pause`` seconds after a forget began writing its new chunk file."""

    def __init__(self, folder: Path, pause: float) -> None:
        self.folder, self.pause = folder, pause
        self.seen: float | None = None

    def __call__(self) -> bool:
        if self.seen is None and len(list(self.folder.glob("chunks-*.blobs"))) > 1:
            self.seen = time.monotonic()
        return self.seen is not None and time.monotonic() - self.seen >= self.pause


@pytest.mark.serial
def test_sigkill_during_forget_leaves_a_whole_archive_and_the_next_writer_finishes(
    home: Path,
) -> None:
    files: dict[int, Path] = {}
    _write(files, home, 0, 100)
    api.refresh(home=str(home), rows=ROWS)
    folder = archive_path(index_root())
    chance = random.Random(7)
    mid_switch = 0
    for f in range(6):
        before = _archived()
        if f % 3 == 0:  # a kill certain to land mid-switch, however fast the machine
            marker = home.parent / f"held-{f}"
            proc = _run(FORGET, f"s{f}", str(marker))
            assert _kill_when(proc, marker.exists)
        else:  # a kill at a random moment after the new chunk file appeared
            pause = chance.choice([0.0, 0.0, 0.005, 0.02, 0.1])
            proc = _run(FORGET, f"s{f}")
            _kill_when(proc, _ForgetStarted(folder, pause))
        mid_switch += len(list(folder.glob("chunks-*.blobs"))) > 1
        after = _archived()
        for key, (session, text) in after.items():
            assert _is_indexed_text(session, text)
            assert key in before
        assert all(before[k][0] == f"s{f}" for k in before.keys() - after.keys())
        api.refresh(home=str(home), rows=ROWS)  # a killed forget is finished by the next writer
        assert len(list(folder.glob("chunks-*.blobs"))) == 1
        tombstoned = (
            sqlite3.connect(folder / "archive.db")
            .execute("SELECT count(*) FROM tombstones WHERE session_id = ?", (f"s{f}",))
            .fetchone()[0]
        )
        held = sum(1 for session, _ in _archived().values() if session == f"s{f}")
        assert held == (0 if tombstoned else PER_FILE)
        hits = api.search(f"f{f}r", refresh_first=False, limit=None).results
        assert len(hits) == (0 if tombstoned else PER_FILE)
    assert mid_switch >= 2, "no kill landed while a forget was switching chunk files"

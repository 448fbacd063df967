"""Context history under SIGKILL and concurrent writers: never a half entry, nothing lost.

Child processes record a new version as fast as they can (the workspace
file changes before every snapshot) and print each recorded time once the
call returned. The parent kills them with SIGKILL at random moments and
then checks the database: it opens, passes ``integrity_check``, every
version's objects are all there, and every time a child reported is there.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import orjson

from agentdex.context.history import history_path
from context_helpers import SRC, write

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agentdex.api import context as api

    ws, tag = Path(sys.argv[1]), int(sys.argv[2])
    i = 0
    while True:
        i += 1
        body = f"# rules {tag}-{i}\\n" + "keep it short\\n" * (i % 50)
        (ws / "AGENTS.md").write_text(body)
        (ws / "skills" / "s" / "SKILL.md").write_text(f"---\\nname: s\\n---\\n{i}\\n")
        at = tag * 1_000_000 + i
        heard = []
        api.snapshot(str(ws), now=float(at), warn=heard.append)
        if not heard:
            print(at, flush=True)
    """
)


def start(ws: Path, tag: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ws), str(tag)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def kill_after_progress(child: subprocess.Popen[str], delay: float) -> set[int]:
    """Wait for the first recorded version, let it run ``delay`` s more, SIGKILL it."""
    assert child.stdout is not None
    reported = {int(child.stdout.readline() or 0)}
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate(timeout=30)
    assert "Traceback" not in err, err
    reported |= {int(line) for line in out.split()}
    reported.discard(0)
    return reported


def check_consistent(reported: set[int]) -> int:
    """Every version whole, every reported observation present; returns the version count."""
    with sqlite3.connect(history_path()) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {h: (k, d) for h, k, d in db.execute("SELECT hash, kind, data FROM objects")}
        versions = db.execute("SELECT entries, roots_hash, first_seen, last_seen FROM versions")
        spans: list[tuple[float, float]] = []
        count = 0
        for packed, roots_hash, first, last in versions:
            count += 1
            assert stored[roots_hash][0] == "roots"
            entries = [packed[i : i + 32].hex() for i in range(0, len(packed), 32)]
            assert len(entries) == 2  # AGENTS.md and the skill, never a part of a version
            for digest in entries:
                kind, data = stored[digest]
                entry = orjson.loads(zlib.decompress(data))
                assert kind == "entry"
                if entry["body"] is not None:
                    assert stored[entry["body"]][0] == "body"
            spans.append((first, last))
    missing = [t for t in reported if not any(a <= t <= b for a, b in spans)]
    assert not missing, sorted(missing)[:5]  # every observation a child saw returned is kept
    return count


def test_sigkill_while_recording_leaves_no_half_entry(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "skills" / "s" / "SKILL.md", "---\nname: s\n---\n")
    rng = random.Random(13)
    reported: set[int] = set()
    versions = 0
    for round_no in range(1, 7):
        child = start(ws, round_no)
        reported |= kill_after_progress(child, rng.uniform(0.0, 0.4))
        now = check_consistent(reported)
        assert now >= versions  # nothing recorded before is ever lost
        versions = now
    assert versions >= 6


def test_concurrent_writers_then_killed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "skills" / "s" / "SKILL.md", "---\nname: s\n---\n")
    children = [start(ws, tag) for tag in (7, 8)]
    reported: set[int] = set()
    for child in children:
        assert child.stdout is not None
        reported.add(int(child.stdout.readline() or 0))
    time.sleep(0.5)
    for child in children:
        child.send_signal(signal.SIGKILL)
    for child in children:
        out, err = child.communicate(timeout=30)
        assert "Traceback" not in err, err
        reported |= {int(line) for line in out.split()}
    reported.discard(0)
    assert check_consistent(reported) >= 2

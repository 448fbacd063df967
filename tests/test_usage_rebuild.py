"""A read command never waits for a whole rebuild: an index of an older format (or built with
another redaction setting) is rebuilt as a first build when ``usage`` (or ``search``) refreshes
it, newest files first, stopped at the command's deadline and said to be partial (exit 7).

Before, a rebuild kept the old (unreadable) generation current and ran to the end inside the
command: ``agentdex usage`` on a 1 GB history indexed by the previous format ran for more
than ten minutes. Real Claude Code transcripts, real ``agentdex`` processes; the size
threshold and the deadline are lowered through the environment so the build stops after its
first file whatever the machine's speed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from test_usage_index import _claude, _transcript

FILES = 4
STOP_AT_ONCE = {
    "AGENTDEX_FIRST_ANSWER_BYTES": "0",
    "AGENTDEX_FIRST_ANSWER_SECONDS": "0",
    "AGENTDEX_BACKGROUND_BUILD": "0",
}


def _history(home: Path) -> None:
    """Four conversations, one call each (input 10**n); conversation 0 is the newest file."""
    now = time.time()
    for n in range(FILES):
        session = f"c{n}"
        path = _transcript(
            home, session, [_claude(session, f"m{n}", "2026-03-01T10:00:00Z", (10**n, 0, 0, 1))]
        )
        os.utime(path, (now - 3600 * n, now - 3600 * n))


def _outdated(data_dir: Path) -> None:
    """Make the index look written by the previous format (and its manifest stale)."""
    [db_path] = list(data_dir.rglob("gen-*/index.db"))
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE meta SET value = 'agentdex-index-3' WHERE key = 'format'")
    for found in data_dir.rglob("refresh-manifest.json"):
        found.unlink()


def _usage(run_cli: Any, *args: str) -> tuple[int, dict[str, Any], str]:
    done = run_cli("usage", "--json", *args, env=STOP_AT_ONCE)
    return done.returncode, json.loads(done.stdout), done.stderr


def test_usage_on_an_outdated_index_answers_partial_then_the_build_completes(
    home: Path, run_cli: Any
) -> None:
    _history(home)
    assert run_cli("index").returncode == 0
    code, before, _err = _usage(run_cli)
    assert code == 0 and before["totals"]["input_tokens"] == 1111
    _outdated(Path(os.environ["AGENTDEX_DATA_DIR"]))

    code, data, err = _usage(run_cli)
    assert any("rebuilding it in the new format" in w for w in data["stats"]["warnings"])
    assert code == 7 and data["status"] == "partial", (code, data["status"], err)
    assert data["coverage"]["files"] == 1 and data["coverage"]["files_total"] == FILES
    assert data["totals"]["input_tokens"] == 1  # the newest file's call
    # the next command goes on where the first stopped
    code, data, _err = _usage(run_cli)
    assert code == 7 and data["totals"]["input_tokens"] == 11
    # `agentdex index` has no deadline: it completes the build
    assert run_cli("index", env=STOP_AT_ONCE).returncode == 0
    code, data, _err = _usage(run_cli)
    assert code == 0 and data["status"] == "ok" and "coverage" not in data
    assert data["totals"] == before["totals"]
    # one generation left: the outdated one is gone
    assert len(list(Path(os.environ["AGENTDEX_DATA_DIR"]).rglob("gen-*/index.db"))) == 1


def test_the_terminal_gets_the_table_one_line_and_exit_7(home: Path, run_cli: Any) -> None:
    _history(home)
    assert run_cli("index").returncode == 0
    _outdated(Path(os.environ["AGENTDEX_DATA_DIR"]))
    done = run_cli("usage", env=STOP_AT_ONCE)
    assert done.returncode == 7
    assert "2026-03-01" in done.stdout and "total" in done.stdout
    lines = [line for line in done.stderr.splitlines() if "still being built" in line]
    assert len(lines) == 1 and "the newest 25% of the history" in lines[0]


def test_agentdex_index_still_rebuilds_in_one_go(home: Path, run_cli: Any) -> None:
    _history(home)
    assert run_cli("index").returncode == 0
    _outdated(Path(os.environ["AGENTDEX_DATA_DIR"]))
    done = run_cli("index", "--json", env=STOP_AT_ONCE)
    assert done.returncode == 0, done.stderr
    code, data, _err = _usage(run_cli, "--no-refresh")
    assert code == 0 and data["totals"]["input_tokens"] == 1111

"""Session logs: torn lines, corruption, and real concurrent appends from processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from agentdex.api import sessions as api
from agentdex.errors import CorruptError
from agentdex.sessions import store
from agentdex.sessions.log import append_event, read_events
from conftest import SRC_DIR


def _log(session_id: str) -> Path:
    return store.sessions_dir() / f"{session_id}.jsonl"


def test_torn_last_line_is_ignored_and_sealed_by_the_next_append(tmp_path: Path) -> None:
    created = api.new_session(workdir=str(tmp_path), label="torn")
    path = _log(created["id"])
    with path.open("ab") as fh:  # a crash mid-append: half a line, no newline
        fh.write(b'{"type":"workdir-changed","at":1,"workingDirectory":"/som')
    shown = api.show_session(created["id"])
    assert shown["working_directory"] == str(tmp_path) and shown["skipped_lines"] == 1
    other = tmp_path / "other"
    other.mkdir()
    after = api.set_workdir(created["id"], str(other))
    assert after["working_directory"] == str(other)
    events, skipped = read_events(path)
    assert [e["type"] for e in events] == ["start", "workdir-changed"]
    assert skipped == 1  # the fragment is now a sealed bad line, the new event is intact
    assert path.read_bytes().endswith(b"\n")


def test_first_event_not_start_is_corrupt(run_cli) -> None:  # type: ignore[no-untyped-def]
    good = api.new_session(label="fine")
    bad = store.sessions_dir() / "s-20200101-000000-dead.jsonl"
    bad.write_bytes(b'{"type":"workdir-changed","at":1,"workingDirectory":"/x"}\n')
    empty = store.sessions_dir() / "s-20200101-000000-beef.jsonl"
    empty.write_bytes(b"")
    garbage = store.sessions_dir() / "s-20200101-000000-cafe.jsonl"
    garbage.write_bytes(b"not json\n" + orjson.dumps({"type": "start", "id": "x"}) + b"\n")
    for path in (bad, empty, garbage):
        with pytest.raises(CorruptError):
            read_events(path)
    result = run_cli("session", "show", "s-20200101-000000-dead")
    assert result.returncode == 6 and "does not start with a start event" in result.stderr
    listed = api.list_sessions()
    assert [s["id"] for s in listed["sessions"]] == [good["id"]]
    assert sorted(p["id"] for p in listed["unreadable"]) == sorted(
        p.stem for p in (bad, empty, garbage)
    )
    with pytest.raises(CorruptError):
        api.set_workdir("s-20200101-000000-dead", None)
    assert bad.read_bytes().count(b"\n") == 1  # a corrupt log is never appended to


_WRITER = """
import sys
from pathlib import Path
from agentdex.sessions.log import append_event
path, tag, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
pad = "x" * 3000  # lines bigger than PIPE_BUF, so atomicity is not an accident
for i in range(count):
    append_event(path, {"type": "note", "writer": tag, "n": i, "pad": pad})
"""


def test_appends_from_concurrent_processes_all_land() -> None:
    created = api.new_session(label="busy")
    path = _log(created["id"])
    env = dict(os.environ, PYTHONPATH=str(SRC_DIR))
    writers, count = 4, 150
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"w{k}", str(count)], env=env)
        for k in range(writers)
    ]
    assert [p.wait(60) for p in procs] == [0] * writers
    events, skipped = read_events(path)
    assert skipped == 0
    notes = [e for e in events if e["type"] == "note"]
    assert len(notes) == writers * count
    for k in range(writers):
        mine = [e["n"] for e in notes if e["writer"] == f"w{k}"]
        assert mine == list(range(count))  # each writer's events, complete and in order
    # the log still folds: unknown event types are kept but ignored
    assert api.show_session(created["id"])["event_count"] == 1 + writers * count


def test_append_to_missing_log_is_not_found(tmp_path: Path) -> None:
    from agentdex.errors import NotFoundError

    with pytest.raises(NotFoundError):
        append_event(tmp_path / "nope.jsonl", {"type": "x"})

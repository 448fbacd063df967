"""Goose: sessions.db (synthetic in goose's v13 schema) and legacy JSONL files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _agent_helpers import build_db, count_raw, parse
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

FIXTURE = Path(__file__).parent / "fixtures" / "goose"
DB = "goose.sqlite.v1"
LEGACY = "goose.session_jsonl.v1"


def _install(sessions: Path) -> Path:
    sessions.mkdir(parents=True)
    build_db(sessions / "sessions.db", (FIXTURE / "sessions.db.sql").read_text(), wal=True)
    for name in ("20250221_notes.jsonl", "20261103_1.jsonl"):
        shutil.copy(FIXTURE / name, sessions / name)
    return sessions


def test_database_records(tmp_path: Path) -> None:
    db = _install(tmp_path / "sessions") / "sessions.db"
    records, cursor, diags = parse(DB, db)
    assert [(r.session_id, r.role, r.kind, r.text[:36]) for r in records] == [
        ("20261103_1", "user", "prompt", "why is test_checkout flaky?"),
        ("20261103_1", "assistant", "message", "Let me look at the test."),
        ("20261103_1", "assistant", "tool_call", 'developer__shell {"command":"rg -n s'),
        ("20261103_1", "tool", "tool_result", "12:    time.sleep(0.1)"),
        ("20261103_1", "assistant", "reasoning", "A fixed sleep races the worker."),
        ("20261103_1", "assistant", "message", "It sleeps a fixed 100 ms; poll for t"),
        ("20261103_1", "system", "message", "Summary of the conversation so far: "),
        ("20261103_1", "user", "prompt", "do it"),
        ("20261103_1", "assistant", "message", "Replaced the sleep with wait_for(ord"),
        ("20261103_2", "user", "message", "List the checkout tests."),  # a sub-agent session
        ("20261103_2", "assistant", "message", "tests/test_checkout.py has 4 tests."),
    ]
    assert records[0].cwd == "/home/dev/shop"
    assert records[0].locator == "row:messages/1" and records[2].locator == "row:messages/2#1"
    assert records[0].timestamp == 1793700030.0
    assert records[2].extra == {"call_id": "toolu_1"}
    assert cursor.titles == {
        "20261103_1": "Flaky checkout test",
        "20261103_2": "subagent: list tests",
    }
    drift = sorted((d.what, d.name, d.count) for d in diags.drift.values())
    assert drift == [
        ("content type", "mcpUiResource", 1),
        ("table", "thread_messages without a session message", 1),
    ]
    [usage] = cursor.usage
    assert (usage.session_id, usage.input_tokens, usage.output_tokens) == ("20261103_1", 18400, 950)


def test_database_counts_agree(tmp_path: Path) -> None:
    db = _install(tmp_path / "sessions") / "sessions.db"
    records, cursor, _ = parse(DB, db)
    assert cursor.units == count_raw(DB, db) == 9
    roles = get_parser(DB).count_roles
    assert roles is not None
    assert roles(db) == {
        "20261103_1": {"prompts": 2, "replies": 3},
        "20261103_2": {"prompts": 0, "replies": 1},
    }
    assert sum(r.kind == "prompt" for r in records) == 2


def test_legacy_file_not_yet_imported(tmp_path: Path) -> None:
    sessions = _install(tmp_path / "sessions")
    path = sessions / "20250221_notes.jsonl"
    records, cursor, _ = parse(LEGACY, path)
    assert [(r.role, r.kind, r.text[:30]) for r in records] == [
        ("user", "prompt", "paginate GET /notes"),
        ("assistant", "message", "Added limit and offset."),
        ("assistant", "tool_call", 'developer__text_editor {"comma'),
        ("tool", "tool_result", "error: -32603: path not found"),
    ]
    assert {(r.session_id, r.cwd) for r in records} == {("20250221_notes", "/home/dev/notes-api")}
    assert records[0].locator == "line:2" and records[0].timestamp == 1740171566.0
    assert cursor.titles == {"20250221_notes": "Add pagination to notes"}
    assert cursor.units == count_raw(LEGACY, path) == 3


def test_legacy_file_goose_imported_is_read_in_the_database(tmp_path: Path) -> None:
    sessions = _install(tmp_path / "sessions")
    path = sessions / "20261103_1.jsonl"
    records, cursor, _ = parse(LEGACY, path)
    assert records == [] and cursor.units == count_raw(LEGACY, path) == 0
    (sessions / "sessions.db").unlink()
    assert [r.text for r in parse(LEGACY, path)[0]] == ["paginate GET /notes"]


def test_wal_is_read_and_nothing_is_written(tmp_path: Path) -> None:
    sessions = _install(tmp_path / "sessions")
    before = {p.name: p.stat().st_mtime_ns for p in sessions.iterdir()}
    records, _, _ = parse(DB, sessions / "sessions.db")
    assert records
    assert {p.name: p.stat().st_mtime_ns for p in sessions.iterdir()} == before


def test_discovery_every_location(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(home / ".local/share/goose/sessions")
    found = discover(home, agents=["goose"]).sources
    assert sorted(s.store for s in found) == [
        "goose.sessions_db",
        "goose.sessions_jsonl",
        "goose.sessions_jsonl",
    ]
    assert all(r.agent == "goose" for s in found for r in run(s))
    root = tmp_path / "goose-root"
    _install(root / "data" / "sessions")
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(root))
    assert {s.root.path for s in discover(home, agents=["goose"]).sources} == {root / "data"}
    monkeypatch.delenv("GOOSE_PATH_ROOT")
    users = tmp_path / "Users"
    _install(users / "ada" / "AppData/Roaming/Block/goose/data/sessions")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    hosts = {s.host for s in discover(home, agents=["goose"]).sources}
    assert hosts == {None, "windows:ada"}


def test_resume_row() -> None:
    assert resume_row("goose").argv == (
        "goose",
        "session",
        "--resume",
        "--session-id",
        "{session_id}",
    )

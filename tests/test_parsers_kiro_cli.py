"""Kiro CLI and the Amazon Q Developer CLI: data.sqlite3 (conversations, conversations_v2) and
~/.kiro/sessions/cli logs, synthetic in the shapes of the open source (Amazon Q) and of the
public readers (Kiro), see docs/agents.md; discovery on every OS layout, shadowing, usage."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from _agent_helpers import HeldWriter, build_db, count_raw, parse, traced_statements
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

FIXTURE = Path(__file__).parent / "fixtures" / "kiro_cli"
DB = "kiro-cli.sqlite.v1"
LOG = "kiro-cli.session_jsonl.v1"
A = "b2c4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f"  # conversations_v2, two rows (newest read)
C = "e7f1a2b3-c4d5-4e6f-9a0b-1c2d3e4f5a6b"  # compacted: latest_summary
D = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"  # resumed into sessions/cli: read there
K1 = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"  # Kiro 1.x conversations table
Q = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"  # Amazon Q, [user, assistant] pairs
S = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"  # sessions/cli
SUB = "7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b"  # a subagent's session


def _install(home: Path, data: str = ".local/share") -> dict[str, Path]:
    kiro = build_db(home / data / "kiro-cli/data.sqlite3", (FIXTURE / "kiro-cli.sql").read_text(),
                    wal=True)  # fmt: skip
    amazon = build_db(home / data / "amazon-q/data.sqlite3", (FIXTURE / "amazon-q.sql").read_text())
    cli = home / ".kiro/sessions/cli"
    cli.mkdir(parents=True, exist_ok=True)
    for path in FIXTURE.glob("*.json*"):
        shutil.copy(path, cli / path.name)
    (cli / f"{S}.lock").write_text('{"pid": 1}')
    return {"kiro": kiro, "amazon": amazon, "cli": cli}


def _rows(records: list) -> list[tuple[str, str, str, str]]:  # type: ignore[type-arg]
    return [(r.session_id[:8], r.role, r.kind, r.text[:34]) for r in records]


def test_kiro_database(tmp_path: Path) -> None:
    db = _install(tmp_path)["kiro"]
    records, cursor, diags = parse(DB, db)
    assert _rows(records) == [
        ("b2c4e6f8", "user", "prompt", "why does checkout round 19.995 dow"),
        ("b2c4e6f8", "assistant", "message", "Let me read the cart code."),
        ("b2c4e6f8", "assistant", "tool_call", 'fs_read {"operations":[{"mode":"Li'),
        ("b2c4e6f8", "tool", "tool_result", "def total(items):\n    return round"),
        ("b2c4e6f8", "assistant", "message", "round() on a float rounds half to "),
        ("b2c4e6f8", "user", "prompt", "fix it with Decimal"),
        ("b2c4e6f8", "assistant", "tool_call", 'execute_bash {"command":"pytest -q'),
        ("b2c4e6f8", "user", "prompt", "don't run the tests yet, just edit"),  # a refusal
        ("b2c4e6f8", "tool", "tool_result", "Tool use was cancelled by the user"),
        ("b2c4e6f8", "assistant", "message", "Editing only."),
        ("b2c4e6f8", "assistant", "tool_call", 'fs_write {"command":"str_replace",'),
        ("b2c4e6f8", "tool", "tool_result", '{"replaced":1}'),
        ("b2c4e6f8", "assistant", "message", "total() now sums Decimals and quan"),
        ("b2c4e6f8", "user", "message", "Summarise the change for the chang"),  # an MCP prompt
        ("b2c4e6f8", "assistant", "message", "Checkout totals round half up to c"),
        ("e7f1a2b3", "system", "summary", "The user asked for pagination of G"),
        ("e7f1a2b3", "user", "prompt", "now add offset too"),
        ("e7f1a2b3", "assistant", "message", "Added offset next to limit in GET "),
        ("e7f1a2b3", "assistant", "message", "Noted."),
        ("5a6b7c8d", "user", "prompt", "what does make release do?"),
        ("5a6b7c8d", "assistant", "message", "It tags the version and pushes the"),
    ]
    first = records[0]
    assert first.locator == f"row:conversations_v2/{A}/history/0/user/content/Prompt/prompt"
    assert first.timestamp == 1793697302.114  # 2026-11-03T10:15:02.114+01:00
    assert first.cwd == "/home/dev/src/shop" and records[1].model == "claude-sonnet-4.5"
    assert records[1].timestamp == 1793697306.9  # stream_end_timestamp_ms
    assert records[3].timestamp == 1793697307.1  # request_start_timestamp_ms of the results
    assert records[8].extra == {"call_id": "tooluse_b1", "ok": False}
    assert records[13].timestamp == records[12].timestamp  # no time of its own
    assert {r.cwd for r in records if r.session_id == C} == {"/home/dev/src/notes-api"}
    assert [(d.what, d.name, d.count) for d in diags.drift.values()] == [
        ("user content", "SteeringNote", 1)
    ]
    assert cursor.titles == {} and cursor.usage == []  # Kiro keeps no title or tokens here
    assert cursor.units == count_raw(DB, db) == 10
    roles = get_parser(DB).count_roles
    assert roles is not None and roles(db) == {
        A: {"prompts": 3, "replies": 5},
        C: {"prompts": 1, "replies": 2},
        K1: {"prompts": 1, "replies": 1},
    }


def test_amazon_q_era_pairs(tmp_path: Path) -> None:
    paths = _install(tmp_path)
    records, cursor, diags = parse(DB, paths["amazon"])
    assert _rows(records) == [
        ("9f8e7d6c", "user", "prompt", "how do I run only the slow tests?"),
        ("9f8e7d6c", "assistant", "message", "Run pytest -m slow; the marker is "),
        ("9f8e7d6c", "user", "prompt", "and skip them by default?"),
        ("9f8e7d6c", "assistant", "message", "I'll add addopts to pyproject.toml"),
        ("9f8e7d6c", "assistant", "tool_call", 'fs_write {"command":"append","path'),
        ("9f8e7d6c", "tool", "tool_result", "Appended to pyproject.toml"),
        ("9f8e7d6c", "assistant", "message", "Done: slow tests are skipped unles"),
    ]  # K1, which the kiro-cli database beside it also holds, is read there only
    assert records[1].model == "CLAUDE_3_7_SONNET_20250219_V1_0"
    assert records[1].timestamp == records[0].timestamp == 1750402805.123
    assert diags.count == 0 and not diags.drift
    assert cursor.units == count_raw(DB, paths["amazon"]) == 3
    paths["kiro"].unlink()  # without the Kiro database, the Amazon Q copy of K1 is read
    assert {r.session_id for r in parse(DB, paths["amazon"])[0]} == {Q, K1}
    assert count_raw(DB, paths["amazon"]) == 4


def test_a_resumed_conversation_is_read_from_its_session_log(tmp_path: Path) -> None:
    paths = _install(tmp_path)
    assert D not in {r.session_id for r in parse(DB, paths["kiro"])[0]}
    (paths["cli"] / f"{D}.jsonl").unlink()
    records = [r for r in parse(DB, paths["kiro"])[0] if r.session_id == D]
    assert [r.text for r in records] == [
        "now add offset too",
        "Added offset next to limit in GET /notes.",
    ]
    # a database outside the default data folders has no known home: nothing is shadowed
    elsewhere = build_db(tmp_path / "x" / "data.sqlite3", (FIXTURE / "kiro-cli.sql").read_text())
    (paths["cli"] / f"{D}.jsonl").write_text("")
    assert D in {r.session_id for r in parse(DB, elsewhere)[0]}


def test_session_log(tmp_path: Path) -> None:
    cli = _install(tmp_path)["cli"]
    path = cli / f"{S}.jsonl"
    records, cursor, diags = parse(LOG, path)
    assert [(r.role, r.kind, r.locator, r.text[:30]) for r in records] == [
        ("user", "prompt", "line:1", "add a --since flag to notes ex"),
        ("assistant", "message", "line:2", "I'll read the export command f"),
        ("assistant", "tool_call", "line:2#1", 'read {"operations":[{"path":"n'),
        ("tool", "tool_result", "line:3", "def export(notes, fmt='md'):\n "),
        ("assistant", "message", "line:4", "Added --since (an ISO date); n"),
        ("user", "prompt", "line:5", "also accept relative dates lik"),
        ("assistant", "message", "line:6", "Done: --since 3d means three d"),
    ]
    assert records[-1].text.endswith("Tests cover both forms.")  # one reply per message
    assert [r.timestamp for r in records] == [1793700000.0] * 5 + [1793700300.0] * 2
    assert {r.cwd for r in records} == {"/home/dev/src/notes-api"}
    assert records[2].extra == {"call_id": "tooluse_k1"} and records[3].extra["ok"] is True
    assert cursor.titles == {S: "notes export --since"}
    assert [(d.what, d.name) for d in diags.drift.values()] == [("line kind", "Checkpoint")]
    usage = [(u.call_id, u.input_tokens, u.cache_read_tokens, u.cache_write_tokens,
              u.output_tokens, u.model) for u in cursor.usage]  # fmt: skip
    assert usage == [  # the credits-only turn (all counts 0) is left out
        ("kiro:resp-1", 1800, 12000, 0, 96, "claude-sonnet-4.5"),
        ("kiro:resp-3", 420, 13800, 600, 75, "claude-sonnet-4.5"),
    ]
    assert cursor.usage[0].timestamp == 1793707209.5 and cursor.usage_skipped == 0
    assert cursor.units == count_raw(LOG, path) == 6
    roles = get_parser(LOG).count_roles
    assert roles is not None and roles(path) == {S: {"prompts": 2, "replies": 3}}


def test_subagent_and_naming_prompts_are_not_typed(tmp_path: Path) -> None:
    cli = _install(tmp_path)["cli"]
    records, _, _ = parse(LOG, cli / f"{SUB}.jsonl")
    assert [(r.role, r.kind) for r in records] == [("user", "message"), ("assistant", "message")]
    naming = cli / "naming.jsonl"
    naming.write_text(
        '{"version":"v1","kind":"Prompt","data":{"content":[{"kind":"text","data":'
        '"You are a session naming agent. Name this session."}],"meta":{"timestamp":1793700000}}}\n'
    )
    [record] = parse(LOG, naming)[0]
    assert (record.role, record.kind, record.session_id) == ("system", "message", "naming")
    roles = get_parser(LOG).count_roles
    assert roles is not None and roles(naming) == {}


def test_bad_input_is_skipped(tmp_path: Path) -> None:
    cli = _install(tmp_path)["cli"]
    broken = cli / "broken.jsonl"
    broken.write_bytes(b'not json\n{"kind":"Prompt","data":{"content":"text"}}\n\xff\xfe\n')
    (cli / "broken.json").write_text("{")
    records, cursor, diags = parse(LOG, broken)
    assert records == [] and cursor.units == 0 and diags.count >= 1
    not_db = tmp_path / "data.sqlite3"
    not_db.write_text("not a database")
    records, _, diags = parse(DB, not_db)
    assert records == [] and "not a readable Kiro CLI database" in diags.items[0].message
    odd = build_db(tmp_path / "odd" / "data.sqlite3",
                   "CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT);"
                   "INSERT INTO conversations VALUES ('/p', '[1]');")  # fmt: skip
    records, _, diags = parse(DB, odd)
    assert records == [] and "not a JSON object" in diags.items[0].message


def test_wal_rows_seen_secrets_never_queried_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _install(tmp_path)["kiro"]
    writer = HeldWriter(db)
    try:
        writer.execute(
            "INSERT INTO conversations_v2 VALUES ('/home/dev/src/wal', 'wal-1', ?, 1, 2)",
            ('{"conversation_id":"wal-1","history":[{"user":{"content":{"Prompt":{"prompt":'
             '"typed while Kiro runs"}},"timestamp":"2026-11-05T10:00:00Z"},"assistant":null}]}',),
        )  # fmt: skip
        before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in db.parent.iterdir()}
        statements = traced_statements(monkeypatch)
        records, _, _ = parse(DB, db)
        count_raw(DB, db)
        after = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in db.parent.iterdir()}
    finally:
        writer.close()
    assert "typed while Kiro runs" in [r.text for r in records]
    assert before == after
    tables = {t for s in statements for t in re.findall(r"\bFROM\s+(\w+)", s)}
    assert tables == {"sqlite_master", "conversations", "conversations_v2"}
    assert not any("auth_kv" in s or "SELECT *" in s for s in statements)


def test_discovery_every_location(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(home)
    found = discover(home, agents=["kiro-cli"]).sources
    assert sorted(s.store for s in found) == [
        "kiro-cli.amazon_q_db",
        "kiro-cli.db",
        "kiro-cli.sessions",
        "kiro-cli.sessions",
        "kiro-cli.sessions",
    ]
    records = [r for s in found for r in run(s)]
    assert all(r.agent == "kiro-cli" for r in records)
    assert sorted({r.session_id for r in records}) == sorted({A, C, D, K1, Q, S, SUB})
    assert {r.project for r in records if r.session_id == A} == {"/home/dev/src/shop"}
    xdg = tmp_path / "xdg"
    build_db(xdg / "kiro-cli/data.sqlite3", (FIXTURE / "kiro-cli.sql").read_text())
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    roots = {s.root.path for s in discover(home, agents=["kiro-cli"]).sources}
    assert xdg / "kiro-cli" in roots
    monkeypatch.delenv("XDG_DATA_HOME")
    users = tmp_path / "Users"
    _install(users / "ada", data="AppData/Local")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    windows = [s for s in discover(home, agents=["kiro-cli"]).sources if s.host == "windows:ada"]
    assert sorted(s.store for s in windows)[:2] == ["kiro-cli.amazon_q_db", "kiro-cli.db"]
    # the profile's .kiro shadows the profile's database, not the Linux one
    kiro_win = next(s for s in windows if s.store == "kiro-cli.db")
    assert D not in {r.session_id for r in run(kiro_win)}


def test_v3_sessions_are_listed_not_read(home: Path) -> None:
    folder = home / ".kiro/sessions/ws-3f2a/sess_01JABCDEF"
    folder.mkdir(parents=True)
    (folder / "session.json").write_text('{"id": "sess_01JABCDEF"}')
    (folder / "messages.jsonl").write_text('{"timestamp": 1, "payload": {"type": "user"}}\n')
    [source] = discover(home, agents=["kiro-cli"]).sources
    assert source.store == "kiro-cli.agent_sessions" and list(run(source)) == []


def test_macos_layout_shadows_too(tmp_path: Path) -> None:
    paths = _install(tmp_path, data="Library/Application Support")
    assert D not in {r.session_id for r in parse(DB, paths["kiro"])[0]}


def test_resume_row() -> None:
    row = resume_row("kiro-cli")
    assert row.argv == ("kiro-cli", "chat", "--resume-id", "{session_id}")
    assert "kiro-cli.amazon_q_db" not in row.stores

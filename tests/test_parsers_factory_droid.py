"""Factory Droid: ~/.factory/sessions/<cwd slug>/<id>.jsonl + <id>.settings.json, synthetic in
the shape the public readers parse (Droid is closed source, see docs/agents.md): records,
reminders, subagent sessions, usage, drift, bad input, discovery on every OS layout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

FIXTURE = Path(__file__).parent / "fixtures" / "factory_droid"
PID = "factory-droid.session_jsonl.v1"
A = "5b1f0c2e-7d4a-4e8b-9c3f-2a6d8e0b1c4f"  # a session with usage, reminders, drift
SUB = "9e2d4c6a-1b3f-4a5c-8d7e-0f1a2b3c4d5e"  # a subagent's session
FLAT = "c3a1e5f7-2b4d-4c6e-8a0b-1d3f5a7c9e2b"  # straight in sessions/ (older builds), bad usage


def _install(home: Path) -> Path:
    sessions = home / ".factory" / "sessions"
    project = sessions / "-home-dev-src-shop"
    project.mkdir(parents=True, exist_ok=True)
    for name in (A, SUB):
        for path in FIXTURE.glob(f"{name}*"):
            shutil.copy(path, project / path.name)
    for path in FIXTURE.glob(f"{FLAT}*"):
        shutil.copy(path, sessions / path.name)
    return sessions


def _rows(records: list) -> list[tuple[str, str, str, str]]:  # type: ignore[type-arg]
    return [(r.locator, r.role, r.kind, r.text[:30]) for r in records]


def test_session(tmp_path: Path) -> None:
    path = _install(tmp_path) / "-home-dev-src-shop" / f"{A}.jsonl"
    records, cursor, diags = parse(PID, path)
    assert _rows(records) == [
        ("line:2", "system", "message", "<system-reminder>\nThe current "),
        ("line:2#1", "user", "prompt", "why does checkout round 19.995"),
        ("line:3", "assistant", "reasoning", "Probably float rounding in car"),
        ("line:3#1", "assistant", "message", "Let me read the cart code."),
        ("line:3#2", "assistant", "tool_call", 'Read {"file_path":"/home/dev/s'),
        ("line:4", "tool", "tool_result", "def total(items):\n    return r"),
        ("line:6", "assistant", "message", "round() on a float rounds half"),
        ("line:7", "system", "message", "<system-reminder>Todo list cha"),
        ("line:7#1", "user", "prompt", "fix it with Decimal"),
        ("line:8", "assistant", "tool_call", 'Execute {"command":"pytest -q '),
        ("line:9", "tool", "tool_result", "1 failed, 4 passed"),
        ("line:11", "assistant", "message", "Fixed: total() now quantizes a"),
    ]
    assert {r.session_id for r in records} == {A}
    assert {r.cwd for r in records} == {"/home/dev/src/shop"}
    assert records[6].text.endswith("use Decimal with ROUND_HALF_UP.")  # two text blocks, one reply
    assert records[1].timestamp == 1795168800.0 and records[-1].timestamp == 1795168880.0
    assert {r.model for r in records if r.role == "assistant"} == {"claude-sonnet-4-5-20250929"}
    assert records[4].extra == {"call_id": "toolu_01"} and records[10].extra["ok"] is False
    assert cursor.titles == {A: "Checkout rounding"}  # sessionTitle over title
    assert cursor.units == count_raw(PID, path) == 8
    assert get_parser(PID).count_roles(path) == {A: {"prompts": 2, "replies": 3}}
    drift = sorted((d.what, d.name, d.version) for d in diags.drift.values())
    assert drift == [("content block", "citation", "2"), ("line type", "compaction_marker", "2")]
    [usage] = cursor.usage
    assert (usage.call_id, usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
            usage.output_tokens, usage.reasoning_tokens) == (
        f"droid:{A}:session-total", 3120, 41000, 9800, 412 + 36, 36)  # fmt: skip
    assert usage.timestamp == records[-1].timestamp and usage.model == "claude-sonnet-4-5-20250929"
    assert usage.locator == f"{A}.settings.json:json:/tokenUsage"


def test_subagent_session_has_no_typed_prompt(tmp_path: Path) -> None:
    path = _install(tmp_path) / "-home-dev-src-shop" / f"{SUB}.jsonl"
    records, cursor, _ = parse(PID, path)
    assert _rows(records) == [
        ("line:2", "user", "message", "# Task Tool Invocation\n\nSubage"),
        ("line:3", "assistant", "message", "cart.py looks right now."),
    ]
    assert records[0].extra == {"subagent_task": True} and cursor.usage == []
    assert get_parser(PID).count_roles(path)[SUB] == {"prompts": 0, "replies": 1}


def test_flat_session_string_content_and_bad_usage(tmp_path: Path) -> None:
    path = _install(tmp_path) / f"{FLAT}.jsonl"
    records, cursor, _ = parse(PID, path)
    assert _rows(records) == [
        ("line:2", "user", "prompt", "list the notes"),
        ("line:3", "assistant", "message", "There are 3 notes."),
    ]
    assert records[1].model == "custom:GLM-4.6-[Fireworks]-0"
    assert cursor.usage == [] and cursor.usage_skipped == 1  # inputTokens -5


def test_bad_input_is_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "-p"
    folder.mkdir()
    broken = folder / "broken.jsonl"
    broken.write_bytes(
        b'not json\n{"type":"message","message":{"role":"system","content":"x"}}\n'
        b'{"type":"message","message":"text"}\n\xff\xfe\n[1]\n'
    )
    (folder / "broken.settings.json").write_text("{")
    records, cursor, diags = parse(PID, broken)
    assert records == [] and cursor.units == 0 == count_raw(PID, broken) and diags.count >= 1
    assert ("message role", "system") in {(d.what, d.name) for d in diags.drift.values()}
    assert cursor.usage == []


def test_nothing_is_written(tmp_path: Path) -> None:
    sessions = _install(tmp_path)
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in sessions.rglob("*")}
    for path in sessions.rglob("*.jsonl"):
        parse(PID, path)
        count_raw(PID, path)
    assert before == {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in sessions.rglob("*")}


def test_discovery_every_location(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(home)
    found = discover(home, agents=["factory-droid"]).sources
    assert sorted(s.path.name for s in found) == sorted(f"{n}.jsonl" for n in (A, SUB, FLAT))
    records = [r for s in found for r in run(s)]
    assert {r.agent for r in records} == {"factory-droid"}
    assert {r.project for r in records if r.session_id == A} == {"/home/dev/src/shop"}
    users = tmp_path / "Users"
    _install(users / "ada")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    windows = [s for s in discover(home, agents=["factory-droid"]).sources if s.host]
    assert {s.host for s in windows} == {"windows:ada"} and len(windows) == 3


def test_resume_row() -> None:
    row = resume_row("factory-droid")
    assert row.argv == ("droid", "--resume", "{session_id}")
    assert row.stores == ("factory-droid.sessions",)

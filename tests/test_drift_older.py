"""Format drift in the older parsers (Codex, Gemini CLI, OpenCode, Pi): an unknown record,
payload, part or block type is listed per agent version; known records still parse; the
sample home's files (and the types each parser skips on purpose) report none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _agent_helpers import build_db, parse
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.readers import Diagnostics
from test_sample_home_agents import render


def _jsonl(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _drift(diags: Diagnostics) -> list[tuple[str, str, str, str]]:
    return sorted((d.what, d.name, d.version, d.locator) for d in diags.drift.values())


def test_codex_unknown_line_and_payload_types(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "rollout-2026-01-01T00-00-00-11111111-1111-4111-8111-111111111111.jsonl",
        [
            {"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.99.0"}},
            {"type": "response_item", "payload": {"type": "ghost_snapshot"}},  # skipped on purpose
            {"type": "event_msg", "payload": {"type": "exec_command_begin"}},  # echoes: not drift
            {"type": "response_item", "payload": {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "hello"}]}},
            {"type": "response_item", "payload": {"type": "hologram", "text": "x"}},
            {"type": "time_warp", "payload": {"x": 1}},
            {"type": "response_item", "payload": {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "hi there"}]}},
        ],
    )  # fmt: skip
    records, _, diags = parse("codex.rollout_jsonl.v1", path)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "hello"),
        ("assistant", "message", "hi there"),
    ]
    assert _drift(diags) == [
        ("payload type", "hologram", "0.99.0", "line:5"),
        ("record type", "time_warp", "0.99.0", "line:6"),
    ]


def test_gemini_unknown_message_type(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "session-2026-01-01T00-00-abc.jsonl",
        [
            {"sessionId": "g1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z",
             "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"},
            {"id": "m1", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": "hello"},
            {"id": "m2", "timestamp": "2026-01-01T00:00:02Z", "type": "oracle", "content": "x"},
            {"id": "m3", "timestamp": "2026-01-01T00:00:03Z", "type": "gemini", "content": "hi"},
        ],
    )  # fmt: skip
    records, _, diags = parse("gemini-cli.chat.v1", path)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "hello"),
        ("assistant", "message", "hi"),
    ]
    assert _drift(diags) == [("message type", "oracle", "", "line:3")]


def test_opencode_unknown_part_type(tmp_path: Path) -> None:
    db = build_db(
        tmp_path / "opencode.db",
        "CREATE TABLE session(id TEXT PRIMARY KEY, directory TEXT, title TEXT, version TEXT,"
        " time_created INTEGER);"
        "CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, data TEXT,"
        " time_created INTEGER);"
        "CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT,"
        " time_created INTEGER);"
        "INSERT INTO session VALUES ('s1', '/w', 't', '1.2.3', 1);"
        """INSERT INTO message VALUES ('m1', 's1', '{"role":"user"}', 1);"""
        """INSERT INTO message VALUES ('m2', 's1', '{"role":"assistant"}', 2);"""
        """INSERT INTO part VALUES ('p1', 'm1', 's1', '{"type":"text","text":"hello"}', 1);"""
        """INSERT INTO part VALUES ('p2', 'm2', 's1', '{"type":"step-start"}', 2);"""
        """INSERT INTO part VALUES ('p3', 'm2', 's1', '{"type":"hologram"}', 3);"""
        """INSERT INTO part VALUES ('p4', 'm2', 's1', '{"type":"text","text":"hi"}', 4);""",
    )
    records, _, diags = parse("opencode.sqlite.v1", db)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "hello"),
        ("assistant", "message", "hi"),
    ]
    assert _drift(diags) == [("part type", "hologram", "1.2.3", "row:part/p3")]


def test_pi_unknown_entry_role_and_block(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "2026-01-01_p1.jsonl",
        [
            {"type": "session", "id": "p1", "cwd": "/w", "version": 3},
            {"type": "model_change", "provider": "x"},  # skipped on purpose
            {"type": "message", "message": {"role": "user", "content": "hello"}},
            {"type": "hologram"},
            {"type": "message", "message": {"role": "oracle", "content": "x"}},
            {"type": "message", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "hi"}, {"type": "sparkle"}]}},
        ],
    )  # fmt: skip
    records, _, diags = parse("pi.session_jsonl.v1", path)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "hello"),
        ("assistant", "message", "hi"),
    ]
    assert _drift(diags) == [
        ("content block", "sparkle", "3", "line:6"),
        ("message role", "oracle", "3", "line:5"),
        ("record type", "hologram", "3", "line:4"),
    ]


@pytest.mark.parametrize("agent", ["codex", "gemini-cli", "opencode", "kilo-code", "pi"])
def test_sample_home_reports_no_drift(
    home: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    render(home)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(home / "src"))
    found = discover(home, agents=[agent])
    assert found.sources, agent
    diags = Diagnostics()
    records = [r for source in found.sources for r in run(source, diagnostics=diags)]
    assert records, agent
    assert _drift(diags) == [], agent

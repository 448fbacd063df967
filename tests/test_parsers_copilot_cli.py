"""GitHub Copilot CLI: session-state event logs (both layouts) and history-session-state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers.base import ParseCursor

EVENTS = "copilot-cli.events_jsonl.v1"
HISTORY = "copilot-cli.history_session_json.v1"


def _event(kind: str, data: dict[str, object], ts: str = "2026-11-06T10:00:00.000Z") -> str:
    return json.dumps({"type": kind, "id": kind, "parentId": None, "timestamp": ts, "data": data})


EVENT_LINES = [
    _event(
        "session.start",
        {
            "sessionId": "cp-1",
            "version": 1,
            "copilotVersion": "0.0.400",
            "selectedModel": "claude-sonnet-4.5",
            "context": {"cwd": "/work/shop", "branch": "main"},
        },
    ),
    _event("session.info", {"infoType": "folder_trust", "message": "trusted"}),
    _event("user.message", {"content": "list the failing tests", "attachments": []}),
    _event("assistant.turn_start", {"turnId": "0"}),
    _event("assistant.reasoning", {"content": "look at pytest output"}),
    _event(
        "assistant.message",
        {
            "messageId": "m1",
            "content": "Running them.",
            "toolRequests": [
                {"toolCallId": "t1", "name": "bash", "arguments": {"command": "pytest -q"}}
            ],
        },
    ),
    _event(
        "tool.execution_complete",
        {"toolCallId": "t1", "success": True, "result": {"content": "2 failed"}},
    ),
    _event("session.model_change", {"newModel": "gpt-5"}),
    _event("assistant.message", {"messageId": "m2", "content": "Two tests fail."}),
]


def test_events_log(tmp_path: Path) -> None:
    path = tmp_path / "session-state" / "cp-1" / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(EVENT_LINES) + "\n")
    records, cursor, _ = parse(EVENTS, path)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "list the failing tests"),
        ("assistant", "reasoning", "look at pytest output"),
        ("assistant", "message", "Running them."),
        ("assistant", "tool_call", 'bash {"command":"pytest -q"}'),
        ("tool", "tool_result", "2 failed"),
        ("assistant", "message", "Two tests fail."),
    ]
    assert {(r.session_id, r.cwd, r.branch) for r in records} == {("cp-1", "/work/shop", "main")}
    assert records[2].model == "claude-sonnet-4.5" and records[-1].model == "gpt-5"
    assert cursor.units == count_raw(EVENTS, path) == 5


def test_resume_keeps_session_context(tmp_path: Path) -> None:
    path = tmp_path / "legacy-id.jsonl"
    path.write_text("\n".join(EVENT_LINES[:3]) + "\n")
    records, cursor, _ = parse(EVENTS, path)
    with path.open("a") as handle:
        handle.write(EVENT_LINES[-1] + "\n")
    again = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    records, _, _ = parse(EVENTS, path, cursor=again)
    assert [(r.text, r.session_id, r.cwd) for r in records] == [
        ("Two tests fail.", "cp-1", "/work/shop")
    ]


def test_history_session_state(tmp_path: Path) -> None:
    path = tmp_path / "session_1.json"
    path.write_text(
        json.dumps(
            {
                "sessionId": "hs-1",
                "startTime": "2026-11-06T09:00:00Z",
                "chatMessages": [
                    {"role": "user", "content": "explain main.py"},
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {"id": "x", "function": {"name": "view", "arguments": '{"p":1}'}}
                        ],
                    },
                    {"role": "tool", "content": "print('hi')", "tool_call_id": "x"},
                    {"role": "assistant", "content": "It prints hi."},
                    {"role": "system", "content": "ignored"},
                ],
            }
        )
    )
    records, cursor, _ = parse(HISTORY, path)
    assert [(r.kind, r.text) for r in records] == [
        ("prompt", "explain main.py"),
        ("tool_call", 'view {"p":1}'),
        ("tool_result", "print('hi')"),
        ("message", "It prints hi."),
    ]
    assert cursor.units == count_raw(HISTORY, path) == 4
    path.write_text("[1, 2]")
    records, _, diags = parse(HISTORY, path)
    assert records == [] and diags.count == 1


def test_discovery_layouts_and_copilot_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = home / ".copilot"
    (base / "session-state" / "a").mkdir(parents=True)
    (base / "session-state" / "a" / "events.jsonl").write_text(EVENT_LINES[0] + "\n")
    (base / "session-state" / "b.jsonl").write_text(EVENT_LINES[0] + "\n")
    (base / "history-session-state").mkdir()
    (base / "history-session-state" / "c.json").write_text("{}")
    (base / "config.json").write_text("{}")
    found = discover(home, agents=["copilot-cli"])
    assert sorted(s.path.name for s in found.sources) == ["b.jsonl", "c.json", "events.jsonl"]
    (base / "command-history-state.json").write_text('{"commandHistory": ["hi"]}')
    assert "copilot-cli.command_history" in {
        s.store for s in discover(home, agents=["copilot-cli"]).sources
    }
    pinned = tmp_path / "copilot-home"
    (pinned / "session-state").mkdir(parents=True)
    (pinned / "session-state" / "d.jsonl").write_text("")
    monkeypatch.setenv("COPILOT_HOME", str(pinned))
    assert [s.path.name for s in discover(home, agents=["copilot-cli"]).sources] == ["d.jsonl"]


def test_command_history(tmp_path: Path) -> None:
    path = tmp_path / "command-history-state.json"
    path.write_text(json.dumps({"commandHistory": ["/model", "fix the flaky test", "", 3]}))
    records, cursor, _ = parse("copilot-cli.command_history_json.v1", path)
    assert [r.text for r in records] == ["/model", "fix the flaky test"]
    assert all(r.timestamp for r in records)
    assert cursor.units == count_raw("copilot-cli.command_history_json.v1", path) == 2
    path.write_text('{"commands": []}')
    records, _, diags = parse("copilot-cli.command_history_json.v1", path)
    assert records == [] and diags.count == 1

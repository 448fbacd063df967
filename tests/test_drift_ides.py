"""Format drift in the IDE/CLI parsers that predate it (Copilot CLI, VS Code Copilot, Cursor,
Cursor CLI, Grok): an unknown event type, response part, bubble type, content block or line
type is listed by ``audit`` under ``drift`` with its agent (and version when the file records
one), the known records still parse, and the sample home's own files report no drift."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agentdex.api.audit import audit
from agentdex.discovery import discover
from agentdex.parsers import run
from test_sample_home_agents import render

AGENTS = ("copilot-cli", "vscode-copilot", "cursor", "cursor-cli", "grok")
CURSOR_DB = Path(".config/Cursor/User/globalStorage/state.vscdb")
BUBBLE = "bubbleId:7d1f2c3a-0b4e-4c5d-9e6f-a1b2c3d4e5f6:b-0002"


@pytest.fixture
def sample_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    render(home)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(home / "src"))
    return home


def _drift(home: Path, agent: str) -> list[tuple[str, str, str, int]]:
    rows = [d for d in audit(str(home))["drift"] if d["agent"] == agent]
    return [(d["what"], d["name"], d["version"], d["count"]) for d in rows]


def _kinds(home: Path, agent: str) -> set[str]:
    found = discover(home, agents=[agent])
    return {r.kind for s in found.sources for r in run(s)}


def test_the_sample_home_reports_no_drift_for_these_agents(sample_home: Path) -> None:
    data = audit(str(sample_home))
    assert {s["agent"] for s in data["sources"]} >= set(AGENTS)
    assert [d for d in data["drift"] if d["agent"] in AGENTS] == []


def test_copilot_cli_unknown_event_type_is_drift_with_the_copilot_version(
    sample_home: Path,
) -> None:
    [events] = (sample_home / ".copilot" / "session-state").glob("*/events.jsonl")
    before = _kinds(sample_home, "copilot-cli")
    with events.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"type": "assistant.hologram", "data": {"content": "x"}}) + "\n")
        out.write(json.dumps({"type": "assistant.turn_end", "data": {}}) + "\n")  # known
    first = json.loads(events.read_text().splitlines()[0])
    assert _drift(sample_home, "copilot-cli") == [
        ("event type", "assistant.hologram", first["data"]["copilotVersion"], 1)
    ]
    assert _kinds(sample_home, "copilot-cli") == before >= {"prompt", "message", "tool_call"}


def test_vscode_copilot_unknown_response_part_is_drift_with_the_extension_version(
    sample_home: Path,
) -> None:
    [folder] = sample_home.glob(".config/Code/User/workspaceStorage/*")
    session = {
        "version": 3,
        "sessionId": "drift-1",
        "creationDate": 1764000000000,
        "requests": [
            {
                "requestId": "r1",
                "timestamp": 1764000000000,
                "agent": {"extensionVersion": "0.40.1"},
                "message": {"text": "explain the hologram"},
                "response": [{"value": "It is light."}, {"kind": "hologram", "x": 1}],
            }
        ],
    }
    (folder / "chatSessions" / "drift-1.json").write_text(json.dumps(session))
    assert _drift(sample_home, "vscode-copilot") == [("response part", "hologram", "0.40.1", 1)]
    found = discover(sample_home, agents=["vscode-copilot"])
    records = [r for s in found.sources for r in run(s) if r.session_id == "drift-1"]
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "explain the hologram"),
        ("assistant", "message", "It is light."),
    ]


def test_cursor_unknown_bubble_type_is_drift(sample_home: Path) -> None:
    before = _kinds(sample_home, "cursor")
    conn = sqlite3.connect(sample_home / CURSOR_DB)
    with conn:
        (value,) = conn.execute(
            "SELECT value FROM cursorDiskKV WHERE key = ?", (BUBBLE,)
        ).fetchone()
        bubble = json.loads(value)
        assert bubble["type"] == 2
        bubble["type"] = 9
        conn.execute(
            "UPDATE cursorDiskKV SET value = ? WHERE key = ?", (json.dumps(bubble), BUBBLE)
        )
    conn.close()
    assert _drift(sample_home, "cursor") == [("bubble type", "9", "", 1)]
    assert _kinds(sample_home, "cursor") == before >= {"prompt", "message"}


def _append(path: Path, *lines: object) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)


def test_cursor_cli_unknown_content_block_is_drift(sample_home: Path) -> None:
    [transcript] = sample_home.glob(".cursor/projects/*/agent-transcripts/*/*.jsonl")
    before = _kinds(sample_home, "cursor-cli")
    block = {"type": "hologram", "text": "x"}
    _append(transcript, {"role": "assistant", "message": {"content": [block]}})
    assert _drift(sample_home, "cursor-cli") == [("content block", "hologram", "", 1)]
    assert _kinds(sample_home, "cursor-cli") == before >= {"prompt", "tool_call"}


def test_grok_unknown_line_type_is_drift(sample_home: Path) -> None:
    [history] = sample_home.glob(".grok/sessions/*/*/chat_history.jsonl")
    before = _kinds(sample_home, "grok")
    _append(history, {"type": "hologram", "content": "x"})
    assert _drift(sample_home, "grok") == [("line type", "hologram", "", 1)]
    assert _kinds(sample_home, "grok") == before >= {"prompt", "message"}

"""Amp's legacy local threads (closed source: the shape public readers parse), and the note
that current Amp keeps threads in the cloud."""

from __future__ import annotations

import json
from pathlib import Path

from _agent_helpers import count_raw, parse
from agentdex.api.doctor import doctor
from agentdex.discovery import discover
from agentdex.parsers._registry import get_parser

PID = "amp.thread_json.v1"
THREAD = {
    "v": 212,
    "id": "T-7c1e9a2b-4d5f-4a6b-8c9d-0e1f2a3b4c5d",
    "created": 1795000000000,
    "title": "Retry cap",
    "env": {"initial": {"trees": [{"displayName": "shop", "uri": "file:///w/shop"}]}},
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "raise the retry cap to 5"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "It is a constant."},
                {"type": "text", "text": "Editing retry.go."},
                {
                    "type": "tool_use",
                    "id": "tu1",
                    "name": "edit_file",
                    "input": {"path": "retry.go"},
                    "complete": True,
                },
            ],
            "usage": {
                "model": "claude-sonnet-4-5",
                "inputTokens": 40,
                "outputTokens": 80,
                "cacheCreationInputTokens": 1200,
                "cacheReadInputTokens": 9000,
                "timestamp": "2026-11-17T08:27:00Z",
            },
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "toolUseID": "tu1",
                    "run": {"status": "done", "result": {"diff": "-3\n+5"}},
                },
                {"type": "tool_result", "toolUseID": "tu2", "run": {"status": "cancelled"}},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}, {"type": "hologram"}]},
    ],
}


def test_legacy_thread(tmp_path: Path) -> None:
    path = tmp_path / f"{THREAD['id']}.json"
    path.write_text(json.dumps(THREAD))
    records, cursor, diagnostics = parse(PID, path)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "raise the retry cap to 5"),
        ("assistant", "reasoning", "It is a constant."),
        ("assistant", "message", "Editing retry.go."),
        ("assistant", "tool_call", 'edit_file {"path":"retry.go"}'),
        ("tool", "tool_result", "-3\n+5"),
        ("tool", "tool_result", "[cancelled]"),
        ("assistant", "message", "Done."),
    ]
    assert {r.session_id for r in records} == {THREAD["id"]}
    assert {r.cwd for r in records} == {"/w/shop"}
    assert records[0].timestamp == 1795000000.0 and records[2].model == "claude-sonnet-4-5"
    assert cursor.titles == {THREAD["id"]: "Retry cap"}
    assert cursor.units == count_raw(PID, path) == 4
    count_roles = get_parser(PID).count_roles
    assert count_roles is not None
    assert count_roles(path) == {THREAD["id"]: {"prompts": 1, "replies": 2}}
    (usage,) = cursor.usage
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_read_tokens) == (
        40,
        1200,
        9000,
    )
    assert [(d.what, d.name) for d in diagnostics.drift.values()] == [("content block", "hologram")]


def test_doctor_says_current_amp_is_cloud_only(home: Path) -> None:
    folder = home / ".local" / "share" / "amp" / "threads"
    folder.mkdir(parents=True)
    (folder / f"{THREAD['id']}.json").write_text(json.dumps(THREAD))
    assert [s.store for s in discover(home, agents=["amp"]).sources] == ["amp.threads"]
    report = doctor(home=str(home))
    (row,) = [s for s in report["stores"] if s["store"] == "amp.threads"]
    assert row["status"] == "found" and "ampcode.com only" in row["note"]
    (windsurf,) = [s for s in report["stores"] if s["store"] == "windsurf.cascade"]
    assert "encrypts" in windsurf["note"]

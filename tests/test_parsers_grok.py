"""Grok CLI: sessions, prompt history, subagent dispatches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run


def _home_layout(home: Path, corpus: Path) -> Path:
    project = home / ".grok" / "sessions" / "%2Fhome%2Fuser%2Fwork%2Fproject"
    session = project / "019729a0-0000-7000-8000-000000000001"
    session.mkdir(parents=True)
    samples = corpus / "agentgrep-samples/grok"
    shutil.copy(samples / "grok.sessions/chat_history.jsonl", session)
    shutil.copy(samples / "grok.prompt_history/prompt_history.jsonl", project)
    sub = session / "subagents" / "019e6626-24b3-7780-8e5d-25411a8cabbe"
    sub.mkdir(parents=True)
    shutil.copy(samples / "grok.subagents/meta.json", sub)
    return session


def test_sample_sessions_in_a_home(home: Path, corpus: Path) -> None:
    session = _home_layout(home, corpus)
    found = discover(home, agents=["grok"])
    assert sorted(s.store for s in found.sources) == [
        "grok.prompt_history",
        "grok.sessions",
        "grok.subagents",
    ]
    chat = [r for s in found.sources if s.store == "grok.sessions" for r in run(s)]
    assert [(r.role, r.kind) for r in chat] == [
        ("user", "prompt"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
    ]
    assert {r.session_id for r in chat} == {session.name}
    assert {r.cwd for r in chat} == {"/home/user/work/project"}
    path = session / "chat_history.jsonl"
    _, cursor, _ = parse("grok.chat_history_jsonl.v1", path)
    assert cursor.units == count_raw("grok.chat_history_jsonl.v1", path) == 4


def test_prompt_history_and_subagent(corpus: Path) -> None:
    path = corpus / "agentgrep-samples/grok/grok.prompt_history/prompt_history.jsonl"
    records, cursor, _ = parse("grok.prompt_history_jsonl.v1", path)
    assert [r.text for r in records][1] == "uv run pytest --tb=short"
    assert records[1].extra["is_bash"] is True
    assert cursor.units == count_raw("grok.prompt_history_jsonl.v1", path) == 3
    meta = corpus / "agentgrep-samples/grok/grok.subagents/meta.json"
    records, cursor, _ = parse("grok.subagent_json.v1", meta)
    assert records[0].session_id == "019e6626-24b3-7780-8e5d-2541aaaaaaaa"
    assert records[0].cwd == "/home/user/work/project" and records[0].model == "grok-code"
    assert cursor.titles == {
        "019e6626-24b3-7780-8e5d-2541aaaaaaaa": "Map the authentication module"
    }


def test_real_shape_tool_calls_reasoning_and_synthetic(tmp_path: Path) -> None:
    session = tmp_path / "%2Fw" / "sid"
    session.mkdir(parents=True)
    (session / "summary.json").write_text(json.dumps({"cwd": "/from/summary"}))
    lines = [
        {"type": "system", "content": "system prompt"},
        {
            "type": "user",
            "content": "AGENTS.md says...",
            "synthetic_reason": "project_instructions",
        },
        {"type": "user", "content": [{"type": "text", "text": "real prompt"}]},
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "thinking"}],
            "encrypted_content": "xx",
        },
        {
            "type": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": '{"cmd":"ls"}'}}],
        },
        {"type": "tool_result", "content": "a.txt"},
    ]
    path = session / "chat_history.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    records, cursor, diags = parse("grok.chat_history_jsonl.v1", path)
    assert [(r.kind, r.text) for r in records] == [
        ("message", "AGENTS.md says..."),
        ("prompt", "real prompt"),
        ("reasoning", "thinking"),
        ("tool_call", 'bash {"cmd":"ls"}'),
        ("tool_result", "a.txt"),
    ]
    assert {r.cwd for r in records} == {"/from/summary"}
    assert all(r.timestamp for r in records)  # mtime stands in
    assert diags.count == 1
    assert cursor.units == count_raw("grok.chat_history_jsonl.v1", path) == 5

"""Qwen Code: ChatRecord JSONL sessions (synthetic in the shape chatRecordingService writes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser
from agentdex.parsers.base import ParseCursor

PID = "qwen-code.chat_jsonl.v1"
SID = "3f2b8c1d-6e4a-4b7f-9c0d-1a2b3c4d5e6f"
FIXTURE = Path(__file__).parent / "fixtures" / "qwen"
CHAT = FIXTURE / "projects" / "-home-dev-notes-api" / "chats" / f"{SID}.jsonl"


def test_records_roles_and_title() -> None:
    records, cursor, diags = parse(PID, CHAT)
    assert [(r.role, r.kind, r.text[:44]) for r in records] == [
        ("user", "prompt", "add a created_at index to @notes_api/models."),
        ("assistant", "reasoning", "Need an index on notes.created_at for the li"),
        ("assistant", "message", "I'll add the index in a migration."),
        ("assistant", "tool_call", 'write_file {"file_path":"migrations/004_idx.'),
        ("tool", "tool_result", "Successfully created and wrote to new file: "),
        ("user", "prompt", "make it concurrent"),
        ("assistant", "message", "Done: the migration now uses CREATE INDEX CO"),
        ("user", "message", "Background task completed"),
        ("user", "message", "/compress"),
        ("system", "summary", "<state_snapshot>Goal: index notes.created_at"),
        ("user", "prompt", "check the migration runs"),
        ("assistant", "message", "The migration applies cleanly on a fresh dat"),
        ("assistant", "message", "It runs: the subagent applied it on a fresh "),
    ]
    assert {(r.session_id, r.cwd, r.branch) for r in records} == {
        (SID, "/home/dev/notes-api", "main")
    }
    assert records[1].model == "qwen3-coder-plus"
    assert records[3].extra == {"call_id": "call_01"}
    assert records[11].extra == {"sidechain": True, "agent_id": "explore-7f3c"}
    assert records[0].timestamp == 1793786401.0
    assert records[3].locator == "line:3#2" and records[0].locator == "line:2"
    assert records[2].locator == "line:3#1"
    assert cursor.titles == {SID: "created_at index for notes"}
    assert diags.count == 0


def test_unknown_subtypes_and_types_are_drift_per_version(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = CHAT.read_text() + (
        '{"type":"checkpoint","sessionId":"s","version":"0.20.0","timestamp":"2026-11-05T00:00:00Z"}\n'
    )
    path.write_text(text)
    _, _, diags = parse(PID, path)
    assert sorted((d.what, d.name, d.version, d.count) for d in diags.drift.values()) == [
        ("record type", "checkpoint", "0.20.0", 1),
        ("subtype", "plan_update", "0.19.2", 1),
    ]


def test_usage_counts_reasoning_once_and_splits_the_cache() -> None:
    _, cursor, diags = parse(PID, CHAT)
    rows = [
        (u.locator, u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens)
        for u in cursor.usage
    ]
    assert rows == [
        ("line:3", 3000, 9000, 140, 40),  # OpenAI-compatible: reasoning inside candidates
        ("line:6", 12400, 0, 30, 0),
        ("line:14", 3000, 0, 20, 0),
    ]
    assert {u.call_id for u in cursor.usage} == {
        "00000003-aaaa-4bbb-8ccc-000000000003",
        "00000006-aaaa-4bbb-8ccc-000000000006",
        "00000014-aaaa-4bbb-8ccc-000000000014",
    }
    assert cursor.usage_skipped == 0 and diags.count == 0


def test_gemini_style_usage_keeps_thoughts_beside_candidates(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(
        '{"uuid":"u1","sessionId":"g","type":"assistant","timestamp":"2026-11-05T00:00:00Z",'
        '"message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":'
        '{"promptTokenCount":100,"candidatesTokenCount":10,"thoughtsTokenCount":5,'
        '"totalTokenCount":115}}\n'
    )
    _, cursor, _ = parse(PID, path)
    [usage] = cursor.usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (100, 15, 5)


def test_independent_counts_agree() -> None:
    records, cursor, _ = parse(PID, CHAT)
    assert cursor.units == count_raw(PID, CHAT) == 11
    roles = get_parser(PID).count_roles
    assert roles is not None
    prompts = sum(r.kind == "prompt" for r in records)
    replies = sum(r.role == "assistant" and r.kind == "message" for r in records)
    assert (
        roles(CHAT)
        == {SID: {"prompts": prompts, "replies": replies}}
        == {SID: {"prompts": 3, "replies": 4}}
    )


def test_resumes_from_the_last_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = CHAT.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:6]))
    first, cursor, _ = parse(PID, path)
    path.write_text("".join(lines))
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line)
    rest, _, _ = parse(PID, path, cursor=resumed)
    whole, _, _ = parse(PID, path)
    assert [r.locator for r in first + rest] == [r.locator for r in whole]


def test_discovery_default_runtime_dir_and_wsl(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(FIXTURE, home / ".qwen")
    runtime = tmp_path / "runtime"
    shutil.copytree(FIXTURE, runtime / "tmp-shape")
    legacy = runtime / "tmp" / "5f0c" / "chats"
    legacy.mkdir(parents=True)
    shutil.copy(CHAT, legacy / "old.jsonl")
    users = tmp_path / "Users"
    shutil.copytree(FIXTURE, users / "ada" / ".qwen")
    [source] = discover(home, agents=["qwen-code"]).sources
    assert source.path == home / ".qwen" / CHAT.relative_to(FIXTURE)
    records = list(run(source))
    assert records[0].project == "/home/dev/notes-api"
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(runtime))
    assert [s.path for s in discover(home, agents=["qwen-code"]).sources] == [legacy / "old.jsonl"]
    monkeypatch.delenv("QWEN_RUNTIME_DIR")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    found = discover(home, agents=["qwen-code"]).sources
    assert sorted(str(s.host) for s in found) == ["None", "windows:ada"]


def test_resume_row() -> None:
    row = resume_row("qwen-code")
    assert row.argv == ("qwen", "--resume", "{session_id}")
    assert row.stores == ("qwen-code.chats",)

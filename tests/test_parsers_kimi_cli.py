"""Kimi CLI: the wire log, the context fallback, titles, the prompt log, discovery.

No real Kimi session is public under a licence that allows vendoring, so the
files are written here in the shape MoonshotAI/kimi-cli writes them
(``wire/file.py``, ``wire/types.py``, ``soul/context.py``, ``metadata.py``,
``session_state.py``, ``ui/shell/prompt.py``); the agrep peer fixture (MIT) is
read from the shared corpus.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser
from agentdex.parsers.base import ParseCursor

WIRE = "kimi-cli.wire_jsonl.v1"
CONTEXT = "kimi-cli.context_jsonl.v1"
WORK = "/home/me/src/shop"
GROUP = hashlib.md5(WORK.encode()).hexdigest()
SID = "0b5e8c1a-7d2f-4e3a-9c4b-1a2b3c4d5e6f"
AGENT = "a1b2c3d4"


def _write(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    return path


def _msg(ts: float, mtype: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": ts, "message": {"type": mtype, "payload": payload}}


def _share(tmp: Path) -> Path:
    share = tmp / ".kimi"
    share.mkdir(parents=True, exist_ok=True)
    work_dirs = [{"path": WORK, "kaos": "local", "last_session_id": SID}]
    (share / "kimi.json").write_text(json.dumps({"work_dirs": work_dirs}))
    return share


def _session_lines() -> list[Any]:
    t = 1795000000.0
    return [
        {"type": "metadata", "protocol_version": "1.10"},
        _msg(t, "TurnBegin", {"user_input": "add a retry to the checkout client"}),
        _msg(t + 1, "StepBegin", {"n": 1}),
        _msg(t + 2, "ContentPart", {"type": "think", "think": "The client is in pay.py."}),
        _msg(t + 3, "ContentPart", {"type": "text", "text": "I'll read the client first."}),
        _msg(
            t + 4,
            "ToolCall",
            {
                "type": "function",
                "id": "tool_1",
                "function": {"name": "ReadFile", "arguments": '{"path": "pay.py"}'},
            },
        ),
        _msg(
            t + 5,
            "StatusUpdate",
            {
                "context_usage": 0.05,
                "token_usage": {
                    "input_other": 1200,
                    "output": 80,
                    "input_cache_read": 9000,
                    "input_cache_creation": 0,
                },
                "message_id": "chatcmpl-1",
            },
        ),
        _msg(
            t + 6,
            "ToolResult",
            {
                "tool_call_id": "tool_1",
                "return_value": {
                    "is_error": False,
                    "output": "def charge():\n    ...",
                    "message": "",
                    "display": [],
                },
            },
        ),
        _msg(t + 7, "SteerInput", {"user_input": [{"type": "text", "text": "cap it at 3"}]}),
        _msg(t + 8, "StepBegin", {"n": 2}),
        _msg(t + 9, "ContentPart", {"type": "text", "text": "Added a retry capped at 3."}),
        _msg(t + 10, "ApprovalRequest", {"id": "r1", "tool_call_id": "tool_2", "sender": "x"}),
        _msg(
            t + 11,
            "ApprovalResponse",
            {"request_id": "r1", "response": "reject", "feedback": "do not touch the tests"},
        ),
        _msg(
            t + 12,
            "SubagentEvent",
            {
                "parent_tool_call_id": "tool_3",
                "agent_id": "gone",
                "subagent_type": "coder",
                "event": {"type": "ContentPart", "payload": {"type": "text", "text": "sub says"}},
            },
        ),
        _msg(
            t + 13,
            "SubagentEvent",
            {
                "parent_tool_call_id": "tool_4",
                "agent_id": AGENT,
                "event": {"type": "ContentPart", "payload": {"type": "text", "text": "dup"}},
            },
        ),
        _msg(t + 14, "TurnEnd", {}),
        _msg(t + 60, "TurnBegin", {"user_input": "/compact"}),
        _msg(t + 61, "CompactionBegin", {}),
        _msg(t + 62, "CompactionEnd", {}),
        _msg(t + 63, "TurnEnd", {}),
        _msg(
            t + 70,
            "TurnBegin",
            {"user_input": "<system-reminder>Background tasks have completed.</system-reminder>"},
        ),
        _msg(t + 71, "TurnEnd", {}),
        _msg(t + 80, "BtwBegin", {"id": "b1", "question": "what does retry-after mean?"}),
        _msg(t + 81, "BtwEnd", {"id": "b1", "response": "The seconds to wait."}),
        _msg(
            t + 90,
            "Notification",
            {
                "id": "n1",
                "category": "task",
                "type": "done",
                "source_kind": "bg",
                "source_id": "1",
                "title": "Tests",
                "body": "12 passed",
                "severity": "info",
                "created_at": t + 90,
            },
        ),
        _msg(t + 95, "HoloDeckEvent", {"x": 1}),
    ]


def _home(tmp: Path) -> tuple[Path, Path]:
    share = _share(tmp)
    session = share / "sessions" / GROUP / SID
    wire = _write(session / "wire.jsonl", _session_lines())
    _write(
        session / "subagents" / AGENT / "wire.jsonl",
        [
            {"type": "metadata", "protocol_version": "1.10"},
            _msg(1795000013.0, "TurnBegin", {"user_input": "find the retry helper"}),
            _msg(1795000014.0, "ContentPart", {"type": "text", "text": "dup"}),
        ],
    )
    (session / "state.json").write_text(
        json.dumps({"version": 1, "custom_title": "Checkout retry"})
    )
    _write(session / "context.jsonl", [{"role": "user", "content": "add a retry"}])
    return share, wire


def test_wire_log_is_the_transcript(tmp_path: Path) -> None:
    share, wire = _home(tmp_path)
    records, cursor, diagnostics = parse(WIRE, wire, root=share)
    got = [(r.locator, r.role, r.kind, r.text) for r in records]
    assert got == [
        ("line:2", "user", "prompt", "add a retry to the checkout client"),
        ("line:4", "assistant", "reasoning", "The client is in pay.py."),
        ("line:5", "assistant", "message", "I'll read the client first."),
        ("line:6", "assistant", "tool_call", 'ReadFile {"path":"pay.py"}'),
        ("line:8", "tool", "tool_result", "def charge():\n    ..."),
        ("line:9", "user", "prompt", "cap it at 3"),
        ("line:11", "assistant", "message", "Added a retry capped at 3."),
        ("line:13", "user", "prompt", "do not touch the tests"),
        ("line:14", "assistant", "message", "sub says"),  # its own wire is gone: kept here
        ("line:17", "user", "message", "/compact"),
        ("line:21", "system", "message",
         "<system-reminder>Background tasks have completed.</system-reminder>"),
        ("line:23", "user", "prompt", "what does retry-after mean?"),
        ("line:24", "assistant", "message", "The seconds to wait."),
        ("line:25", "system", "message", "Tests\n12 passed"),
    ]  # fmt: skip
    assert {r.session_id for r in records} == {SID} and {r.cwd for r in records} == {WORK}
    assert records[0].timestamp == 1795000000.0
    assert records[8].extra == {"sidechain": True, "agent_id": "gone"}
    assert cursor.units == count_raw(WIRE, wire) == 14
    count_roles = get_parser(WIRE).count_roles
    assert count_roles is not None
    assert count_roles(wire) == {SID: {"prompts": 4, "replies": 4}}
    (usage,) = cursor.usage
    assert (usage.call_id, usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (
        "chatcmpl-1",
        1200,
        9000,
        80,
    )
    drift = list(diagnostics.drift.values())
    assert [(d.what, d.name, d.version) for d in drift] == [
        ("record type", "HoloDeckEvent", "1.10")
    ]


def test_subagent_wire_is_the_parents_sidechain(tmp_path: Path) -> None:
    share, wire = _home(tmp_path)
    sub = wire.parent / "subagents" / AGENT / "wire.jsonl"
    records, cursor, _ = parse(WIRE, sub, root=share)
    assert [(r.role, r.kind, r.text, r.session_id) for r in records] == [
        ("user", "message", "find the retry helper", SID),
        ("assistant", "message", "dup", SID),
    ]
    assert all(r.extra == {"sidechain": True, "agent_id": AGENT} for r in records)
    count_roles = get_parser(WIRE).count_roles
    assert count_roles is not None and count_roles(sub) == {SID: {"prompts": 0, "replies": 1}}
    assert cursor.units == count_raw(WIRE, sub) == 2


@pytest.mark.parametrize("cut", [2, 9, 17, 22])
def test_wire_resume_gives_what_a_full_parse_gives(tmp_path: Path, cut: int) -> None:
    share, wire = _home(tmp_path)
    full, full_cursor, _ = parse(WIRE, wire, root=share)
    lines = wire.read_text().splitlines(keepends=True)
    wire.write_text("".join(lines[:cut]))
    first, cursor, _ = parse(WIRE, wire, root=share)
    with open(wire, "a") as handle:
        handle.write("".join(lines[cut:]))
    again = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    second, again, _ = parse(WIRE, wire, root=share, cursor=again)
    assert [(r.locator, r.kind, r.text) for r in first + second] == [
        (r.locator, r.kind, r.text) for r in full
    ]
    assert again.units == full_cursor.units


def test_context_is_read_only_without_a_wire_log(tmp_path: Path) -> None:
    """Before 2025-11-26: no wire log. A compaction (before 2025-11-20) rotated the context
    to context_1.jsonl and started it with the summary as an assistant turn, followed by
    copies of the last messages; those copies are indexed once."""
    share, wire = _home(tmp_path)
    context = wire.parent / "context.jsonl"
    assert parse(CONTEXT, context, root=share)[0] == []  # the wire log has turns
    old = share / "sessions" / GROUP / "5f0e0c1a-0000-4000-8000-00000000000a"
    kept = {"role": "user", "content": [{"type": "text", "text": "now add a timeout"}]}
    kept_reply = {"role": "assistant", "content": [{"type": "text", "text": "Timeout added."}]}
    _write(
        old / "context_1.jsonl",
        [
            {"role": "_system_prompt", "content": "You are Kimi."},
            {"role": "_checkpoint", "id": 0},
            {"role": "user", "content": [{"type": "text", "text": "port the cli to argparse"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "think", "think": "Start with main.py.", "encrypted": None},
                    {"type": "text", "text": "Reading main.py."},
                ],
                "tool_calls": [
                    {
                        "type": "function",
                        "id": "c1",
                        "function": {"name": "ReadFile", "arguments": '{"path":"main.py"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [
                    {"type": "text", "text": "<system>1 line read</system>"},
                    {"type": "text", "text": "import sys"},
                ],
            },
            {"role": "_usage", "token_count": 5000},
            {"role": "_checkpoint", "id": 1},
            kept,
            {
                "role": "user",
                "content": [{"type": "text", "text": "<system>CHECKPOINT 1</system>"}],
            },
            kept_reply,
        ],
    )
    _write(
        old / "context.jsonl",
        [
            {"role": "_system_prompt", "content": "You are Kimi."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": "<system>Previous context has been compacted. Here "
                        "is the compaction output:</system>",
                    },
                    {"type": "text", "text": "The cli now uses argparse."},
                ],
            },
            kept,
            kept_reply,
            {"role": "user", "content": "and a --verbose flag"},
            {"role": "assistant", "content": [{"type": "text", "text": "Added --verbose."}]},
        ],
    )
    first, c1, _ = parse(CONTEXT, old / "context_1.jsonl", root=share)
    assert [(r.role, r.kind) for r in first] == [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("user", "prompt"),
        ("system", "message"),
        ("assistant", "message"),
    ]
    current, c2, _ = parse(CONTEXT, old / "context.jsonl", root=share)
    assert [(r.locator, r.role, r.kind, r.text) for r in current] == [
        ("line:2", "system", "summary",
         "<system>Previous context has been compacted. Here is the compaction output:</system>"
         "\nThe cli now uses argparse."),
        ("line:5", "user", "prompt", "and a --verbose flag"),
        ("line:6", "assistant", "message", "Added --verbose."),
    ]  # fmt: skip
    assert {r.session_id for r in first + current} == {old.name}
    assert {r.cwd for r in first + current} == {WORK}
    for path, cursor in ((old / "context_1.jsonl", c1), (old / "context.jsonl", c2)):
        assert cursor.units == count_raw(CONTEXT, path)
    count_roles = get_parser(CONTEXT).count_roles
    assert count_roles is not None
    assert count_roles(old / "context_1.jsonl") == {old.name: {"prompts": 2, "replies": 2}}
    assert count_roles(old / "context.jsonl") == {old.name: {"prompts": 1, "replies": 1}}


def test_peer_fixture(corpus: Path) -> None:
    """agrep's synthetic Kimi home (MIT): its wire log has turns (with empty inputs), so the
    wire is read and the context is not."""
    share = corpus / "agrep-fixtures/kimi/home/.kimi"
    session = (
        share / "sessions/fab17762fe0b032c1fe6f3196408f257/44444444-4444-4444-8444-444444444444"
    )
    records, cursor, diagnostics = parse(WIRE, session / "wire.jsonl", root=share)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("assistant", "tool_call", "tool"),
        ("tool", "tool_result", "import sys\nprint()"),
    ]
    assert {r.cwd for r in records} == {"/work/sample-project"}
    assert diagnostics.count == 0 and cursor.units == count_raw(WIRE, session / "wire.jsonl")
    assert parse(CONTEXT, session / "context.jsonl", root=share)[0] == []


def test_titles_prompt_log_and_discovery(home: Path) -> None:
    share, _ = _home(home)
    (share / "user-history").mkdir()
    _write(
        share / "user-history" / f"{GROUP}.jsonl",
        [{"content": "add a retry to the checkout client"}, {"content": "/compact"}],
    )
    found = discover(home, agents=["kimi-cli"])
    by_store: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    for source in found.sources:
        cursor = ParseCursor()
        texts = [r.text for r in run(source, cursor)]
        by_store.setdefault(source.store, []).extend(texts)
        titles.update(cursor.titles)
    assert sorted(by_store) == [
        "kimi-cli.context",
        "kimi-cli.titles",
        "kimi-cli.user_history",
        "kimi-cli.wire",
    ]
    assert by_store["kimi-cli.context"] == []  # the session has a wire log
    assert by_store["kimi-cli.user_history"] == ["add a retry to the checkout client", "/compact"]
    assert titles == {SID: "Checkout retry"}
    assert len(by_store["kimi-cli.wire"]) == 14 + 2


def test_share_dir_env_override(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "kimi-share"
    _share(elsewhere.parent)
    (elsewhere.parent / ".kimi").rename(elsewhere)
    _write(elsewhere / "sessions" / GROUP / SID / "wire.jsonl", _session_lines()[:3])
    monkeypatch.setenv("KIMI_SHARE_DIR", str(elsewhere))
    found = discover(home, agents=["kimi-cli"])
    assert [s.store for s in found.sources] == ["kimi-cli.wire"]

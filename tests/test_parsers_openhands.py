"""OpenHands CLI: real event files (vendored from OpenHands-CLI's own recorded trajectories),
base_state.json (cwd, usage), the prompt history, discovery and the env overrides."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser
from agentdex.parsers.base import ParseCursor
from conftest import REPO_DIR

EVENT = "openhands.event_json.v1"
STATE = "openhands.base_state_json.v1"
HISTORY = "openhands.prompt_history_json.v1"
REAL = REPO_DIR / "tests" / "fixtures" / "real" / "openhands" / "conversations"
PLAN = REAL / "45fd41ccb7b9b2b306430d3cef1477ed"  # "creating_agent_plan"
FOLLOWUP = REAL / "a9cfd99d7768b3a4ff98c29dddec2576"  # "cli447_hi_followup_iterative_case_b"
WORK = "/home/me/src/notes"


def _all(conversation: Path) -> list[tuple[Path, list[Any], ParseCursor]]:
    out = []
    for path in sorted((conversation / "events").glob("event-*.json")):
        records, cursor, diagnostics = parse(EVENT, path, root=conversation.parent)
        assert diagnostics.count == 0, path
        out.append((path, records, cursor))
    return out


def test_real_plan_trajectory() -> None:
    parsed = _all(PLAN)
    got = [(r.role, r.kind) for _, records, _ in parsed for r in records]
    assert got == [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),  # the text the model wrote with its second call
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),
    ]
    records = [r for _, rs, _ in parsed for r in rs]
    assert records[0].text == "create a dummy plan"
    assert records[2].text.startswith('task_tracker {"command":"plan"')
    assert {r.session_id for r in records} == {PLAN.name}
    first = json.loads(next((PLAN / "events").glob("event-00001-*.json")).read_text())
    assert records[0].timestamp == datetime.fromisoformat(first["timestamp"]).timestamp()
    for path, _, cursor in parsed:
        assert cursor.units == count_raw(EVENT, path)
    count_roles = get_parser(EVENT).count_roles
    assert count_roles is not None
    prompts = sum(c.get(PLAN.name, {}).get("prompts", 0) for c in map(count_roles, _paths(PLAN)))
    replies = sum(c.get(PLAN.name, {}).get("replies", 0) for c in map(count_roles, _paths(PLAN)))
    assert (prompts, replies) == (1, 2)  # the reply and the second call's text


def _paths(conversation: Path) -> list[Path]:
    return sorted((conversation / "events").glob("event-*.json"))


def test_the_critics_follow_up_is_not_typed() -> None:
    records = [r for _, rs, _ in _all(FOLLOWUP) for r in rs]
    assert [(r.role, r.kind) for r in records] == [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
        ("user", "message"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
    ]
    assert records[0].text == "hi" and records[3].extra == {"refinement": True}
    count_roles = get_parser(EVENT).count_roles
    assert count_roles is not None
    total = [count_roles(p).get(FOLLOWUP.name, {}) for p in _paths(FOLLOWUP)]
    assert sum(c.get("prompts", 0) for c in total) == 1


def _event(folder: Path, n: int, event: dict[str, Any]) -> Path:
    path = folder / "events" / f"event-{n:05d}-{n:08x}-0000-4000-8000-000000000000.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": f"e{n}", "timestamp": f"2026-11-20T10:00:{n:02d}", **event}))
    return path


def _conversation(root: Path) -> Path:
    conv = root / "7f3c1d2e9a8b4c5d6e7f8091a2b3c4d5"
    conv.mkdir(parents=True)
    state = {
        "id": "7f3c1d2e-9a8b-4c5d-6e7f-8091a2b3c4d5",
        "workspace": {"working_dir": WORK, "kind": "LocalWorkspace"},
        "agent": {"llm": {"model": "claude-sonnet-4-5", "api_key": "**********"}},
        "stats": {
            "usage_to_metrics": {
                "agent": {
                    "model_name": "claude-sonnet-4-5",
                    "accumulated_token_usage": {"prompt_tokens": 9999, "completion_tokens": 9},
                    "token_usages": [
                        {
                            "model": "claude-sonnet-4-5",
                            "prompt_tokens": 12000,
                            "completion_tokens": 300,
                            "cache_read_tokens": 9000,
                            "cache_write_tokens": 2000,
                            "reasoning_tokens": 40,
                            "response_id": "chatcmpl-1",
                        },
                        {
                            "model": "claude-sonnet-4-5",
                            "prompt_tokens": "lots",
                            "completion_tokens": 1,
                            "response_id": "chatcmpl-2",
                        },
                    ],
                }
            }
        },
    }
    (conv / "base_state.json").write_text(json.dumps(state))
    _event(
        conv,
        0,
        {
            "kind": "SystemPromptEvent",
            "source": "agent",
            "system_prompt": {"type": "text", "text": "You are OpenHands."},
        },
    )
    _event(
        conv,
        1,
        {
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {
                "role": "user",
                "content": [{"type": "text", "text": "paginate GET /notes"}],
            },
            "activated_skills": ["github"],
            "extended_content": [
                {"type": "text", "text": "<REPOSITORY_INFO>notes</REPOSITORY_INFO>"}
            ],
        },
    )
    _event(
        conv,
        2,
        {
            "kind": "UserRejectObservation",
            "source": "environment",
            "tool_name": "terminal",
            "tool_call_id": "t1",
            "action_id": "e1",
            "rejection_reason": "use the ORM, not raw SQL",
            "rejection_source": "user",
        },
    )
    _event(
        conv,
        3,
        {
            "kind": "UserRejectObservation",
            "source": "environment",
            "tool_name": "terminal",
            "tool_call_id": "t2",
            "action_id": "e1",
            "rejection_reason": "User rejected the action",
        },
    )
    _event(
        conv,
        4,
        {
            "kind": "Condensation",
            "source": "environment",
            "forgotten_event_ids": ["e1"],
            "summary": "Pagination uses a cursor.",
            "llm_response_id": "r9",
        },
    )
    _event(
        conv,
        5,
        {
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {
                "role": "user",
                "content": [{"type": "text", "text": "<<RESUMED CONVERSATION>>\nuser: paginate"}],
            },
        },
    )
    _event(conv, 6, {"kind": "HoloEvent", "source": "agent"})
    _event(conv, 7, {"kind": "PauseEvent", "source": "user"})
    return conv


def test_state_rejections_summaries_and_drift(tmp_path: Path) -> None:
    conv = _conversation(tmp_path / "conversations")
    seen: list[tuple[str, str, str]] = []
    drift = []
    for path in _paths(conv):
        records, cursor, diagnostics = parse(EVENT, path, root=conv.parent)
        seen += [(r.role, r.kind, r.text) for r in records]
        assert {r.cwd for r in records} <= {WORK}
        assert cursor.units == count_raw(EVENT, path)
        drift += [(d.what, d.name) for d in diagnostics.drift.values()]
    assert seen == [
        ("user", "prompt", "paginate GET /notes"),
        ("system", "message", "<REPOSITORY_INFO>notes</REPOSITORY_INFO>"),
        ("user", "prompt", "use the ORM, not raw SQL"),
        ("tool", "tool_result", "User rejected the action"),
        ("system", "summary", "Pagination uses a cursor."),
        ("system", "message", "<<RESUMED CONVERSATION>>\nuser: paginate"),
    ]
    assert drift == [("event kind", "HoloEvent")]
    records, cursor, diagnostics = parse(STATE, conv / "base_state.json", root=conv.parent)
    assert records == [] and cursor.units == count_raw(STATE, conv / "base_state.json") == 2
    (usage,) = cursor.usage
    assert (usage.call_id, usage.input_tokens, usage.cache_read_tokens) == (
        "chatcmpl-1",
        1000,
        9000,
    )
    assert (usage.cache_write_tokens, usage.output_tokens, usage.reasoning_tokens) == (
        2000,
        300,
        40,
    )
    assert (usage.cwd, usage.model, cursor.usage_skipped) == (WORK, "claude-sonnet-4-5", 1)
    assert "api_key" not in str([r.text for r in records])


def test_prompt_history_finds_its_project(tmp_path: Path) -> None:
    persistence = tmp_path / ".openhands"
    _conversation(persistence / "conversations")
    digest = hashlib.sha256(WORK.encode()).hexdigest()
    log = persistence / "projects" / digest / "prompt_history.json"
    log.parent.mkdir(parents=True)
    log.write_text(
        json.dumps(
            [
                {"text": "paginate GET /notes", "timestamp": "2026-11-20T09:59:58"},
                {"text": " ", "timestamp": "2026-11-20T10:01:00"},
            ]
        )
    )
    records, cursor, _ = parse(HISTORY, log, root=persistence)
    assert [(r.text, r.cwd, r.session_id) for r in records] == [
        ("paginate GET /notes", WORK, f"openhands-prompts:{WORK}")
    ]
    assert cursor.units == count_raw(HISTORY, log) == 1
    count_roles = get_parser(HISTORY).count_roles
    assert count_roles is not None
    assert count_roles(log) == {f"openhands-prompts:{WORK}": {"prompts": 1, "replies": 0}}


def test_discovery_default_and_overrides(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conv = _conversation(home / ".openhands" / "conversations")
    shutil.copytree(PLAN, home / ".openhands" / "conversations" / PLAN.name)
    found = discover(home, agents=["openhands"])
    stores = sorted({s.store for s in found.sources})
    assert stores == ["openhands.base_state", "openhands.events"]
    texts = [r.text for s in found.sources for r in run(s)]
    assert "create a dummy plan" in texts and "paginate GET /notes" in texts
    moved = tmp_path / "elsewhere"
    shutil.move(str(conv.parent), moved)
    monkeypatch.setenv("OPENHANDS_CONVERSATIONS_DIR", str(moved))
    found = discover(home, agents=["openhands"])
    assert {
        Path(s.path).parent.parent.parent for s in found.sources if s.store == "openhands.events"
    } == {moved}
    monkeypatch.delenv("OPENHANDS_CONVERSATIONS_DIR")
    persistence = tmp_path / "oh-home"
    shutil.move(str(moved), persistence / "conversations")
    monkeypatch.setenv("OPENHANDS_PERSISTENCE_DIR", str(persistence))
    found = discover(home, agents=["openhands"])
    assert len([s for s in found.sources if s.store == "openhands.events"]) == 8 + 6

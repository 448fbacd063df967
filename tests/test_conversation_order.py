"""A conversation reads in the order the agent showed it, also when times tie or are missing."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentdex.api import history
from agentdex.api import search as api
from agentdex.api._order import conversation_order, split_ref

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Item:
    path: str
    at: float | None
    name: str


def _order(items: list[Item]) -> list[str]:
    return [i.name for i in conversation_order(items, lambda i: i.path, lambda i: i.at)]


def test_each_file_keeps_its_own_order_and_files_interleave_by_time() -> None:
    items = [
        Item("main", 10.0, "prompt"),
        Item("main", 10.0, "reply, same time"),  # a tie never reorders a file
        Item("main", None, "tool call, no time"),  # stays after what it followed
        Item("main", 5.0, "late line stamped earlier"),  # the file's order wins
        Item("main", 30.0, "second prompt"),
        Item("sub", None, "subagent start, no time"),  # takes the file's first time
        Item("sub", 20.0, "subagent reply"),
    ]
    assert _order(items) == [
        "prompt",
        "reply, same time",
        "tool call, no time",
        "late line stamped earlier",
        "subagent start, no time",
        "subagent reply",
        "second prompt",
    ]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("abc", ("abc", None)),
        ("abc@line:3", ("abc", "line:3")),
        ("/w/app@2026-11-03 09:00:00", ("/w/app@2026-11-03 09:00:00", None)),
        ("/w/app@2026-11-03 09:00:00@line:12", ("/w/app@2026-11-03 09:00:00", "line:12")),
        ("s@history.jsonl:line:2", ("s", "history.jsonl:line:2")),
        (
            "c@row:cursorDiskKV/bubbleId:c:b/thinking",
            ("c", "row:cursorDiskKV/bubbleId:c:b/thinking"),
        ),
        ("user@host.example", ("user@host.example", None)),
    ],
)
def test_references_split_at_the_last_at_before_a_locator(
    ref: str, expected: tuple[str, str | None]
) -> None:
    assert split_ref(ref) == expected


def test_vscode_reply_follows_its_prompt_despite_one_timestamp(home: Path) -> None:
    """VS Code stamps only the request: prompt, reasoning, reply and tools share one time."""
    user = home / ".config" / "Code" / "User"
    shutil.copytree(FIXTURES / "vscode" / "workspaceStorage", user / "workspaceStorage")
    session = "4c1f7e2a-9b3d-4e5f-8a6b-7c8d9e0f1a2b"
    expected = [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("assistant", "message"),  # the model's next round, after its read
        ("assistant", "tool_call"),
        ("user", "prompt"),
        ("assistant", "message"),
    ]
    shown = history.show(session, str(home))
    assert [(r["role"], r["kind"]) for r in shown["records"]] == expected
    assert len({r["timestamp"] for r in shown["records"][:6]}) == 1
    api.refresh(home=str(home))
    indexed = api.resolve_ref(f"{session}@json:/requests/0/response/2")
    assert [(r["role"], r["kind"]) for r in indexed["records"]] == expected
    assert indexed["position"] == 2


def test_aider_reference_with_two_at_signs_gives_focus(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = home / "src" / "afi-core"
    shutil.copytree(FIXTURES / "real" / "aider" / "afi-core", project)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(home / "src"))
    session = f"{project}@2025-07-16 20:11:30"
    shown = history.show(f"{session}@line:14", str(home), agent="aider")
    assert shown["session_id"] == session
    focused = shown["records"][shown["focus"]]
    assert focused["locator"] == "line:14" and focused["kind"] == "prompt"
    api.refresh(home=str(home))
    indexed = api.resolve_ref(f"{session}@line:14")
    assert indexed["records"][indexed["position"]]["text"] == focused["text"]

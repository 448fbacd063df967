"""``audit`` counts prompts and replies per conversation with each parser's own counter."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import history
from agentdex.parsers import aider, cline

FIXTURES = Path(__file__).parent / "fixtures"
TASK = "1795000000000"


def _source(data: dict[str, Any], store: str) -> dict[str, Any]:
    (row,) = [s for s in data["sources"] if s["store"] == store]
    return row


@pytest.fixture
def cline_home(home: Path) -> Path:
    shutil.copytree(FIXTURES / "cline", home / ".cline" / "data")
    return home


def test_roles_agree_on_a_real_shaped_cline_task(cline_home: Path) -> None:
    data = history.audit(str(cline_home))
    row = _source(data, "cline.tasks")
    assert row["status"] == "ok"
    roles = row["roles"]
    assert (roles["prompts"], roles["raw_prompts"]) == (5, 5)
    assert (roles["replies"], roles["raw_replies"]) == (6, 6)
    assert roles["mismatched"] == 0 and roles["problems"] == []
    assert data["totals"]["role_mismatches"] == 0


def _every_text_is_a_prompt(raw: str, *, tool_result: bool = False) -> list[Any]:
    """The old reading: whatever the user role carries is what the person typed."""
    text = raw.strip()
    return [("tool" if tool_result else "user", "tool_result" if tool_result else "prompt", text)]


def test_harness_text_read_as_prompts_is_a_mismatch_naming_the_task(
    cline_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cline, "user_text_parts", _every_text_is_a_prompt)
    data = history.audit(str(cline_home))
    row = _source(data, "cline.tasks")
    assert row["status"] == "mismatch"
    (problem,) = row["roles"]["problems"]
    assert problem["session_id"] == TASK and problem["status"] == "mismatch"
    assert problem["prompts"] > problem["raw_prompts"] == 5
    assert data["totals"]["role_mismatches"] == 1 and data["totals"]["problems"] == 1


def test_a_split_reply_is_a_mismatch(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = home / "src" / "afi-core"
    shutil.copytree(FIXTURES / "real" / "aider" / "afi-core", project)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(home / "src"))
    assert _source(history.audit(str(home)), "aider.chat_history")["status"] == "ok"
    # The old rule: any line starting with ">" (``>>>>>>> REPLACE`` too) is Aider's output.
    monkeypatch.setattr(aider, "is_output", lambda line: line.startswith(">"))
    row = _source(history.audit(str(home)), "aider.chat_history")
    assert row["status"] == "mismatch"
    (problem,) = row["roles"]["problems"]
    assert problem["session_id"] == f"{project}@2025-07-16 20:11:30"
    assert problem["replies"] > problem["raw_replies"] == 9


def test_an_abandoned_cursor_branch_is_reported_not_a_mismatch(home: Path) -> None:
    from test_parsers_cursor import _branchy_store

    user = home / ".config" / "Cursor" / "User"
    _branchy_store(user)
    data = history.audit(str(home))
    row = _source(data, "cursor.global_state")
    assert row["status"] == "ok"
    assert row["units"] == row["raw"] == 5
    assert row["roles"]["abandoned"] == 1 and row["roles"]["mismatched"] == 0
    assert row["roles"]["problems"] == [
        {
            "session_id": "cb:abandoned",
            "prompts": 1,
            "replies": 1,
            "raw_prompts": 1,
            "raw_replies": 1,
            "status": "abandoned",
        }
    ]
    assert data["totals"]["abandoned"] == 1 and data["totals"]["problems"] == 0


def test_cli_audit_names_the_conversation(cline_home: Path, run_cli: Any) -> None:
    # The history now holds a reply Cline's UI log never showed: the counts disagree.
    ui = cline_home / ".cline" / "data" / "tasks" / TASK / "ui_messages.json"
    ui.write_text(
        ui.read_text().replace('"say":"text","text":"Running the tests."', '"say":"text","text":""')
    )
    result = run_cli("--home", str(cline_home), "audit")
    assert result.returncode == 0, result.stderr
    assert f"mismatch {TASK}: prompts 5/5, replies 6/5" in result.stdout

"""``sessions`` counts prompts, replies and tool events apart, on every surface."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentdex.api import search as api
from agentdex.http.app import create_app
from agentdex.index.context_stats import PROMPT_SQL, REPLY_SQL, TOOL_SQL
from agentdex.mcp.tools._base import Settings
from agentdex.mcp.tools.search import LIST_SESSIONS
from agentdex.records import KINDS, ROLES, conversation_part

FIXTURES = Path(__file__).parent / "fixtures"
CLINE_TASK = "1795000000000"
VSCODE_CHAT = "4c1f7e2a-9b3d-4e5f-8a6b-7c8d9e0f1a2b"


def test_sql_counts_are_the_python_definition() -> None:
    db = sqlite3.connect(":memory:")
    for role in ROLES:
        for kind in KINDS:
            row = db.execute(
                f"SELECT {PROMPT_SQL}, {REPLY_SQL}, {TOOL_SQL} FROM (SELECT ? AS role, ? AS kind)",
                (role, kind),
            ).fetchone()
            part = conversation_part(role, kind)
            assert row == (part == "prompt", part == "reply", part == "tool"), (role, kind)


@pytest.fixture
def fixture_home(home: Path) -> Path:
    """The Cline task and the VS Code chat fixtures, where the agents keep them."""
    shutil.copytree(FIXTURES / "cline", home / ".cline" / "data")
    user = home / ".config" / "Code" / "User"
    shutil.copytree(FIXTURES / "vscode" / "workspaceStorage", user / "workspaceStorage")
    api.refresh(home=str(home))
    return home


def _by_session(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["session_id"]: c for c in data["conversations"]}


EXPECTED = {
    # 5 typed texts (the task, an answer, feedback, a resume message, a denial's feedback),
    # 6 replies, 5 calls + 7 results; harness text and reasoning are records only
    CLINE_TASK: ("cline", "add a retry to the checkout client", 5, 6, 12, 31, 11),
    # 2 requests; 3 replies (the first request's model wrote before and after its read); a
    # read and an edit; its stored custom title
    VSCODE_CHAT: ("vscode-copilot", "Retry cap", 2, 3, 2, 8, 5),
}


def _check(conversations: dict[str, dict[str, Any]]) -> None:
    for session, (agent, title, prompts, replies, tools, records, messages) in EXPECTED.items():
        got = conversations[session]
        assert got["agent"] == agent and got["title"] == title
        assert (got["prompts"], got["replies"], got["tool_events"]) == (prompts, replies, tools)
        assert (got["records"], got["message_count"]) == (records, messages)


def test_library_http_and_mcp_report_the_same_counts(fixture_home: Path) -> None:
    library = api.conversations(refresh_first=False).to_json()
    _check(_by_session(library))
    client = TestClient(create_app(token="t0ken"))
    response = client.get(
        "/api/v0/conversations",
        params={"refresh": "false"},
        headers={"Authorization": "Bearer t0ken"},
    )
    assert response.status_code == 200
    _check(_by_session(response.json()))
    listed = LIST_SESSIONS.handler({"limit": 50}, Settings(home=str(fixture_home)))
    _check(_by_session(listed))


def test_cli_sessions_json_and_text(fixture_home: Path, run_cli: Any) -> None:
    out = run_cli("--home", str(fixture_home), "conversations", "--no-refresh", "--json")
    assert out.returncode == 0, out.stderr
    _check(_by_session(json.loads(out.stdout)))
    out = run_cli("--home", str(fixture_home), "conversations", "--no-refresh")
    line = next(x for x in out.stdout.splitlines() if x.split("\t")[1] == CLINE_TASK)
    assert line.split("\t")[3:6] == ["5", "6", "12"]
    assert line.endswith("\tadd a retry to the checkout client")


def test_prompt_log_copies_are_not_counted_twice(home: Path) -> None:
    """Claude's history.jsonl repeats the transcript's prompts: the count stays two."""
    session = "5d0c2b1e-1111-4222-8333-444455556666"
    project = home / ".claude" / "projects" / "-work-shop"
    project.mkdir(parents=True)
    lines = [
        ("user", "fix the flaky checkout test", "2026-11-20T10:00:00Z"),
        ("assistant", "Adding retry with backoff.", "2026-11-20T10:00:05Z"),
        ("user", "now run it", "2026-11-20T10:01:00Z"),
    ]
    (project / f"{session}.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "type": kind,
                    "sessionId": session,
                    "timestamp": ts,
                    "message": {"role": kind, "content": text},
                }
            )
            + "\n"
            for kind, text, ts in lines
        )
    )
    (home / ".claude" / "history.jsonl").write_text(
        "".join(
            json.dumps({"display": text, "timestamp": 1795168800000 + i, "sessionId": session})
            + "\n"
            for i, text in enumerate(["fix the flaky checkout test", "now run it"])
        )
    )
    api.refresh(home=str(home))
    (conversation,) = api.conversations(refresh_first=False).conversations
    assert (conversation["prompts"], conversation["replies"]) == (2, 1)
    assert conversation["records"] == 5  # the log's copies are indexed, just not counted

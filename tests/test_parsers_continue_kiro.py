"""Continue sessions and index; Kiro IDE (the same Session shape, and its older .chat files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser
from agentdex.parsers.continue_ import clean_title

FIXTURES = Path(__file__).parent / "fixtures"
SESSIONS = FIXTURES / "continue" / "sessions"
A = "8f0c2d4e-1a2b-4c3d-9e8f-0a1b2c3d4e5f"
C = "2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"
PID = "continue.session_json.v1"


def test_session_records() -> None:
    records, cursor, diags = parse(PID, SESSIONS / f"{A}.json")
    assert [(r.role, r.kind, r.text[:34], r.locator) for r in records] == [
        ("user", "prompt", "why are cart totals off by a cent?", "json:/history/0"),
        ("assistant", "reasoning", "Floats; check for round().", "json:/history/1"),
        ("assistant", "message", "Let me read the checkout code.", "json:/history/1#1"),
        ("assistant", "tool_call", 'read_file {"filepath":"src/checkou', "json:/history/1#2"),
        ("tool", "tool_result", "def total(items):\n    return sum(i", "json:/history/2"),
        ("assistant", "reasoning", "Prices are floats; Decimal fixes t", "json:/history/3"),
        ("assistant", "message", "Prices are floats; summing them dr", "json:/history/4"),
        ("system", "summary", "The user asked why totals are off;", "json:/history/4#1"),
        ("user", "prompt", "do it", "json:/history/5"),
    ]
    # the session's file:// URI, decoded; the index's dateCreated (ms, a string) for every record
    assert {(r.cwd, r.timestamp) for r in records} == {("/home/dev/my shop", 1793620800.0)}
    assert records[2].model == "Claude Sonnet 4.5" and records[0].model is None
    assert cursor.titles == {A: "Round cart totals"}
    [drift] = diags.drift.values()
    assert (drift.what, drift.name, drift.locator) == ("message role", "critic", "json:/history/6")
    assert [(u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens)
            for u in cursor.usage] == [(1800, 1200, 60, 20), (2100, 0, 40, 0)]  # fmt: skip


def test_think_preamble_is_not_a_title() -> None:
    assert (
        clean_title("<think>\nshort title?\n</think>\n\nRound cart totals") == "Round cart totals"
    )
    assert clean_title("<think>\nOkay, the user wants a title for") is None
    assert clean_title("New Session") is None
    _, cursor, _ = parse(PID, SESSIONS / f"{C}.json")
    assert cursor.titles == {}


def test_counts_agree() -> None:
    for name in (A, C):
        path = SESSIONS / f"{name}.json"
        records, cursor, _ = parse(PID, path)
        assert cursor.units == count_raw(PID, path)
        roles = get_parser(PID).count_roles
        assert roles is not None
        assert roles(path) == {
            name: {
                "prompts": sum(r.kind == "prompt" for r in records),
                "replies": sum(r.role == "assistant" and r.kind == "message" for r in records),
            }
        }
    assert count_raw(PID, SESSIONS / f"{A}.json") == 6


def test_index_gives_titles_and_names_sessions_whose_file_is_gone() -> None:
    records, cursor, diags = parse("continue.sessions_index.v1", SESSIONS / "sessions.json")
    assert records == []
    assert cursor.titles == {
        A: "Round cart totals",
        "deadbeef-0000-4000-8000-000000000000": "An old chat",
    }
    assert [(d.locator, d.message) for d in diags.items] == [
        ("json:/2", "listed session deadbeef-0000-4000-8000-000000000000 has no file (deleted)")
    ]


def test_without_an_index_the_file_time_is_used(tmp_path: Path) -> None:
    shutil.copy(SESSIONS / f"{C}.json", tmp_path / f"{C}.json")
    records, _, _ = parse(PID, tmp_path / f"{C}.json")
    assert {r.timestamp for r in records} == {(tmp_path / f"{C}.json").stat().st_mtime}
    assert {r.cwd for r in records} == {"/home/dev/notes"}


def test_continue_discovery(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(SESSIONS, home / ".continue" / "sessions")
    found = discover(home, agents=["continue"]).sources
    assert sorted((s.store, s.path.name) for s in found) == [
        ("continue.index", "sessions.json"),
        ("continue.sessions", f"{C}.json"),
        ("continue.sessions", f"{A}.json"),
    ]
    assert all(r.agent == "continue" for s in found for r in run(s))
    elsewhere = tmp_path / "cont"
    shutil.copytree(SESSIONS, elsewhere / "sessions")
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(elsewhere))
    assert {s.root.path for s in discover(home, agents=["continue"]).sources} == {elsewhere}


KIRO = FIXTURES / "kiro"
KIRO_SESSION = "4c5d6e7f-8091-4a2b-bc3d-4e5f60718293"


def test_kiro_sessions_and_old_chats(home: Path) -> None:
    storage = home / ".config/Kiro/User/globalStorage/kiro.kiroagent"
    shutil.copytree(KIRO, storage)
    found = discover(home, agents=["kiro-ide"]).sources
    assert sorted(s.store for s in found) == [
        "kiro-ide.chats",
        "kiro-ide.index",
        "kiro-ide.sessions",
    ]
    by_store = {s.store: list(run(s)) for s in found}
    assert [(r.kind, r.text) for r in by_store["kiro-ide.sessions"]] == [
        ("prompt", "add rate limiting to the login route"),
        ("message", "I'll add a token bucket per IP in the login handler."),
    ]
    assert {r.cwd for r in by_store["kiro-ide.sessions"]} == {"/home/dev/api"}
    chat = by_store["kiro-ide.chats"]
    assert [(r.role, r.kind, r.text[:30]) for r in chat] == [
        ("system", "message", "# System Prompt\nYou are Kiro, "),
        ("system", "message", "I will follow these instructio"),
        ("system", "message", "## Included Rules (tech.md)\nUs"),
        ("user", "prompt", "write a spec for password rese"),
        ("assistant", "message", "Here is the requirements docum"),
        ("tool", "tool_result", "Created .kiro/specs/password-r"),
    ]
    assert chat[0].timestamp == 1790500000.0 and chat[4].model == "claude-sonnet-4"
    path = next(s.path for s in found if s.store == "kiro-ide.chats")
    assert count_raw("kiro-ide.chat_json.v1", path) == 6


def test_kiro_through_wsl(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    users = tmp_path / "Users"
    shutil.copytree(KIRO, users / "ada/AppData/Roaming/Kiro/User/globalStorage/kiro.kiroagent")
    shutil.copytree(SESSIONS, users / "ada/.continue/sessions")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    found = discover(home, agents=["kiro-ide", "continue"]).sources
    assert {(s.agent, s.host) for s in found} == {
        ("kiro-ide", "windows:ada"),
        ("continue", "windows:ada"),
    }


def test_no_resume_command() -> None:
    assert not resume_row("continue").supported and not resume_row("kiro-ide").supported

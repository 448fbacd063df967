"""Roo Code and Kilo Code: Cline-shaped task folders (both), Kilo's OpenCode-shaped kilo.db.

Fixtures (``tests/fixtures/roo``, ``tests/fixtures/kilo``) are synthetic in the
shape Roo Code's and Kilo Code's sources write (``fixtures/real/SOURCES.md``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _agent_helpers import build_db, count_raw, parse
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

FIXTURES = Path(__file__).parent / "fixtures"
ROO = FIXTURES / "roo" / "tasks" / "0b7c6c1e-5d0e-4a53-9a55-3f1f4b1e2d10"
KILO = FIXTURES / "kilo" / "tasks" / "5a0e1f7c-2b1d-4a7e-8e0c-9d3b6c2a1f40"
ROO_PID = "roo-code.api_history_json.v1"
KILO_PID = "kilo-code.api_history_json.v1"
STORAGE = ".config/Code/User/globalStorage"


def _install(home: Path, fixture: Path, ext: str) -> Path:
    task = home / STORAGE / ext / "tasks" / fixture.name
    shutil.copytree(fixture, task)
    return task


def test_roo_task_with_its_history_item(home: Path) -> None:
    task = _install(home, ROO, "rooveterinaryinc.roo-cline")
    found = discover(home, agents=["roo-code"])
    [source] = found.sources
    assert (source.store, source.path) == ("roo-code.tasks", task / "api_conversation_history.json")
    records = list(run(source))
    assert [(r.role, r.kind, r.text[:40]) for r in records] == [
        ("user", "prompt", "add a dark mode toggle to the header"),
        ("assistant", "reasoning", "The theme lives in src/theme.ts; read it"),
        ("assistant", "message", "I'll read the theme file first."),
        ("assistant", "tool_call", 'read_file {"path":"src/theme.ts"}'),
        ("tool", "tool_result", "export const theme = { mode: 'light' }"),
        ("assistant", "message", "Added a toggle that flips theme.mode."),
        ("assistant", "tool_call", 'attempt_completion {"result":"The header'),
        ("user", "prompt", "also remember the choice in localStorage"),
        ("assistant", "reasoning", "Persist with localStorage.setItem."),
        ("assistant", "message", "The choice is now saved in localStorage."),
        ("system", "summary", "## Conversation summary\nThe user asked f"),
    ]
    assert {(r.agent, r.session_id, r.cwd) for r in records} == {
        ("roo-code", ROO.name, "/home/dev/shop")
    }
    assert records[0].timestamp == 1793696400.0
    assert not any("environment_details" in r.text for r in records)


def test_roo_counts_agree_with_the_ui_log() -> None:
    path = ROO / "api_conversation_history.json"
    records, cursor, diags = parse(ROO_PID, path, root=ROO.parent.parent)
    assert diags.count == 0 and not diags.drift
    assert cursor.units == count_raw(ROO_PID, path) == 7
    roles = get_parser(ROO_PID).count_roles
    assert roles is not None
    prompts = sum(r.kind == "prompt" for r in records)
    replies = sum(r.role == "assistant" and r.kind == "message" for r in records)
    assert (
        roles(path)
        == {ROO.name: {"prompts": prompts, "replies": replies}}
        == {ROO.name: {"prompts": 2, "replies": 3}}
    )


def test_roo_without_history_item_takes_the_cwd_from_the_environment(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / ROO.name
    shutil.copytree(ROO, task)
    (task / "history_item.json").unlink()
    records, _, _ = parse(ROO_PID, task / "api_conversation_history.json", root=tmp_path)
    assert {r.cwd for r in records} == {"/home/dev/shop"}


def test_unknown_content_blocks_are_format_drift(tmp_path: Path) -> None:
    task = tmp_path / "tasks" / ROO.name
    shutil.copytree(ROO, task)
    path = task / "api_conversation_history.json"
    data = json.loads(path.read_text())
    data[1]["content"].append({"type": "web_search_result", "content": []})
    path.write_text(json.dumps(data))
    records, _, diags = parse(ROO_PID, path, root=tmp_path)
    assert len(records) == 11
    [drift] = diags.drift.values()
    assert (drift.what, drift.name, drift.count, drift.locator) == (
        "content block",
        "web_search_result",
        1,
        "json:/1/content/3",
    )


def test_roo_custom_storage_path_from_vscode_settings(home: Path, tmp_path: Path) -> None:
    custom = tmp_path / "roo-storage"
    shutil.copytree(ROO, custom / "tasks" / ROO.name)
    settings = home / ".config/Code/User/settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        '{\n  // JSONC\n  "editor.fontSize": 13,\n'
        f'  "roo-cline.customStoragePath": {json.dumps(str(custom))},\n}}\n'
    )
    found = discover(home, agents=["roo-code"])
    assert [s.path for s in found.sources] == [
        custom / "tasks" / ROO.name / "api_conversation_history.json"
    ]


def test_roo_and_kilo_through_wsl(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = tmp_path / "mnt-c-Users"
    storage = users / "ada" / "AppData/Roaming/Code/User/globalStorage"
    shutil.copytree(ROO, storage / "rooveterinaryinc.roo-cline" / "tasks" / ROO.name)
    shutil.copytree(KILO, storage / "kilocode.kilo-code" / "tasks" / KILO.name)
    kilo_db = users / "ada" / ".local/share/kilo/kilo.db"
    build_db(kilo_db, "CREATE TABLE session(id TEXT);")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    found = discover(home, agents=["roo-code", "kilo-code"])
    assert sorted((s.store, s.host) for s in found.sources) == [
        ("kilo-code.db", "windows:ada"),
        ("kilo-code.tasks", "windows:ada"),
        ("roo-code.tasks", "windows:ada"),
    ]


def test_kilo_extension_task_of_the_cline_era(home: Path) -> None:
    _install(home, KILO, "kilocode.kilo-code")
    [source] = discover(home, agents=["kilo-code"]).sources
    assert source.store == "kilo-code.tasks"
    records = list(run(source))
    assert [(r.role, r.kind) for r in records] == [
        ("user", "prompt"),
        ("assistant", "message"),  # its XML tool call stays in the reply's text
        ("tool", "tool_result"),
        ("system", "message"),  # the file body, a block of its own after the result header
        ("assistant", "message"),
        ("tool", "tool_result"),
        ("system", "message"),  # Kilo's wrapper sentence around the feedback
        ("user", "prompt"),
        ("assistant", "message"),
    ]
    assert [r.text for r in records if r.kind == "prompt"] == [
        "why does /health return 500?",
        "add a test for it",
    ]
    assert records[-1].text == "Added tests/test_health.py."
    assert {r.cwd for r in records} == {"/home/ola/notes-api"}
    path = source.path
    roles = get_parser(KILO_PID).count_roles
    assert roles is not None and roles(path) == {KILO.name: {"prompts": 2, "replies": 3}}
    assert count_raw(KILO_PID, path) == 6


def test_kilo_db_is_read_with_the_opencode_schema(home: Path, corpus: Path) -> None:
    db = home / ".local/share/kilo/kilo.db"
    build_db(db, (corpus / "agrep-fixtures/opencode/seed.sql").read_text())
    [source] = discover(home, agents=["kilo-code"]).sources
    assert (source.store, source.path) == ("kilo-code.db", db)
    records = list(run(source))
    assert {r.agent for r in records} == {"kilo-code"}
    assert [r.text for r in records if r.kind == "prompt"] == [
        "convert config to yaml",
        "check the generated yaml schema",
    ]
    assert count_raw("kilo-code.sqlite.v1", db) == 5


def test_kilo_db_env_pins_one_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = build_db(tmp_path / "elsewhere" / "work.sqlite", "CREATE TABLE session(id TEXT);")
    monkeypatch.setenv("KILO_DB", str(pinned))
    assert [s.path for s in discover(home, agents=["kilo-code"]).sources] == [pinned]
    monkeypatch.setenv("KILO_DB", str(tmp_path / "missing.db"))
    found = discover(home, agents=["kilo-code"])
    assert found.sources == [] and any("KILO_DB=" in w for w in found.warnings)


def test_resume_rows() -> None:
    kilo = resume_row("kilo-code")
    assert kilo.argv == ("kilo", "--session", "{session_id}")
    assert kilo.stores == ("kilo-code.db",)
    assert not resume_row("roo-code").supported

"""Discovery: roots from home/XDG/overrides, safe globbing, secrets never listed."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdex.catalogue import CATALOGUE, Coverage
from agentdex.discovery import discover
from agentdex.discovery.globwalk import glob
from agentdex.readers import SECRET_NAMES, is_secret


def _touch(path: Path, text: str = "{}\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_finds_default_locations(home: Path) -> None:
    _touch(home / ".claude/projects/-a/s1.jsonl")
    _touch(home / ".codex/sessions/2026/11/01/rollout-2026-11-01T10-00-00-x.jsonl")
    _touch(home / ".gemini/tmp/abc/chats/session-1.json")
    _touch(home / ".config/Code - Insiders/User/workspaceStorage/h/chatSessions/c.json")
    found = discover(home)
    stores = sorted(s.store for s in found.sources)
    assert stores == [
        "claude-code.projects",
        "codex.sessions",
        "gemini-cli.chats",
        "vscode-copilot.chat_sessions",
    ]
    assert found.warnings == []


def test_override_used_when_it_exists(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alt = tmp_path / "alt-codex"
    _touch(alt / "history.jsonl")
    _touch(home / ".codex/history.jsonl")
    monkeypatch.setenv("CODEX_HOME", str(alt))
    paths = [s.path for s in discover(home, agents=["codex"]).sources]
    assert paths == [alt / "history.jsonl"]


def test_missing_override_falls_back_with_warning(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _touch(home / ".claude/history.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "missing"))
    found = discover(home, agents=["claude-code"])
    assert [s.path for s in found.sources] == [home / ".claude/history.jsonl"]
    assert any("CLAUDE_CONFIG_DIR" in w and "default" in w for w in found.warnings)


def test_claude_config_dir_may_list_several(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _touch(a / "history.jsonl")
    _touch(b / "history.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{a},{b}")
    assert {s.path for s in discover(home, agents=["claude-code"]).sources} == {
        a / "history.jsonl",
        b / "history.jsonl",
    }


def test_gemini_cli_home_replaces_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _touch(tmp_path / "g/.gemini/tmp/h/logs.json", "[]")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    assert [s.store for s in discover(home, agents=["gemini-cli"]).sources] == ["gemini-cli.logs"]


def test_xdg_config_home_moves_vscode(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "xdg"
    _touch(xdg / "VSCodium/User/workspaceStorage/h/chatSessions/c.json")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    found = discover(home, agents=["vscode-copilot"])
    assert [s.path.name for s in found.sources] == ["c.json"]


def test_secrets_and_private_rows_never_listed(home: Path) -> None:
    _touch(home / ".codex/auth.json", '{"OPENAI_API_KEY": "sk-x"}')
    _touch(home / ".claude/.credentials.json")
    _touch(home / ".claude/projects/-a/.env")
    found = discover(home)
    assert found.sources == []
    assert any(r.coverage is Coverage.PRIVATE for r in CATALOGUE)


@given(
    st.one_of(
        st.sampled_from(SECRET_NAMES),
        st.text(alphabet="abcdeEnvkypmAUTHjson._-*[]?", max_size=24),
        st.builds(lambda a, b: a + b, st.sampled_from(SECRET_NAMES), st.text(max_size=6)),
        st.builds(lambda a, b: a + b, st.text(max_size=6), st.sampled_from(SECRET_NAMES)),
    )
)
def test_secret_names_match_like_fnmatch_on_the_lowered_name(name: str) -> None:
    """The one compiled pattern decides exactly as each fnmatch pattern in turn would."""
    if "/" in name or "\0" in name:
        return
    expected = any(fnmatch.fnmatchcase(name.lower(), pattern) for pattern in SECRET_NAMES)
    assert is_secret(f"/some/dir/{name}") is expected


def test_glob_does_not_follow_directory_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _touch(outside / "leak.jsonl")
    root = tmp_path / "root"
    (root / "projects").mkdir(parents=True)
    os.symlink(outside, root / "projects" / "linked")
    os.symlink(root, root / "projects" / "loop")  # a loop must not hang
    _touch(root / "projects/real/ok.jsonl")
    assert list(glob(str(root), "projects/*/*.jsonl")) == [str(root / "projects/real/ok.jsonl")]
    assert list(glob(str(root), "**/*.jsonl")) == [str(root / "projects/real/ok.jsonl")]


def test_directory_where_file_expected_is_skipped(home: Path) -> None:
    (home / ".claude/projects/-a/weird.jsonl").mkdir(parents=True)
    assert discover(home).sources == []


def test_wsl_bridge_off_by_default(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = tmp_path / "Users"
    _touch(users / "alex/AppData/Roaming/Code/User/workspaceStorage/h/chatSessions/c.json")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    assert discover(home).sources == []
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    found = discover(home)
    assert [(s.store, s.host) for s in found.sources] == [
        ("vscode-copilot.chat_sessions", "windows:alex")
    ]

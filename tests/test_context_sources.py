"""User-added sources: validation, persistence, re-validation at resolve time."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdex.api import context as api
from agentdex.context.sources import sources_path
from agentdex.errors import NotFoundError, UsageError
from context_helpers import res, snap, sources_of, write


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


def test_add_list_remove_round_trip(ws: Path, home: Path) -> None:
    prompts = write(home / ".claude" / "team" / "AGENTS.md", "# Team\n").parent
    entry = api.add_source(str(prompts), str(ws))
    assert entry["created"] and entry["path"] == str(prompts.resolve())
    assert api.add_source("~/.claude/team/", str(ws))["created"] is False  # idempotent
    stored = json.loads(sources_path().read_text())
    assert [s["path"] for s in stored["sources"]] == [str(prompts.resolve())]
    listed = api.list_sources(str(ws))
    assert [(s["path"], s["status"]) for s in listed] == [(str(prompts.resolve()), "ok")]
    api.remove_source(str(prompts))
    assert api.list_sources(str(ws)) == []
    with pytest.raises(NotFoundError):
        api.remove_source(str(prompts))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("relative/dir", "absolute"),
        ("~root/.claude", "~user"),
        ("{ws}/../ws", ".."),
        ("{home}", "not under an allowed root"),
        ("{home}/.ssh", "secrets"),
        ("/etc", "not under an allowed root"),
        ("{home}/.claude/missing", "no such file"),
        ("", "empty"),
    ],
)
def test_bad_paths_are_refused(ws: Path, home: Path, raw: str, reason: str) -> None:
    write(home / ".ssh" / "id_rsa", "KEY\n")
    (home / ".claude").mkdir(exist_ok=True)
    with pytest.raises((UsageError, NotFoundError)) as info:  # missing: not found (3, 404)
        api.add_source(raw.format(ws=ws, home=home), str(ws))
    assert reason in info.value.message
    assert not sources_path().exists()


def test_home_as_workspace_does_not_allow_ssh(home: Path) -> None:
    write(home / ".ssh" / "config", "Host x\n")
    write(home / "notes" / "AGENTS.md", "# notes\n")
    with pytest.raises(UsageError):
        api.add_source(str(home / "notes"), str(home))


def test_configured_context_roots_are_allowed(ws: Path, tmp_path: Path) -> None:
    team = write(tmp_path / "team-prompts" / "AGENTS.md", "# Team prompts\n").parent
    Path(os.environ["AGENTDEX_CONFIG"]).write_text(f'[context]\nroots = ["{team}"]\n')
    api.add_source(str(team), str(ws))
    out = snap(ws)
    item = res(out, team.resolve() / "AGENTS.md")
    assert item["scope"] == "source" and item["source_path"] == str(team.resolve())


def test_file_source_with_any_name_is_an_instruction_file(ws: Path, home: Path) -> None:
    style = write(home / ".agents" / "style-guide.md", "# Style\n")
    api.add_source(str(style), str(ws))
    item = res(snap(ws), style.resolve())
    assert item["kind"] == "instruction_file" and item["status"] == "ok"


def test_source_symlink_swapped_later_is_not_followed(ws: Path, home: Path) -> None:
    real = write(home / ".claude" / "real" / "AGENTS.md", "# Real\n").parent
    link = home / ".claude" / "link"
    link.symlink_to(real)
    api.add_source(str(link), str(ws))  # stored canonically: the resolved directory
    write(home / ".ssh" / "AGENTS.md", "# PRIVATE\n")
    real_stored = api.list_sources(str(ws))[0]["path"]
    os.rename(real, home / ".claude" / "moved")
    Path(real_stored).symlink_to(home / ".ssh")  # swap the stored path to a link out
    out = snap(ws)
    roots = {r["path"]: r["status"] for r in out["roots"] if r["scope"] == "source"}
    assert roots == {real_stored: "not_allowed"}
    assert not any(".ssh" in s for s in sources_of(out))


def test_removed_source_directory_is_ignored(ws: Path, home: Path) -> None:
    src = write(home / ".codex" / "extra" / "AGENTS.md", "# x\n").parent
    api.add_source(str(src), str(ws))
    (src / "AGENTS.md").unlink()
    src.rmdir()
    out = snap(ws)
    assert out["error"] is None
    assert api.list_sources(str(ws))[0]["status"] == "missing"


def test_corrupt_sources_file_is_a_clear_error(ws: Path) -> None:
    from agentdex.errors import CorruptError

    sources_path().parent.mkdir(parents=True, exist_ok=True)
    sources_path().write_text("{not json")
    with pytest.raises(CorruptError):
        api.list_sources(str(ws))


def test_agent_env_overrides_move_user_folders(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude_dir = write(tmp_path / "claude-cfg" / "CLAUDE.md", "# from override\n").parent
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_dir))
    out = snap(ws)
    assert res(out, claude_dir.resolve() / "CLAUDE.md")["scope"] == "user"
    extra = write(claude_dir / "team" / "style.md", "# style\n")
    assert api.add_source(str(extra), str(ws))["created"]

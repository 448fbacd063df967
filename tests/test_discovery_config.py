"""discover_configured: the config file's agents/stores/paths/projects reach discovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdex.catalogue import Coverage, StoreRow
from agentdex.config import load_config
from agentdex.discovery import configured_rows, discover, discover_configured
from agentdex.errors import ConfigError


def _config(text: str) -> Path:
    path = Path(os.environ["AGENTDEX_CONFIG"])
    path.write_text(text)
    return path


def _pi_session(base: Path, text: str) -> None:
    folder = base / "sessions" / "--work--"
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(
        json.dumps({"type": "session", "id": "s", "cwd": "/work"})
        + "\n"
        + json.dumps({"type": "message", "message": {"role": "user", "content": text}})
        + "\n"
    )


def _grok_prompt(home: Path) -> None:
    folder = home / ".grok" / "sessions" / "%2Fwork"
    folder.mkdir(parents=True)
    (folder / "prompt_history.jsonl").write_text('{"prompt": "hi", "session_id": "g"}\n')


def test_no_config_file_is_plain_discovery(home: Path) -> None:
    _pi_session(home / ".pi" / "agent", "hello")
    assert [s.store for s in discover_configured(home).sources] == ["pi.sessions"]


def test_disabled_agents_and_stores(home: Path) -> None:
    _pi_session(home / ".pi" / "agent", "hello")
    _grok_prompt(home)
    _config('[agents]\ndisabled = ["pi"]\n')
    assert [s.store for s in discover_configured(home).sources] == ["grok.prompt_history"]
    _config('[stores]\ndisabled = ["grok.prompt_history"]\n')
    assert [s.store for s in discover_configured(home).sources] == ["pi.sessions"]


def test_extra_store_paths_by_root_name(home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "opt" / "pi-agent"
    _pi_session(extra, "from an extra root")
    _config(f'[stores.paths]\npi_agent = ["{extra}", "{tmp_path / "absent"}"]\n')
    found = discover_configured(home)
    assert [s.path.parent.parent.parent for s in found.sources] == [extra]
    assert any("absent" in w for w in found.warnings)


def test_project_roots_reach_aider(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "src" / "notes"
    project.mkdir(parents=True)
    (project / ".aider.input.history").write_text("# 2026-11-01 10:00:00\n+hello\n")
    _config(f'[projects]\nroots = ["{tmp_path / "src"}"]\n')
    assert [s.path for s in discover_configured(home).sources] == [project / ".aider.input.history"]


def test_opt_in_rows_only_when_enabled(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    import agentdex.discovery as discovery

    row = StoreRow(
        agent="pi",
        store="pi.optional",
        holds="x",
        format="jsonl",
        root="pi_agent",
        patterns=("extra/*.jsonl",),
        parser=None,
        coverage=Coverage.OPT_IN,
    )
    monkeypatch.setattr(discovery, "CATALOGUE", (*discovery.CATALOGUE, row))
    assert row not in configured_rows(load_config())
    _config('[stores]\nenabled = ["pi.optional"]\n')
    assert row in configured_rows(load_config())


def test_discover_itself_stays_pure(home: Path) -> None:
    _pi_session(home / ".pi" / "agent", "hello")
    _config('[agents]\ndisabled = ["pi"]\n')
    assert [s.store for s in discover(home).sources] == ["pi.sessions"]


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('[agents]\n\ndisabled = "pi"\n', 3, "agents.disabled"),
        ('[stores]\nenabled = ["a"]\ndisabled = [1]\n', 3, "stores.disabled"),
        ("[projects]\nroots = 5\n", 2, "projects.roots"),
    ],
)
def test_invalid_config_names_file_line_and_key(home: Path, text: str, line: int, key: str) -> None:
    path = _config(text)
    with pytest.raises(ConfigError) as info:
        discover_configured(home)
    message = str(info.value)
    assert f"{path}:{line}" in message and f"'{key}'" in message


@pytest.mark.parametrize(
    ("text", "key", "bad"),
    [
        ('[agents]\ndisabled = ["cursorr"]\n', "agents.disabled", "cursorr"),
        ('[stores]\nenabled = ["pi.nothing"]\n', "stores.enabled", "pi.nothing"),
        ('[stores.paths]\nnowhere = ["/tmp"]\n', "stores.paths", "nowhere"),
    ],
)
def test_unknown_ids_are_config_errors(home: Path, text: str, key: str, bad: str) -> None:
    path = _config(text)
    with pytest.raises(ConfigError) as info:
        discover_configured(home)
    assert str(path) in str(info.value) and key in str(info.value) and bad in str(info.value)

"""Every agent: a search hit's reference opens exactly that message in ``show``.

One home holds the sample home (every agent) plus the real-shaped fixtures
whose messages give several records each (Cline blocks, VS Code streamed
replies, Cursor bubbles, Aider edit blocks, Codex IDE wrappers). It is
indexed once per module; each test points the environment at it.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdex.api import history
from agentdex.api import search as api
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.records import AGENTS as ALL_AGENTS
from agentdex.records import Record
from conftest import AGENT_ENV_VARS
from test_parsers_cursor import _branchy_store
from test_sample_home_agents import render

FIXTURES = Path(__file__).parent / "fixtures"
#: Every agent with conversations (Windsurf's store is encrypted: listed, never parsed).
AGENTS = [agent for agent in ALL_AGENTS if agent != "windsurf"]
#: Records checked per agent (spread over its records), so the test stays quick.
PER_AGENT = 25
IDE_ROLLOUT = "rollout-2026-11-21T10-00-00-019aa000-1111-7000-8000-000000000042.jsonl"


def _environment(home: Path, data: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "AGENTDEX_DATA_DIR": str(data),
        "AGENTDEX_CONFIG": str(data / "no-config.toml"),
        "AGENTDEX_PROJECT_ROOTS": str(home / "src"),
        "AGENTDEX_WSL": "0",
        "AGENTDEX_WSL_USERS_ROOT": str(data / "no-windows-mount"),
    }


def _ide_rollout(path: Path) -> None:
    """A Codex rollout from the IDE extension: wrapped requests with bare event twins."""
    ide = (
        "# Context from my IDE setup:\n\n## Active file: app.py\n\n## My request for Codex:\n"
        "rename the handler to on_checkout"
    )
    lines = [
        ("session_meta", {"id": "019aa000-1111-7000-8000-000000000042", "cwd": "/w/shop"}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": ide}]}),
        ("event_msg", {"type": "user_message", "message": "rename the handler to on_checkout"}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Renamed in app.py."}]}),
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"timestamp": f"2026-11-21T10:00:0{i}Z", "type": t, "payload": p}) + "\n"
            for i, (t, p) in enumerate(lines)
        )
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("roundtrip")
    home, data = base / "home", base / "data"
    home.mkdir()
    env = _environment(home, data)
    with pytest.MonkeyPatch.context() as patch:
        for var in AGENT_ENV_VARS:
            patch.delenv(var, raising=False)
        for key, value in env.items():
            patch.setenv(key, value)
        patch.chdir(base)
        render(home)
        shutil.copytree(FIXTURES / "cline", home / ".cline" / "data", dirs_exist_ok=True)
        vscode = home / ".config" / "Code" / "User" / "workspaceStorage"
        shutil.copytree(FIXTURES / "vscode" / "workspaceStorage", vscode, dirs_exist_ok=True)
        shutil.copytree(FIXTURES / "real" / "aider" / "afi-core", home / "src" / "afi-core")
        _branchy_store(home / ".cursor-server" / "data" / "User")  # beside the sample one
        _ide_rollout(home / ".codex" / "sessions" / "2026" / "11" / "21" / IDE_ROLLOUT)
        api.refresh(home=str(home))
    yield env


@pytest.fixture
def environment(indexed: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    for key, value in indexed.items():
        monkeypatch.setenv(key, value)
    return indexed["HOME"]


def _records(home: str, agent: str) -> list[Record]:
    found = [r for s in discover(home, agents=[agent]).sources for r in run(s)]
    step = max(1, len(found) // PER_AGENT)
    return found[::step]


def _word(text: str) -> str | None:
    words = sorted(set(re.findall(r"[A-Za-z][A-Za-z0-9_]{5,}", text)), key=len, reverse=True)
    return words[0] if words else None


@pytest.mark.parametrize("agent", AGENTS)
def test_search_hit_reference_opens_that_message(environment: str, agent: str) -> None:
    records = _records(environment, agent)
    assert records, agent
    keys = [(r.session_id, r.locator) for r in records]
    assert len(set(keys)) == len(keys), f"{agent}: two records share a reference"
    searched = 0
    for record in records:
        ref = f"{record.session_id}@{record.locator}"
        indexed = api.resolve_ref(ref)
        assert indexed["position"] is not None, ref
        assert indexed["records"][indexed["position"]]["text"] == record.text, ref
        shown = history.show(ref, environment, agent=agent)
        assert shown["focus"] is not None, ref
        assert shown["records"][shown["focus"]]["text"].strip() == record.text.strip(), ref
        word = _word(record.text)
        if word is None or searched >= 5:
            continue
        hits = api.search(word, refresh_first=False, limit=None, dedup=False).results
        hit = next((h for h in hits if h["ref"] == ref), None)
        assert hit is not None, (ref, word)
        opened = history.show(hit["ref"], environment)
        focus = opened["focus"]
        assert focus is not None and opened["records"][focus]["text"] == hit["text"], ref
        searched += 1
    assert searched, f"{agent}: no record had a word to search for"

"""The sample home's sessions for the agents beyond the first four: discovered and parsed.

Renders ``examples/home-template`` (``__HOME__`` replaced) and executes
``examples/home-template-sql/**/*.sql`` into real databases, as the lead's
render script does, then checks each agent end to end.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from agentdex.discovery import discover
from agentdex.parsers import run
from conftest import REPO_DIR

TEMPLATE = REPO_DIR / "examples" / "home-template"
TEMPLATE_SQL = REPO_DIR / "examples" / "home-template-sql"
AGENTS = [
    "cursor",
    "cursor-cli",
    "opencode",
    "cline",
    "aider",
    "pi",
    "grok",
    "antigravity-cli",
    "copilot-cli",
    "roo-code",
    "kilo-code",
    "qwen-code",
    "goose",
    "kimi-cli",
    "openhands",
    "zed",
    "amp",
    "crush",
    "continue",
    "kiro-ide",
    "kiro-cli",
    "factory-droid",
    "warp",
]


def hashed_names(rel: str, home: str) -> str:
    """``__MD5_HOME__src+shop`` -> md5("<home>/src/shop"), as ``examples/sample_home.py`` does."""
    return re.sub(
        r"__MD5_HOME__([A-Za-z0-9_+-]*)",
        lambda m: hashlib.md5(
            "/".join([home, *filter(None, m.group(1).split("+"))]).encode(),
            usedforsecurity=False,
        ).hexdigest(),
        rel,
    )


def render(home: Path) -> None:
    for source in TEMPLATE.rglob("*"):
        if not source.is_file():
            continue
        target = home / hashed_names(str(source.relative_to(TEMPLATE)), str(home))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        try:
            text = target.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        target.write_text(text.replace("__HOME__", str(home)), encoding="utf-8")
    for seed in TEMPLATE_SQL.rglob("*.sql"):
        db = home / seed.relative_to(TEMPLATE_SQL).with_suffix("")
        db.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(seed.read_text(encoding="utf-8").replace("__HOME__", str(home)))
        conn.close()


@pytest.fixture
def sample_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    render(home)
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(home / "src"))
    return home


@pytest.mark.parametrize("agent", AGENTS)
def test_each_agent_has_a_parsed_session(sample_home: Path, agent: str) -> None:
    found = discover(sample_home, agents=[agent])
    assert found.sources, agent
    records = [r for s in found.sources for r in run(s)]
    kinds = {r.kind for r in records}
    assert "prompt" in kinds and ("message" in kinds or agent in ("cursor-cli", "warp")), agent
    for record in records:
        assert record.timestamp is not None
        if record.cwd is not None:
            assert record.cwd.startswith(str(sample_home / "src")), record
    if agent not in ("cursor-cli",):
        assert any(r.cwd for r in records), agent


def test_windsurf_is_listed_only(sample_home: Path) -> None:
    found = discover(sample_home, agents=["windsurf"])
    assert len(found.sources) == 1
    assert list(run(found.sources[0])) == []


def test_claude_store_and_codex_titles(sample_home: Path) -> None:
    found = discover(sample_home, agents=["claude-code", "codex"])
    by_store = {s.store: s for s in found.sources}
    assert {"claude-code.store_db", "codex.session_index"} <= set(by_store)
    records = list(run(by_store["claude-code.store_db"]))
    assert [r.kind for r in records] == ["prompt", "message", "summary"]
    assert records[0].cwd == str(sample_home / "src" / "shop")


def test_cursor_maps_the_composer_to_shop(sample_home: Path) -> None:
    found = discover(sample_home, agents=["cursor"])
    records = [r for s in found.sources if s.store == "cursor.global_state" for r in run(s)]
    assert {r.cwd for r in records} == {str(sample_home / "src" / "shop")}
    assert all("sample-not-a-real-token" not in r.text for r in records)


def test_kiro_cli_reads_both_stores_and_never_the_credentials(sample_home: Path) -> None:
    found = discover(sample_home, agents=["kiro-cli"])
    assert sorted(s.store for s in found.sources) == ["kiro-cli.db", "kiro-cli.sessions"]
    records = [r for s in found.sources for r in run(s)]
    assert {r.cwd for r in records} == {
        str(sample_home / "src" / "shop"),
        str(sample_home / "src" / "notes-api"),
    }
    assert all("sample-not-a-real-token" not in r.text for r in records)


def test_cline_reads_the_task_folders_and_the_sdk_sessions(sample_home: Path) -> None:
    found = discover(sample_home, agents=["cline"])
    stores = {s.row.store for s in found.sources}
    assert stores == {"cline.tasks", "cline.sessions"}
    session = [s for s in found.sources if s.row.store == "cline.sessions"]
    records = [r for s in session for r in run(s)]
    prompts = [r.text for r in records if r.kind == "prompt"]
    assert prompts == ["rate-limit POST /notes to 30 requests a minute per API key"]
    assert {r.cwd for r in records} == {str(sample_home / "src" / "notes-api")}

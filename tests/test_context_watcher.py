"""Live updates from real file events (watchfiles), with Eventually-style waits."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdex.api import context as api
from context_helpers import eventually, write


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def live(ws: Path) -> Iterator[api.ContextWatch]:
    write(ws / "AGENTS.md", "# start\n")
    with api.watch(str(ws), debounce=0.05) as view:
        yield view


def _sources(view: api.ContextWatch) -> set[str]:
    return {r["source"] for r in view.snapshot()["resources"]}


def _hash(view: api.ContextWatch, path: Path) -> str | None:
    for item in view.snapshot()["resources"]:
        if item["source"] == str(path):
            return item["content_hash"]  # type: ignore[no-any-return]
    return None


def test_create_edit_rename_delete(live: api.ContextWatch, ws: Path) -> None:
    write(ws / "CLAUDE.md", "# new\n")
    eventually(lambda: str(ws / "CLAUDE.md") in _sources(live))
    before = _hash(live, ws / "CLAUDE.md")
    (ws / "CLAUDE.md").write_text("# edited\n")
    eventually(lambda: _hash(live, ws / "CLAUDE.md") not in (before, None))
    os.rename(ws / "CLAUDE.md", ws / "GEMINI.md")
    eventually(lambda: _sources(live) == {str(ws / "AGENTS.md"), str(ws / "GEMINI.md")})
    (ws / "GEMINI.md").unlink()
    eventually(lambda: _sources(live) == {str(ws / "AGENTS.md")})


def test_new_directories_are_armed(live: api.ContextWatch, ws: Path) -> None:
    (ws / "pkg" / "deeper").mkdir(parents=True)
    write(ws / "pkg" / "deeper" / "AGENTS.md", "# deep\n")
    eventually(lambda: str(ws / "pkg" / "deeper" / "AGENTS.md") in _sources(live))
    # The new directory is now watched itself: an edit there is seen too.
    before = _hash(live, ws / "pkg" / "deeper" / "AGENTS.md")
    (ws / "pkg" / "deeper" / "AGENTS.md").write_text("# deep, edited\n")
    eventually(lambda: _hash(live, ws / "pkg" / "deeper" / "AGENTS.md") != before)


def test_new_skill_folder_is_picked_up(live: api.ContextWatch, ws: Path) -> None:
    write(
        ws / ".claude" / "skills" / "ship-it" / "SKILL.md",
        "---\nname: ship-it\ndescription: Ship\n---\n",
    )
    path = ws / ".claude" / "skills" / "ship-it" / "SKILL.md"
    eventually(lambda: str(path) in _sources(live))


def test_symlink_target_edit_is_seen(ws: Path) -> None:
    target = write(ws / "docs" / "shared.md", "# v1\n")
    (ws / "AGENTS.md").symlink_to("docs/shared.md")
    with api.watch(str(ws), debounce=0.05) as view:
        before = _hash(view, ws / "AGENTS.md")
        target.write_text("# v2\n")
        eventually(lambda: _hash(view, ws / "AGENTS.md") != before)


def test_versions_increase_and_wait_returns_the_next(live: api.ContextWatch, ws: Path) -> None:
    version = live.version
    write(ws / "sub" / "AGENTS.md", "# sub\n")
    nxt = eventually(lambda: live.wait(version, timeout=0.2))
    assert nxt["version"] > version


def test_irrelevant_files_do_not_publish(live: api.ContextWatch, ws: Path) -> None:
    version = live.version
    write(ws / "notes.txt", "hello\n")
    write(ws / "node_modules" / "x" / "AGENTS.md", "# ignored\n")
    write(ws / "CLAUDE.md", "# marker\n")  # a relevant change after the noise
    eventually(lambda: str(ws / "CLAUDE.md") in _sources(live))
    assert str(ws / "node_modules" / "x" / "AGENTS.md") not in _sources(live)
    assert live.version == version + 1


def test_user_folder_created_later_is_picked_up(live: api.ContextWatch, home: Path) -> None:
    write(home / ".codex" / "AGENTS.md", "# codex, later\n")
    eventually(lambda: str(home / ".codex" / "AGENTS.md") in _sources(live))

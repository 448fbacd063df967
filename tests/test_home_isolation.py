"""`--home` reaches every reader: nothing a command shows comes from another home's index.

Two real homes, each with its own Claude Code transcript and its own index
under one data dir. Every library call given ``home`` must read that home's
index, never the default one (``$HOME``'s), even where it only looks up a
title or the workspaces whose context it records.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdex.api import export, facets, transcript
from agentdex.api import search as api
from test_cli_conventions import claude_session

OTHER_SID = "bbbb2222-0000-4000-8000-000000000002"


@pytest.fixture
def two_homes(home: Path, tmp_path: Path) -> Path:
    """The default home holds one conversation; ``other`` holds another, titled, in a
    workspace with an AGENTS.md. Both indexed. Returns ``other``."""
    claude_session(home, "aaaa1111-0000-4000-8000-000000000001", "/nowhere/a", ["alpha one"])
    other = tmp_path / "other-home"
    workspace = tmp_path / "work" / "b"
    workspace.mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("# Workspace b\n")
    path = claude_session(other, OTHER_SID, str(workspace), ["beta one", "beta two", "beta 3"])
    with open(path, "a") as handle:
        title = {"type": "custom-title", "customTitle": "Quokka plan", "sessionId": OTHER_SID}
        handle.write(json.dumps(title) + "\n")
    api.refresh(home=str(home))
    api.refresh(home=str(other))
    return other


def test_library_readers_use_the_home_they_are_given(two_homes: Path) -> None:
    other = str(two_homes)
    assert transcript.conversation(OTHER_SID, home=other)["title"] == "Quokka plan"
    assert export.conversation(OTHER_SID, home=other)["title"] == "Quokka plan"
    counted = facets.facets("beta", home=other)
    assert counted["total"] == 3
    assert facets.facets("alpha", home=other)["total"] == 0


def test_index_records_the_workspaces_of_its_own_home(
    two_homes: Path, run_cli: Callable[..., object]
) -> None:
    out = run_cli("--home", str(two_homes), "index", "--json")
    stats = json.loads(out.stdout)["context_history"]  # type: ignore[attr-defined]
    assert stats["workspaces"] == 1 and stats["skipped"] == 0
    assert stats["recorded"] + stats["unchanged"] == 1

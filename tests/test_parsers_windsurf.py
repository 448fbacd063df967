"""Windsurf: listed when present (its .pb files are encrypted), never opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdex.catalogue import Coverage, store
from agentdex.discovery import discover
from agentdex.parsers import run


def test_listed_not_parsed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cascade = home / ".codeium" / "windsurf" / "cascade"
    cascade.mkdir(parents=True)
    (cascade / "8f0c.pb").write_bytes(bytes(range(256)))
    row = store("windsurf.cascade")
    assert row.coverage is Coverage.LISTED and row.parser is None
    found = discover(home, agents=["windsurf"])
    assert [s.path.name for s in found.sources] == ["8f0c.pb"]

    def _no_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("windsurf files must not be opened")

    monkeypatch.setattr("builtins.open", _no_open)
    assert list(run(found.sources[0])) == []

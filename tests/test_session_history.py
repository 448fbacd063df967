"""Linking a session to the agent transcripts recorded in its work directory."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import sessions as api
from agentdex.records import iso_utc

CliRun = Callable[..., subprocess.CompletedProcess[str]]


def test_each_workdir_period_is_asked_separately(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contract with the search index: (workdir, since, until, home) per period."""
    calls: list[tuple[str, float | None, float | None, str | None]] = []

    def conversations_for_workdir(
        workdir: str, since: float | None, until: float | None, home: str | None = None
    ) -> list[dict[str, Any]]:
        calls.append((workdir, since, until, home))
        row = {
            "agent": "claude-code",
            "session_id": f"c-{Path(workdir).name}",
            "first_activity": iso_utc(since or 0),
            "cwd": workdir,
        }
        return [row, dict(row)]  # duplicates are collapsed

    fake = types.ModuleType("agentdex.api.search")
    fake.conversations_for_workdir = conversations_for_workdir  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agentdex.api.search", fake)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    session = api.new_session(workdir=str(tmp_path / "a"))
    api.set_workdir(session["id"], None)
    api.set_workdir(session["id"], str(tmp_path / "b"))
    shown = api.show_session(session["id"], home="/fake/home")
    assert shown["history_available"] is True
    assert [r["session_id"] for r in shown["history"]] == ["c-a", "c-b"]
    assert [c[0] for c in calls] == [str(tmp_path / "a"), str(tmp_path / "b")]
    (a_since, a_until), (b_since, b_until) = [(c[1], c[2]) for c in calls]
    assert a_since is not None and a_until is not None and a_since <= a_until
    assert b_since is not None and b_since >= a_until and b_until is None
    assert {c[3] for c in calls} == {"/fake/home"}


def _claude_transcript(home: Path, cwd: Path, session_id: str, when: float, text: str) -> None:
    slug = str(cwd).replace("/", "-")
    folder = home / ".claude" / "projects" / slug
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        {
            "type": "user",
            "uuid": f"{session_id}-u",
            "parentUuid": None,
            "sessionId": session_id,
            "cwd": str(cwd),
            "timestamp": iso_utc(when),
            "isSidechain": False,
            "message": {"role": "user", "content": text},
        },
        {
            "type": "assistant",
            "uuid": f"{session_id}-a",
            "parentUuid": f"{session_id}-u",
            "sessionId": session_id,
            "cwd": str(cwd),
            "timestamp": iso_utc(when + 5),
            "isSidechain": False,
            "message": {
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "done: " + text}],
            },
        },
    ]
    (folder / f"{session_id}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_show_lists_transcripts_from_the_real_index(
    tmp_path: Path, home: Path, run_cli: CliRun
) -> None:
    """Real transcripts, a real index, the real CLI."""
    workdir = tmp_path / "proj"
    other = tmp_path / "other"
    workdir.mkdir()
    other.mkdir()
    before = time.time() - 3600
    _claude_transcript(home, workdir, "11111111-0000-4000-8000-000000000001", before, "too early")
    session = api.new_session(workdir=str(workdir))
    now = time.time()
    _claude_transcript(home, workdir, "11111111-0000-4000-8000-000000000002", now, "in session")
    _claude_transcript(home, other, "11111111-0000-4000-8000-000000000003", now, "elsewhere")
    indexed = run_cli("--home", str(home), "index")
    assert indexed.returncode == 0, indexed.stderr
    shown = run_cli("--home", str(home), "session", "show", session["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["history_available"] is True
    assert [r["session_id"] for r in data["history"]] == ["11111111-0000-4000-8000-000000000002"]
    assert data["history"][0]["cwd"] == str(workdir)

"""Pi sessions: every entry type in the peer fixtures, resume, titles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers.base import ParseCursor

PID = "pi.session_jsonl.v1"


def _pi_files(corpus: Path) -> list[Path]:
    return [
        *sorted((corpus / "agrep-fixtures/pi").rglob("*.jsonl")),
        corpus / "agentgrep-samples/pi/pi.sessions/example.jsonl",
    ]


def test_every_fixture_counts_agree(corpus: Path) -> None:
    for path in _pi_files(corpus):
        records, cursor, diags = parse(PID, path)
        assert records, path
        assert cursor.units == count_raw(PID, path), path
        assert diags.count == 0


def test_alpha_session(corpus: Path) -> None:
    path = next((corpus / "agrep-fixtures/pi").rglob("*01930000-0000-7000-8000-000000000001.jsonl"))
    records, cursor, _ = parse(PID, path)
    assert [(r.role, r.kind) for r in records] == [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("user", "prompt"),
        ("system", "summary"),
        ("user", "prompt"),
    ]
    assert {r.session_id for r in records} == {"01930000-0000-7000-8000-000000000001"}
    assert {r.cwd for r in records} == {"/work/alpha"}
    assert records[2].model == "pi/sonnet-5"
    assert cursor.titles == {"01930000-0000-7000-8000-000000000001": "alpha work"}


def test_developer_role_and_bash_execution(corpus: Path) -> None:
    beta = next((corpus / "agrep-fixtures/pi").rglob("*01940000-0000-7000-8000-000000000003.jsonl"))
    records, _, _ = parse(PID, beta)
    assert all("harness chatter" not in r.text for r in records)
    upstream = next((corpus / "agrep-fixtures/pi").rglob("*000000000005.jsonl"))
    records, cursor, _ = parse(PID, upstream)
    assert ("tool_result", "$ cargo test --quiet\nok. 12 passed") in [
        (r.kind, r.text) for r in records
    ]
    assert cursor.titles["01950000-0000-7000-8000-000000000005"] == "upstream run"


def test_resume_keeps_the_header_state(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "id": "sid", "cwd": "/work/r"}
    first = {"type": "message", "message": {"role": "user", "content": "one"}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(first) + "\n")
    cursor = ParseCursor()
    records, cursor, _ = parse(PID, path, cursor=cursor)
    assert [r.text for r in records] == ["one"]
    with path.open("a") as handle:
        handle.write(
            json.dumps({"type": "message", "message": {"role": "user", "content": "two"}}) + "\n"
        )
        handle.write("{half a line")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    records, resumed, diags = parse(PID, path, cursor=resumed)
    assert [(r.text, r.session_id, r.cwd, r.locator) for r in records] == [
        ("two", "sid", "/work/r", "line:3")
    ]
    assert diags.count == 1  # the incomplete last line, retried next time


def test_discovery_env_override_and_omp(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for base in (home / ".pi" / "agent", home / ".omp" / "agent", tmp_path / "pinned"):
        folder = base / "sessions" / "--work--"
        folder.mkdir(parents=True)
        (folder / "x.jsonl").write_text('{"type":"session","id":"x"}\n')
    assert len(discover(home, agents=["pi"]).sources) == 2
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pinned"))
    assert [s.root.path for s in discover(home, agents=["pi"]).sources] == [tmp_path / "pinned"]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "nope"))
    found = discover(home, agents=["pi"])
    assert len(found.sources) == 2 and found.warnings

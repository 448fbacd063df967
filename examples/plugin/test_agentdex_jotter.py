"""Tests of the Jotter plug-in: copy this file next to your plug-in and adapt it.

Build files of the agent's real shape in a temporary folder (never read your
real history in a test), parse them with your parser exactly as agentdex
would, and check what a person would check: the prompts, the replies, the
tool events, the session and project, and that what your parser does not
know is reported as format drift instead of dropped in silence.
"""

from __future__ import annotations

import json
from pathlib import Path

import agentdex_jotter  # your plug-in module

from agentdex.plugin import check_agent, parse_file

LINES = [
    {"type": "session", "id": "s1", "cwd": "/work/app", "version": "0.3.1"},
    {"type": "user", "text": "add a login page", "ts": "2026-11-02T09:00:00Z"},
    {"type": "assistant", "text": "Done.", "ts": "2026-11-02T09:00:05Z", "model": "jot-1"},
    {"type": "tool", "name": "shell", "input": {"cmd": "ls"}, "output": "app.py"},
    {"type": "thought", "text": "a type this parser does not know yet"},
]


def write_session(folder: Path) -> Path:
    path = folder / ".jotter" / "sessions" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return path


def test_the_door_takes_the_agent() -> None:
    assert check_agent(agentdex_jotter.AGENT) is agentdex_jotter.AGENT


def test_parse_gives_one_record_per_turn(tmp_path: Path) -> None:
    path = write_session(tmp_path)
    records, diagnostics, _ = parse_file(agentdex_jotter.AGENT, "jotter.sessions", path)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "add a login page"),
        ("assistant", "message", "Done."),
        ("assistant", "tool_call", "shell {'cmd': 'ls'}"),
        ("tool", "tool_result", "app.py"),
    ]
    assert {(r.session_id, r.cwd) for r in records} == {("s1", "/work/app")}
    assert records[0].timestamp == 1793610000.0
    assert records[1].model == "jot-1"
    assert diagnostics.count == 0


def test_independent_counts_agree_with_the_parser(tmp_path: Path) -> None:
    path = write_session(tmp_path)
    _, _, cursor = parse_file(agentdex_jotter.AGENT, "jotter.sessions", path)
    assert agentdex_jotter.count_raw(path) == cursor.units == 3
    assert agentdex_jotter.count_roles(path) == {"s1": {"prompts": 1, "replies": 1}}


def test_unknown_record_types_are_reported_as_drift(tmp_path: Path) -> None:
    path = write_session(tmp_path)
    _, diagnostics, _ = parse_file(agentdex_jotter.AGENT, "jotter.sessions", path)
    assert [(d.what, d.name, d.version, d.locator) for d in diagnostics.drift.values()] == [
        ("record type", "thought", "0.3.1", "line:5")
    ]


def test_broken_lines_are_skipped_not_raised(tmp_path: Path) -> None:
    path = write_session(tmp_path)
    with path.open("a") as handle:
        handle.write('{"type": "user", "text": \n')
    records, diagnostics, _ = parse_file(agentdex_jotter.AGENT, "jotter.sessions", path)
    assert len(records) == 4
    assert diagnostics.count == 1

"""Antigravity CLI: prompt history, brain transcripts, workspace lookup, protobuf DBs listed."""

from __future__ import annotations

import shutil
from pathlib import Path

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run

HISTORY = "antigravity-cli.history_jsonl.v1"
TRANSCRIPT = "antigravity-cli.transcript_jsonl.v1"
CONV = "33333333-3333-4333-8333-333333333333"


def _home(home: Path, corpus: Path) -> Path:
    root = home / ".gemini" / "antigravity-cli"
    shutil.copytree(corpus / "agrep-fixtures/antigravity/home/.gemini/antigravity-cli", root)
    (root / "history.jsonl").write_text(
        '{"display":"refactor the parser into modules","timestamp":1767348000000,'
        f'"workspace":"/work/gamma","conversationId":"{CONV}"}}\n'
    )
    (root / "conversations").mkdir()
    (root / "conversations" / f"{CONV}.db").write_bytes(b"\x00protobuf")
    return root


def test_transcript_and_history_in_a_home(home: Path, corpus: Path) -> None:
    root = _home(home, corpus)
    found = discover(home, agents=["antigravity-cli"])
    assert sorted(s.store for s in found.sources) == [
        "antigravity-cli.conversations",
        "antigravity-cli.history",
        "antigravity-cli.transcripts",
    ]
    listed = [s for s in found.sources if s.store == "antigravity-cli.conversations"]
    assert list(run(listed[0])) == []  # listed, never parsed
    transcript = [r for s in found.sources if s.store.endswith("transcripts") for r in run(s)]
    assert [(r.role, r.kind) for r in transcript] == [
        ("user", "prompt"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("user", "prompt"),
        ("assistant", "message"),
    ]
    assert transcript[0].text == "refactor the parser into modules"
    assert {r.cwd for r in transcript} == {"/work/gamma"}
    assert {r.session_id for r in transcript} == {CONV}
    path = next(root.rglob("transcript.jsonl"))
    _, cursor, _ = parse(TRANSCRIPT, path, root=root)
    assert cursor.units == count_raw(TRANSCRIPT, path) == 5


def test_full_transcript_wins_over_the_truncated_twin(home: Path, corpus: Path) -> None:
    root = _home(home, corpus)
    short = next(root.rglob("transcript.jsonl"))
    shutil.copy(short, short.with_name("transcript_full.jsonl"))
    found = discover(home, agents=["antigravity-cli"])
    texts = [r.text for s in found.sources if s.store.endswith("transcripts") for r in run(s)]
    assert texts.count("now add a token cache") == 1
    assert count_raw(TRANSCRIPT, short) == 0


def test_history_sample(corpus: Path) -> None:
    path = corpus / "agentgrep-samples/antigravity-cli/antigravity-cli.history/history.jsonl"
    records, cursor, _ = parse(HISTORY, path)
    assert [(r.text, r.cwd, r.timestamp) for r in records] == [
        ("sample antigravity prompt", "/workspace/example", 1780142400.0)
    ]
    assert cursor.units == count_raw(HISTORY, path) == 1

"""Cursor CLI: agent transcripts (slug -> cwd), prompt history."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from _agent_helpers import count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers.cursor_cli import decode_slug

TRANSCRIPT = "cursor-cli.transcript_jsonl.v1"
PROMPTS = "cursor-cli.prompt_history_json.v1"


def test_sample_transcript_in_a_home(home: Path, corpus: Path, tmp_path: Path) -> None:
    project = tmp_path / "src" / "my-app"
    project.mkdir(parents=True)
    slug = str(project).strip("/").replace("/", "-")
    session = home / ".cursor" / "projects" / slug / "agent-transcripts" / "abc-123"
    session.mkdir(parents=True)
    shutil.copy(
        corpus / "agentgrep-samples/cursor-cli/cursor-cli.transcripts/example.jsonl",
        session / "abc-123.jsonl",
    )
    (session / "subagents").mkdir()
    (session / "subagents" / "helper.jsonl").write_text(
        json.dumps({"role": "user", "message": {"content": [{"type": "text", "text": "sub task"}]}})
        + "\n"
    )
    config = home / ".config" / "cursor"
    config.mkdir(parents=True)
    shutil.copy(
        corpus / "agentgrep-samples/cursor-cli/cursor-cli.prompt_history/prompt_history.json",
        config,
    )
    found = discover(home, agents=["cursor-cli"])
    assert sorted(s.store for s in found.sources) == [
        "cursor-cli.prompt_history",
        "cursor-cli.transcripts",
        "cursor-cli.transcripts",
    ]
    records = [r for s in found.sources for r in run(s)]
    main = [r for r in records if r.source_path.endswith("abc-123.jsonl")]
    assert [(r.role, r.kind, r.text) for r in main] == [
        ("user", "prompt", "<redacted user prompt>"),
        ("assistant", "tool_call", 'example_tool {"arg":"<redacted>"}'),
        ("assistant", "message", "<redacted assistant reply>"),
    ]
    assert {r.session_id for r in main} == {"abc-123"}
    assert {r.cwd for r in main} == {str(project)}  # dashes inside a name resolved on disk
    assert all(r.timestamp == os.stat(session / "abc-123.jsonl").st_mtime for r in main)
    assert "sub task" in [r.text for r in records]
    assert [r.text for r in records if r.store == "cursor-cli.prompt_history"] == [
        "continue",
        "run the tests",
        "fix the libtmux flake in the parser",
    ]


def test_counts_and_bad_input(corpus: Path, tmp_path: Path) -> None:
    path = corpus / "agentgrep-samples/cursor-cli/cursor-cli.transcripts/example.jsonl"
    _, cursor, _ = parse(TRANSCRIPT, path)
    assert cursor.units == count_raw(TRANSCRIPT, path) == 3
    history = corpus / "agentgrep-samples/cursor-cli/cursor-cli.prompt_history/prompt_history.json"
    _, cursor, _ = parse(PROMPTS, history)
    assert cursor.units == count_raw(PROMPTS, history) == 3
    bad = tmp_path / "prompt_history.json"
    bad.write_text('{"not": "a list"}')
    records, _, diags = parse(PROMPTS, bad)
    assert records == [] and diags.count == 1


def test_unresolvable_slug_keeps_no_cwd() -> None:
    assert decode_slug("no-such-root-anywhere-xyz") is None

"""Claude Code parsers: corpus counts, role/kind rules, titles, subagents, bad input, resume."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdex.parsers import get_parser
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.claude_code import (
    count_history,
    count_transcript,
    parse_history,
    parse_transcript,
)
from agentdex.readers import Diagnostics
from agentdex.records import Record

SID = "5f0c2a10-0000-4000-8000-000000000001"


def _ref(path: Path, store: str = "claude-code.projects") -> SourceRef:
    return SourceRef(path=path, agent="claude-code", store=store, host=None, mtime=0, root=path)


def _write(path: Path, lines: list[Any], *, end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + end, encoding="utf-8")
    return path


def _parse(
    path: Path, cursor: ParseCursor | None = None, fn: Any = parse_transcript
) -> tuple[list[Record], ParseCursor, Diagnostics]:
    cursor = cursor or ParseCursor()
    diag = Diagnostics()
    return list(fn(_ref(path), cursor, diag)), cursor, diag


def _user(text: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": SID,
        "timestamp": "2026-11-20T10:00:00Z",
        "message": {"role": "user", "content": text},
        **extra,
    }


def _assistant(blocks: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    message = {"role": "assistant", "model": "claude-test", "content": blocks}
    return {"type": "assistant", "sessionId": SID, "message": message, **extra}


def _kinds(records: list[Record]) -> list[tuple[str, str, str]]:
    return [(r.role, r.kind, r.text) for r in records]


# ----------------------------------------------------------------------------- corpus

#: Expected per-file counts, copied from corpus/MANIFEST.md. Columns:
#: user lines with text, user lines with only tool_result, assistant lines,
#: sidechain user lines, sidechain assistant lines, isMeta text lines.
MANIFEST_TRANSCRIPTS: dict[str, tuple[int, int, int, int, int, int]] = {
    # §1 row "-Users-raimondospatola-...": user text 24, tool_result-only 182, assistant 453,
    # "2 of the text lines are isMeta"
    "claude-code/projects/-Users-raimondospatola-Documents-AI-Projects/"
    "120ec635-4140-4bf9-8fdc-24047e46c394.jsonl": (24, 182, 453, 0, 0, 2),
    # §1 row "-home-pook": 13 / 134 / 187, "3 of the text lines are isMeta"
    "claude-code/projects/-home-pook/da0d9633-7f7b-4ebc-80f9-81a9c987a7df.jsonl": (
        13, 134, 187, 0, 0, 3,
    ),
    # §1 row "-Users-dylan-...-dmux": 12 / 50 / 82, 3 isMeta
    "claude-code/projects/-Users-dylan-projects-others-dmux/"
    "a9185eb7-ed7a-4849-946b-f84a307d6436.jsonl": (12, 50, 82, 0, 0, 3),
    # §1 row "templar/c056cf62": 6 / 232 / 378, "sidechain user=74 assistant=120"
    "claude-code/projects/-home-connerohnesorge-Documents-001Repos-templar/"
    "c056cf62-eb8e-4604-b24d-fd2895f5ce1e.jsonl": (6, 232, 378, 74, 120, 0),
    # §1 row "templar/ee2ab929": 6 / 171 / 305, "sidechain user=4 assistant=7"
    "claude-code/projects/-home-connerohnesorge-Documents-001Repos-templar/"
    "ee2ab929-2762-4451-984a-6a035b5e8ec1.jsonl": (6, 171, 305, 4, 7, 0),
    # §4 rows (claude-code-log test_data)
    "claude-code-log/test_data/representative_messages.jsonl": (4, 2, 5, 0, 0, 0),
    "claude-code-log/test_data/edge_cases.jsonl": (7, 1, 4, 0, 0, 0),
    "claude-code-log/test_data/todowrite_examples.jsonl": (2, 3, 6, 0, 0, 0),
    "claude-code-log/test_data/session_b.jsonl": (2, 0, 1, 0, 0, 0),
    # §5 rows (agentgrep samples): session user text 1 / assistant 1; subagent sidechain 1/1
    "agentgrep-samples/claude/claude.projects.session/example.jsonl": (1, 0, 1, 0, 0, 0),
    "agentgrep-samples/claude/claude.projects.subagent/example.jsonl": (1, 0, 1, 1, 1, 0),
    # §6 rows (agrep fixtures): sess-claude-0001 text 5, tool_result-only 2, assistant 4,
    # 1 isMeta, sidechain user 2 assistant 2; the subagents/agent-atestchild01 file 1/1/2, 2/2
    "agrep-fixtures/claude/home/.claude/projects/proj-alpha/sess-claude-0001.jsonl": (
        5, 2, 4, 2, 2, 1,
    ),
    "agrep-fixtures/claude/home/.claude/projects/proj-alpha/sess-claude-0001/subagents/"
    "agent-atestchild01.jsonl": (1, 1, 2, 2, 2, 0),
}  # fmt: skip


def _raw_lines(path: Path) -> dict[int, dict[str, Any]]:
    """Each line's own JSON by byte offset (the test's independent view of the file)."""
    out: dict[int, dict[str, Any]] = {}
    offset = 0
    with open(path, "rb") as handle:
        for raw in handle:
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if isinstance(value, dict):
                out[offset] = value
            offset += len(raw)
    return out


def _only_redacted_thinking(line: dict[str, Any]) -> bool:
    content = line.get("message", {}).get("content") if line.get("type") == "assistant" else []
    return bool(content) and all(
        block.get("type") == "thinking" and not block.get("thinking") for block in content or []
    )


@pytest.mark.parametrize("relpath", sorted(MANIFEST_TRANSCRIPTS))
def test_corpus_transcripts_match_manifest(corpus: Path, relpath: str) -> None:
    path = corpus / relpath
    records, cursor, _ = _parse(path)
    raw = _raw_lines(path)
    by_line: dict[int, list[Record]] = defaultdict(list)
    for record in records:
        by_line[record.offset].append(record)
    user_text = tool_only = assistant = side_user = side_assistant = meta = 0
    for offset, recs in by_line.items():
        line = raw[offset]
        roles = {r.role for r in recs}
        if line["type"] == "assistant":
            assistant += 1
            side_assistant += bool(line.get("isSidechain"))
            assert roles == {"assistant"}
        elif line["type"] == "user":
            side_user += bool(line.get("isSidechain"))
            if roles == {"tool"}:
                tool_only += 1
            else:
                user_text += 1
                text_record = next(r for r in recs if r.role != "tool")
                if line.get("isMeta"):
                    meta += 1
                    assert (text_record.role, text_record.kind) == ("system", "message")
        else:
            assert line["type"] == "summary" and [r.kind for r in recs] == ["summary"]
    # v2.1 writes redacted thinking (empty ``thinking`` + ``signature``) on a line of its
    # own: nothing to index, so those assistant lines give no record.
    redacted = sum(1 for line in raw.values() if _only_redacted_thinking(line))
    want_text, want_tool, want_assistant, *want_rest = MANIFEST_TRANSCRIPTS[relpath]
    assert (user_text, tool_only, assistant + redacted, side_user, side_assistant, meta) == (
        want_text,
        want_tool,
        want_assistant,
        *want_rest,
    )
    # units: every line that gave a record, and the independent raw count agrees
    assert cursor.units == len(by_line) == count_transcript(path)
    assert all(r.extra.get("sidechain") for r in records if raw[r.offset].get("isSidechain"))


def test_corpus_real_session_shapes(corpus: Path) -> None:
    jcode = corpus / next(k for k in MANIFEST_TRANSCRIPTS if "120ec635" in k)
    records, cursor, _ = _parse(jcode)
    # MANIFEST §1 shape notes: cwd changes mid-session (3 distinct values)
    assert len({r.cwd for r in records}) == 3
    assert cursor.titles == {"120ec635-4140-4bf9-8fdc-24047e46c394": "jcode-fork-adoption-plan"}
    assert all(r.timestamp for r in records)
    assert {r.model for r in records if r.role == "assistant"} - {None}
    # templar c056cf62: a resumed session keeps the previous sessionId on some lines
    resumed = corpus / next(k for k in MANIFEST_TRANSCRIPTS if "c056cf62" in k)
    sessions = {r.session_id for r in _parse(resumed)[0]}
    assert "c056cf62-eb8e-4604-b24d-fd2895f5ce1e" in sessions and len(sessions) == 2


def test_corpus_history_pasted_inline(corpus: Path) -> None:
    path = corpus / "agentgrep-samples/claude/claude.history/history.jsonl"
    records, cursor, _ = _parse(path, fn=parse_history)
    assert [r.text for r in records] == ["Review synthetic pasted prompt"]
    assert records[0].cwd == "/synthetic/project" and records[0].kind == "prompt"
    assert cursor.units == count_history(path) == 1


# ----------------------------------------------------------------------------- role/kind


def test_role_kind_mapping(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "projects" / "-x" / f"{SID}.jsonl",
        [
            {"type": "summary", "summary": "Fix the flaky test", "leafUuid": "u1"},
            {"type": "progress", "data": {"x": 1}},
            _user("make the test pass", cwd="/w/app", gitBranch="main"),
            _assistant(
                [
                    {"type": "thinking", "thinking": "look at the test"},
                    {"type": "text", "text": "Running it."},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pt"}},
                ]
            ),
            _user([{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}]),
            _user("Caveat: internal", isMeta=True),
            _user("<command-name>/clear</command-name>"),
            _user("<local-command-stdout>cleared</local-command-stdout>"),
            _user([{"type": "text", "text": "<system-reminder>be brief</system-reminder>"}]),
            _user("Summary of the earlier conversation", isCompactSummary=True),
            _user([{"type": "image", "source": {"type": "base64", "data": "AAAA"}}]),
            _user(
                [
                    {"type": "tool_result", "tool_use_id": "t2", "content": [
                        {"type": "text", "text": "ok"}]},
                    {"type": "text", "text": "and also rename it"},
                ]
            ),
        ],
    )  # fmt: skip
    records, cursor, diag = _parse(path)
    assert _kinds(records) == [
        ("system", "summary", "Fix the flaky test"),
        ("user", "prompt", "make the test pass"),
        ("assistant", "reasoning", "look at the test"),
        ("assistant", "message", "Running it."),
        ("assistant", "tool_call", 'Bash {"command":"pt"}'),
        ("tool", "tool_result", "1 failed"),
        ("system", "message", "Caveat: internal"),
        ("user", "message", "<command-name>/clear</command-name>"),
        ("system", "message", "<local-command-stdout>cleared</local-command-stdout>"),
        ("system", "message", "<system-reminder>be brief</system-reminder>"),
        ("system", "summary", "Summary of the earlier conversation"),
        ("user", "prompt", "and also rename it"),
        ("tool", "tool_result", "ok"),
    ]
    assert diag.count == 0
    assert records[0].session_id == SID  # summary before any sessionId: the file stem
    assert [r.locator for r in records[:3]] == ["line:1", "line:3", "line:4"]
    assert records[2].extra == {"part": 0} and records[4].extra["tool"] == "Bash"
    assert records[1].model is None and records[2].model == "claude-test"
    assert records[1].timestamp == records[1].timestamp and records[1].timestamp is not None
    # offsets point at the line itself
    with open(path, "rb") as handle:
        handle.seek(records[5].offset)
        assert json.loads(handle.readline())["message"]["content"][0]["tool_use_id"] == "t1"
    # the image-only line gives nothing; every other conversational line is one unit
    assert cursor.units == count_transcript(path) == 10


def test_cwd_and_branch_follow_lines_and_slug_is_never_decoded(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "projects" / "-home-u-proj" / f"{SID}.jsonl",
        [
            _user("first"),
            _user("second", cwd="/home/u/proj", gitBranch="main"),
            _user("third"),
            _user("fourth", cwd="/home/u/proj/sub", gitBranch="feat/x"),
        ],
    )
    records, _, _ = _parse(path)
    assert [(r.cwd, r.branch) for r in records] == [
        (None, None),
        ("/home/u/proj", "main"),
        ("/home/u/proj", "main"),
        ("/home/u/proj/sub", "feat/x"),
    ]


def test_titles_custom_beats_ai_beats_summary(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    lines = [
        {"type": "custom-title", "customTitle": "Mine", "sessionId": SID},
        {"type": "ai-title", "aiTitle": "Model's", "sessionId": SID},
        {"type": "summary", "summary": "Old summary", "leafUuid": "x"},
        {"type": "ai-title", "aiTitle": "Other session", "sessionId": "other"},
    ]
    _write(path, lines)
    _, cursor, _ = _parse(path)
    assert cursor.titles == {SID: "Mine", "other": "Other session"}
    _write(path, lines[1:3])
    assert _parse(path)[1].titles == {SID: "Model's"}
    _write(path, lines[2:3])
    assert _parse(path)[1].titles == {SID: "Old summary"}
    # a resume remembers that a custom title was already seen
    _write(path, lines[:1])
    _, first, _ = _parse(path)
    with open(path, "a") as handle:
        handle.write(json.dumps(lines[1]) + "\n")
    resumed = ParseCursor(offset=first.resume_offset, line=first.resume_line, state=first.state)
    _parse(path, resumed)
    assert resumed.titles == {}


# ----------------------------------------------------------------------------- subagents


def test_subagent_file_takes_parent_session_and_agent_id(tmp_path: Path) -> None:
    parent = "9a9a9a9a-0000-4000-8000-000000000009"
    path = _write(
        tmp_path / "projects" / "-w" / parent / "subagents" / "agent-a1b2.jsonl",
        [
            {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "task"}},
            {
                "type": "assistant",
                "isSidechain": True,
                "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
            },
        ],
    )
    records, _, _ = _parse(path)
    assert [r.session_id for r in records] == [parent, parent]
    assert all(r.extra["agent_id"] == "a1b2" and r.extra["sidechain"] for r in records)
    # the parent agent wrote the task: not a typed prompt
    assert _kinds(records)[0] == ("user", "message", "task")


def test_inline_sidechain_lines_are_marked(tmp_path: Path) -> None:
    path = _write(
        tmp_path / f"{SID}.jsonl",
        [
            _user("typed"),
            _user("subtask", isSidechain=True, agentId="ag7"),
            _assistant([{"type": "text", "text": "sub reply"}], isSidechain=True),
        ],
    )
    records, _, _ = _parse(path)
    assert [(r.kind, r.extra) for r in records] == [
        ("prompt", {}),
        ("message", {"sidechain": True, "agent_id": "ag7"}),
        ("message", {"sidechain": True}),
    ]
    assert {r.session_id for r in records} == {SID}


# ----------------------------------------------------------------------------- bad input


def test_bad_lines_are_skipped_with_diagnostics(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    good = json.dumps(_user("kept")).encode()
    bad_utf8 = json.dumps(_user("caf\u00e9")).encode().replace(b"\\u00e9", b"\xe9")
    path.write_bytes(
        b"\n".join(
            [
                good,
                b"this is not json",
                b"\x00\xff\xfe garbage \x89PNG",
                b"[1, 2, 3]",
                b"",
                bad_utf8,
                b'{"type": "user", "message": "a string"}',
                b'{"type": "user", "sessionId": "s", "message": {"content": [{"ty',
            ]
        )
    )
    records, cursor, diag = _parse(path)
    assert [r.text for r in records] == ["kept", "caf\ufffd"]
    messages = " | ".join(f"{d.locator} {d.message}" for d in diag.items)
    assert "line:2 not JSON" in messages and "line:3 not JSON" in messages
    assert "line:4 not an object" in messages and "invalid UTF-8" in messages
    assert "line:8 incomplete last line" in messages
    assert "line:7 user line without a message object" in messages
    # the torn last line stays before the resume point
    assert cursor.resume_offset == path.read_bytes().rindex(b"\n") + 1
    assert cursor.units == count_transcript(path) == 2


def test_fifty_megabyte_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    huge = json.dumps(_user("x" * (50 * 1024 * 1024)))
    _write(path, [_user("before"), huge, _user("after")])
    records, cursor, diag = _parse(path)
    assert [r.text for r in records] == ["before", "after"]
    assert any("too long" in d.message for d in diag.items)
    assert cursor.resume_offset == path.stat().st_size
    assert count_transcript(path) == 2


def test_unreadable_sources_never_raise(tmp_path: Path) -> None:
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    dangling = tmp_path / "gone.jsonl"
    dangling.symlink_to(tmp_path / "missing.jsonl")
    secret = tmp_path / ".credentials.json"
    secret.write_text(json.dumps(_user("never read")) + "\n")
    for path in (directory, dangling, secret):
        for fn in (parse_transcript, parse_history):
            records, cursor, diag = _parse(path, fn=fn)
            assert records == [] and cursor.units == 0
            assert diag.items and "unreadable" in diag.items[0].message
        assert count_transcript(path) == 0 and count_history(path) == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_file(tmp_path: Path) -> None:
    path = _write(tmp_path / f"{SID}.jsonl", [_user("x")])
    path.chmod(0)
    records, _, diag = _parse(path)
    assert records == [] and "unreadable" in diag.items[0].message


# ----------------------------------------------------------------------------- resume


def _session_lines() -> list[Any]:
    return [
        {"type": "summary", "summary": "s", "leafUuid": "x"},
        _user("one", cwd="/w/a", gitBranch="main"),
        _assistant([{"type": "text", "text": "r1"}, {"type": "tool_use", "name": "T", "id": "1"}]),
        _user([{"type": "tool_result", "tool_use_id": "1", "content": "out"}]),
        {"type": "ai-title", "aiTitle": "t", "sessionId": SID},
        _user("two", cwd="/w/b", gitBranch="dev"),
        {"type": "system", "content": "x"},
        {"type": "user", "message": {"role": "user", "content": "three, no cwd or session"}},
        _assistant([{"type": "text", "text": "r3"}]),
    ]


def _key(records: list[Record]) -> list[tuple[Any, ...]]:
    return [(r.to_json(), r.offset, r.extra) for r in records]


@pytest.mark.parametrize("cut", [1, 3, 5, 6, 8])
def test_resume_gives_the_same_records_as_a_full_parse(tmp_path: Path, cut: int) -> None:
    lines = _session_lines()
    full_path = _write(tmp_path / "full" / f"{SID}.jsonl", lines)
    full, full_cursor, _ = _parse(full_path)
    path = _write(tmp_path / "grow" / f"{SID}.jsonl", lines[:cut])
    first, cursor, _ = _parse(path)
    with open(path, "a") as handle:
        handle.write("\n".join(json.dumps(line) for line in lines[cut:]) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    second, resumed, _ = _parse(path, resumed)
    assert _key(first + second) == [
        (r.to_json() | {"source_path": str(path)}, r.offset, r.extra) for r in full
    ]
    assert resumed.units == full_cursor.units == count_transcript(path)


def test_resume_after_a_torn_last_line(tmp_path: Path) -> None:
    lines = _session_lines()
    full, full_cursor, _ = _parse(_write(tmp_path / "full" / f"{SID}.jsonl", lines))
    path = tmp_path / "grow" / f"{SID}.jsonl"
    encoded = [json.dumps(line) for line in lines]
    head = "\n".join(encoded[:5]) + "\n"
    # a complete JSON object without its newline: yielded now, re-read next time
    path.parent.mkdir()
    path.write_text(head + encoded[5])
    first, cursor, _ = _parse(path)
    assert first[-1].text == "two" and cursor.resume_offset == len(head.encode())
    assert cursor.units == 5  # four committed units + the tail, which is not committed
    path.write_text(head + "\n".join(encoded[5:]) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    second, resumed, _ = _parse(path, resumed)
    committed = [r for r in first if r.offset < cursor.resume_offset]
    assert [(r.locator, r.text, r.cwd) for r in committed + second] == [
        (r.locator, r.text, r.cwd) for r in full
    ]
    assert resumed.units == full_cursor.units


# ----------------------------------------------------------------------------- history


def test_history_pasted_text_expansion(tmp_path: Path) -> None:
    history = tmp_path / ".claude" / "history.jsonl"
    cache = tmp_path / ".claude" / "paste-cache"
    cache.mkdir(parents=True)
    (cache / "abc123.txt").write_text("cached\npaste")
    lines = [
        {
            "display": "Look: [Pasted text #1 +3 lines] then [Pasted text #2]",
            "pastedContents": {
                "1": {"id": 1, "type": "text", "content": "inline\ntext\nhere"},
                "2": {"id": 2, "type": "text", "contentHash": "abc123"},
            },
            "timestamp": 1795000000000,
            "project": "/w/app",
            "sessionId": SID,
        },
        {"display": "[Pasted text #1] missing", "pastedContents": {}, "timestamp": 1795000001000},
        {
            "display": "evil [Pasted text #1]",
            "pastedContents": {"1": {"contentHash": "../../etc/passwd"}},
        },
        {"display": "[Pasted text #3] gone", "pastedContents": {"3": {"contentHash": "nothere"}}},
        {"display": "   ", "pastedContents": {}},
        {"display": "/clear", "pastedContents": {}, "project": "/w/app", "sessionId": SID},
    ]
    _write(history, lines)
    records, cursor, diag = _parse(history, fn=parse_history)
    assert [r.text for r in records] == [
        "Look: inline\ntext\nhere then cached\npaste",
        "[Pasted text #1] missing",
        "evil [Pasted text #1]",
        "[Pasted text #3] gone",
        "/clear",
    ]
    assert records[0].timestamp == 1795000000.0 and records[0].cwd == "/w/app"
    assert records[1].session_id == "unknown" and records[1].cwd is None
    assert {(r.role, r.kind) for r in records} == {("user", "prompt")}
    assert [d.locator for d in diag.items] == ["line:2", "line:4"]
    assert cursor.units == count_history(history) == 5


def test_history_resume(tmp_path: Path) -> None:
    history = _write(tmp_path / "history.jsonl", [{"display": "a", "sessionId": "s"}])
    _, cursor, _ = _parse(history, fn=parse_history)
    with open(history, "a") as handle:
        handle.write(json.dumps({"display": "b", "sessionId": "s"}) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    records, resumed, _ = _parse(history, resumed, fn=parse_history)
    assert [(r.text, r.locator) for r in records] == [("b", "history.jsonl:line:2")]
    assert resumed.units == 2


def test_registry_resolves_claude_parsers() -> None:
    transcript = get_parser("claude-code.transcript_jsonl.v1")
    history = get_parser("claude-code.history_jsonl.v1")
    assert transcript.parse is parse_transcript and transcript.resumable
    assert history.count_raw is count_history


def test_sample_home_template_parses_cleanly() -> None:
    template = Path(__file__).resolve().parent.parent / "examples" / "home-template" / ".claude"
    sessions = sorted(template.glob("projects/*/*.jsonl"))
    assert len(sessions) == 2
    titles: dict[str, str] = {}
    for path in sessions:
        records, cursor, diag = _parse(path)
        assert diag.count == 0 and cursor.units == count_transcript(path) == len(
            {r.offset for r in records}
        )
        assert {r.cwd for r in records} == {
            "__HOME__/src/shop" if path.parent.name == "-__HOME__-src-shop" else
            "__HOME__/src/shop-wt-feat-auth"
        }  # fmt: skip
        assert {"prompt", "tool_call", "tool_result", "message"} <= {r.kind for r in records}
        titles.update(cursor.titles)
    assert sorted(titles.values()) == [
        "Add GitHub OAuth login with PKCE",
        "Fix flaky checkout test with retry and backoff",
    ]
    history, cursor, diag = _parse(template / "history.jsonl", fn=parse_history)
    assert cursor.units == 4 and diag.count == 0
    assert "[Pasted text" not in history[2].text and "code_verifier (PKCE)" in history[2].text


# ----------------------------------------------------------------------------- properties

_TEXTS = st.sampled_from(["", "  ", "fix it", "<command-name>/x</command-name>", "ok\n"])
_BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking", "image"]), "text": _TEXTS}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _TEXTS}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "name": _TEXTS, "input": st.just({})}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "content": _TEXTS | st.none()}),
    _TEXTS,
    st.integers(),
)
_CONTENT = st.one_of(_TEXTS, st.lists(_BLOCK, max_size=4), st.none(), st.integers())
_LINE = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["user", "assistant", "system", "progress"]),
            "message": st.one_of(st.fixed_dictionaries({"content": _CONTENT}), _TEXTS),
        },
        optional={
            "isMeta": st.booleans(),
            "isSidechain": st.booleans(),
            "isCompactSummary": st.booleans(),
            "cwd": _TEXTS,
            "sessionId": st.sampled_from(["a", "b", ""]),
        },
    ),
    st.fixed_dictionaries({"type": st.just("summary"), "summary": _TEXTS | st.integers()}),
    st.fixed_dictionaries({"type": st.just("ai-title"), "aiTitle": _TEXTS}),
)


@settings(max_examples=120, deadline=None)
@given(lines=st.lists(_LINE, max_size=12), cut=st.integers(min_value=0, max_value=12))
def test_units_always_equal_the_independent_raw_count(
    tmp_path_factory: pytest.TempPathFactory, lines: list[Any], cut: int
) -> None:
    folder = tmp_path_factory.mktemp("prop")
    path = _write(folder / f"{SID}.jsonl", lines)
    full, cursor, _ = _parse(path)
    assert cursor.units == count_transcript(path) == len({r.offset for r in full})
    # and a resume at any line boundary reproduces the tail of the full parse
    head = _write(folder / "grow" / f"{SID}.jsonl", lines[:cut]) if cut else None
    if head is not None:
        first, partial, _ = _parse(head)
        with open(head, "a") as handle:
            handle.write("".join(json.dumps(line) + "\n" for line in lines[cut:]))
        resumed = ParseCursor(
            offset=partial.resume_offset, line=partial.resume_line, state=partial.state
        )
        second, resumed, _ = _parse(head, resumed)
        assert [(r.locator, r.text, r.kind, r.cwd, r.session_id) for r in first + second] == [
            (r.locator, r.text, r.kind, r.cwd, r.session_id) for r in full
        ]
        assert resumed.units == cursor.units


def test_discovery_and_pipeline_reach_these_parsers(home: Path) -> None:
    from agentdex.discovery import discover
    from agentdex.parsers import run

    project = home / ".claude" / "projects" / "-w-app"
    _write(project / f"{SID}.jsonl", [_user("main prompt", cwd=str(home))])
    _write(
        project / SID / "subagents" / "agent-q1.jsonl",
        [_user("sub task", isSidechain=True, cwd=str(home))],
    )
    _write(home / ".claude" / "history.jsonl", [{"display": "main prompt", "sessionId": SID}])
    found = discover(home, agents=["claude-code"])
    by_store = {source.store: list(run(source)) for source in found.sources}
    assert sorted(by_store) == [
        "claude-code.history",
        "claude-code.projects",
        "claude-code.subagents",
    ]
    assert by_store["claude-code.projects"][0].kind == "prompt"
    sub = by_store["claude-code.subagents"][0]
    assert (sub.session_id, sub.extra["agent_id"], sub.kind) == (SID, "q1", "message")

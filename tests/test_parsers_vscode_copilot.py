"""VS Code Copilot Chat parser: corpus sessions, mutation-log replay, parts, cwd, inline history."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from agentdex.parsers import ParseCursor, SourceRef, _vscode_inline, get_parser
from agentdex.readers import Diagnostics
from agentdex.records import Record

CHAT = "vscode-copilot.chat_session.v1"
INLINE = "vscode-copilot.inline_history.v1"


def parse(
    path: Path, parser_id: str = CHAT, host: str | None = None
) -> tuple[list[Record], ParseCursor, Diagnostics]:
    spec = get_parser(parser_id)
    ref = SourceRef(
        path, "vscode-copilot", "vscode-copilot.chat_sessions", host, 1.8e9, path.parent
    )
    cursor, diagnostics = ParseCursor(), Diagnostics()
    records = list(spec.parse(ref, cursor, diagnostics))
    return records, cursor, diagnostics


def raw_count(path: Path, parser_id: str = CHAT) -> int:
    count_raw = get_parser(parser_id).count_raw
    assert count_raw is not None
    return count_raw(path)


def summary(records: list[Record]) -> list[tuple[str, str, str, str]]:
    return [(r.locator, r.role, r.kind, r.text) for r in records]


def request(rid: str, text: str, *response: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "requestId": rid,
        "message": {"text": text},
        "response": list(response),
        "timestamp": 1794213600000,
        **more,
    }  # 2026-11-08T08:40:00Z


def session(*requests: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "version": 3,
        "sessionId": "sess-1",
        "creationDate": 1794213000000,
        "requests": list(requests),
        **more,
    }


def write_log(path: Path, *entries: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


# --------------------------------------------------------------------------- corpus


def test_agentgrep_sample_json(corpus: Path) -> None:
    # agentgrep-samples/vscode/vscode.chat_sessions/example.json: v3, 2 requests; request_0
    # answers in 2 markdown parts around a toolInvocationSerialized (copilot_readFile): two
    # replies, the model's text before its tool call and after it; request_1 has 1 markdown
    # part and a toolCallRounds-only copilot_searchWorkspace call.
    path = corpus / "agentgrep-samples/vscode/vscode.chat_sessions/example.json"
    records, cursor, diagnostics = parse(path)
    assert summary(records) == [
        (
            "json:/requests/0/message",
            "user",
            "prompt",
            "Summarize the build pipeline in this repository",
        ),
        (
            "json:/requests/0/response/0",
            "assistant",
            "message",
            "The pipeline builds, then tests, then publishes. ",
        ),
        ("json:/requests/0/response/1", "assistant", "tool_call", "copilot_readFile"),
        (
            "json:/requests/0/response/2",
            "assistant",
            "message",
            "See the workflow file for the exact steps.",
        ),
        ("json:/requests/1/message", "user", "prompt", "Now add a status badge to the README"),
        (
            "json:/requests/1/response/0",
            "assistant",
            "message",
            "Added a badge near the top of the README heading.",
        ),
        (
            "json:/requests/1/result/metadata/toolCallRounds/0/toolCalls/0",
            "assistant",
            "tool_call",
            "copilot_searchWorkspace",
        ),
    ]
    assert {r.session_id for r in records} == {"00000000-0000-4000-8000-000000000000"}
    assert records[0].timestamp == pytest.approx(1779999665.0)
    assert cursor.units == 2 == raw_count(path)
    assert diagnostics.count == 0
    count_roles = get_parser(CHAT).count_roles
    assert count_roles is not None
    assert count_roles(path) == {records[0].session_id: {"prompts": 2, "replies": 3}}


def test_agentgrep_sample_jsonl(corpus: Path) -> None:
    # example.jsonl (MANIFEST §5: "JSONL, 3 lines"): kind 0 with request_a; kind 2 at
    # ["requests"] with i=1 pushing request_b; kind 1 setting requests[0].result (a
    # toolCallRounds copilot_readFile). modelId gpt-5 on both.
    path = corpus / "agentgrep-samples/vscode/vscode.chat_sessions/example.jsonl"
    records, cursor, diagnostics = parse(path)
    assert summary(records) == [
        (
            "json:/requests/0/message",
            "user",
            "prompt",
            "Summarize the build pipeline in this repository",
        ),
        (
            "json:/requests/0/response/0",
            "assistant",
            "message",
            "The pipeline builds, then tests, then publishes.",
        ),
        (
            "json:/requests/0/result/metadata/toolCallRounds/0/toolCalls/0",
            "assistant",
            "tool_call",
            "copilot_readFile",
        ),
        ("json:/requests/1/message", "user", "prompt", "How are releases tagged?"),
        (
            "json:/requests/1/response/0",
            "assistant",
            "message",
            "Tags are pushed manually by the maintainer.",
        ),
    ]
    assert {r.model for r in records if r.role == "assistant"} == {"gpt-5"}
    assert cursor.units == 2 == raw_count(path)
    assert diagnostics.count == 0


# --------------------------------------------------------------------------- mutation log


def test_mutation_log_kinds_0_to_3(tmp_path: Path) -> None:
    path = write_log(
        tmp_path / "chatSessions" / "s.jsonl",
        {"kind": 0, "v": session(request("r0", "first", {"value": "one"}))},
        # kind 2 without i: append two requests.
        {"kind": 2, "k": ["requests"], "v": [request("r1", "second"), request("r2", "third")]},
        # kind 1: set a nested value and a top-level one.
        {"kind": 1, "k": ["requests", 1, "message", "text"], "v": "second (edited)"},
        {"kind": 1, "k": ["customTitle"], "v": "Release notes"},
        # kind 2 with i: truncate to 2 then push a replacement for r2.
        {"kind": 2, "k": ["requests"], "i": 2, "v": [request("r3", "third, retried")]},
        # kind 2 on a nested array that does not exist yet creates it.
        {"kind": 2, "k": ["requests", 2, "response"], "v": [{"value": "retried answer"}]},
        # kind 3: delete r0's response.
        {"kind": 3, "k": ["requests", 0, "response"]},
        # kind 2 with i and no v: a pure truncate of r1's (empty) response keeps it empty.
        {"kind": 2, "k": ["requests", 1, "response"], "i": 0},
    )
    records, cursor, diagnostics = parse(path)
    assert summary(records) == [
        ("json:/requests/0/message", "user", "prompt", "first"),
        ("json:/requests/1/message", "user", "prompt", "second (edited)"),
        ("json:/requests/2/message", "user", "prompt", "third, retried"),
        ("json:/requests/2/response/0", "assistant", "message", "retried answer"),
    ]
    assert cursor.titles == {"sess-1": "Release notes"}
    assert cursor.units == 3 == raw_count(path)
    assert diagnostics.count == 0


def test_mutation_log_initial_entry_replaces_state(tmp_path: Path) -> None:
    path = write_log(
        tmp_path / "s.jsonl",
        {"kind": 0, "v": session(request("r0", "old"))},
        {"kind": 0, "v": session(request("n0", "compacted"), request("n1", "newer"))},
    )
    records, cursor, _ = parse(path)
    assert [r.text for r in records] == ["compacted", "newer"]
    assert cursor.units == 2 == raw_count(path)


def test_mutation_log_corrupt_entries_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {"kind": 1, "k": ["customTitle"], "v": "before initial"},  # no state yet
        {"kind": 0, "v": session(request("r0", "kept"))},
        {"kind": 1, "k": ["requests", 9, "message"], "v": {"text": "x"}},  # index out of range
        {"kind": 1, "k": ["nope", "deeper"], "v": 1},  # missing key on the way
        {"kind": 2, "k": ["requests", 0, "message"], "v": [1]},  # push onto a non-array
        {"kind": 3, "k": "requests"},  # path not a list
        {"kind": 7, "k": ["requests"]},  # unknown kind
        [1, 2, 3],  # not an object
        {"kind": 2, "k": ["requests"], "v": [request("r1", "pushed after the junk")]},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines)
    path.write_bytes(body.encode() + b"{garbage\n" + b'{"kind": 1, "k": ["customTitle"], "v": "tr')
    records, cursor, diagnostics = parse(path)
    assert [r.text for r in records] == ["kept", "pushed after the junk"]
    assert cursor.titles == {}
    assert cursor.units == 2 == raw_count(path)
    messages = [d.message for d in diagnostics.items]
    assert sum("log entry skipped" in m for m in messages) == 6
    assert any("not JSON" in m for m in messages)
    assert any("incomplete last line" in m for m in messages)


def test_mutation_log_without_initial_state(tmp_path: Path) -> None:
    path = write_log(tmp_path / "s.jsonl", {"kind": 1, "k": ["a"], "v": 1})
    records, _, diagnostics = parse(path)
    assert records == []
    assert any("no initial state" in d.message for d in diagnostics.items)
    assert raw_count(path) == 0


# --------------------------------------------------------------------------- parts


def test_response_part_kinds(tmp_path: Path) -> None:
    parts = [
        {"kind": "thinking", "value": "Look at "},
        {"kind": "thinking", "value": ["the CSS ", "first."]},
        {"value": "Open "},
        {
            "kind": "inlineReference",
            "inlineReference": {"scheme": "file", "path": "/s/app.css", "fsPath": "/s/app.css"},
        },
        {"kind": "markdownContent", "content": {"value": " and fix it."}},
        {"kind": "codeblockUri", "uri": {"path": "/s/app.css"}},
        {
            "kind": "toolInvocationSerialized",
            "toolId": "run_in_terminal",
            "toolCallId": "t1",
            "invocationMessage": {"value": "Running tests"},
            "toolSpecificData": {
                "kind": "terminal",
                "commandLine": {"original": "npm test"},
                "terminalCommandOutput": {"text": "3 passing"},
            },
        },
        {
            "kind": "toolInvocationSerialized",
            "toolId": "copilot_readFile",
            "toolCallId": "t2",
            "pastTenseMessage": {"value": "Read [](file:///s/checkout.css), lines 1 to 40"},
        },
        {
            "kind": "toolInvocationSerialized",
            "toolId": "mcp_search",
            "toolCallId": "t3",
            "invocationMessage": "Ran `search`",
            "toolSpecificData": {"kind": "input", "rawInput": {"q": "flex"}},
            "resultDetails": {"output": [{"type": "embed", "value": "2 hits"}]},
        },
        {"kind": "textEditGroup", "uri": {"scheme": "file", "path": "/s/app.css"}, "edits": []},
        {"kind": "warning", "content": {"value": "Rate limited"}},
        {"kind": "somethingNew"},
        {"kind": "undoStop", "id": "u"},
    ]
    result = {
        "metadata": {
            "toolCallRounds": [
                {
                    "toolCalls": [
                        {"name": "run_in_terminal", "id": "a"},
                        {"name": "copilot_readFile", "id": "b"},
                        {"name": "grep_search", "id": "c", "arguments": '{"query": "flex"}'},
                    ]
                }
            ]
        },
        "errorDetails": {"message": "Response stopped"},
    }
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            session(
                request(
                    "r0", "fix the checkout css", *parts, result=result, modelId="copilot/gpt-4.1"
                )
            )
        )
    )
    records, cursor, diagnostics = parse(path)
    assert summary(records) == [
        ("json:/requests/0/message", "user", "prompt", "fix the checkout css"),
        ("json:/requests/0/response/0", "assistant", "reasoning", "Look at the CSS first."),
        ("json:/requests/0/response/2", "assistant", "message", "Open `/s/app.css` and fix it."),
        ("json:/requests/0/response/6", "assistant", "tool_call", "Running tests\n$ npm test"),
        ("json:/requests/0/response/6/result", "tool", "tool_result", "3 passing"),
        (
            "json:/requests/0/response/7",
            "assistant",
            "tool_call",
            "Read /s/checkout.css, lines 1 to 40",
        ),
        ("json:/requests/0/response/8", "assistant", "tool_call", 'Ran `search`\n{"q":"flex"}'),
        ("json:/requests/0/response/8/result", "tool", "tool_result", "2 hits"),
        ("json:/requests/0/response/9", "assistant", "tool_call", "Edited /s/app.css"),
        ("json:/requests/0/response/10", "system", "message", "Rate limited"),
        # Tool parts exist, so toolCallRounds (model-facing names) add nothing.
        ("json:/requests/0/result/errorDetails", "system", "message", "Response stopped"),
    ]
    assert records[5].extra["tool"] == "copilot_readFile"
    assert {r.model for r in records if r.role == "assistant"} == {"copilot/gpt-4.1"}
    assert cursor.units == 1 == raw_count(path)
    assert [d.message for d in diagnostics.items] == [
        "unknown response parts skipped: somethingNew×1"
    ]


def test_tool_call_rounds_when_no_tool_parts(tmp_path: Path) -> None:
    metadata = {
        "toolCallRounds": [
            {
                "toolCalls": [
                    {"name": "read_file", "id": "call_1", "arguments": '{"path": "a.css"}'}
                ]
            },
            {"toolCalls": [{"name": "list_dir", "id": "call_2", "arguments": ""}, {"id": "x"}]},
        ],
        "toolCallResults": {
            "call_1": {"$mid": 20, "content": [{"$mid": 21, "value": "body { margin: 0 }"}]},
            "call_2": {"content": [{"value": ""}]},
        },
    }
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(session(request("r0", "q", {"value": "a"}, result={"metadata": metadata})))
    )
    records, _, _ = parse(path)
    base = "json:/requests/0/result/metadata"
    assert summary(records)[2:] == [
        (
            f"{base}/toolCallRounds/0/toolCalls/0",
            "assistant",
            "tool_call",
            'read_file({"path": "a.css"})',
        ),
        (f"{base}/toolCallResults/call_1", "tool", "tool_result", "body { margin: 0 }"),
        (f"{base}/toolCallRounds/1/toolCalls/0", "assistant", "tool_call", "list_dir"),
    ]


def test_older_message_shapes_and_missing_timestamps(tmp_path: Path) -> None:
    data = {
        "sessionId": "v1",
        "creationDate": 1794213000000,
        "requests": [
            {"message": {"parts": [{"text": "parts "}, {"text": "only"}]}, "response": []},
            {"message": "", "response": [{"value": "an answer to nothing"}]},
            "junk",
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    records, cursor, _ = parse(path)
    assert summary(records) == [
        ("json:/requests/0/message", "user", "prompt", "parts only"),
        ("json:/requests/1/response/0", "assistant", "message", "an answer to nothing"),
    ]
    assert records[0].timestamp == pytest.approx(1794213000.0)  # creationDate fallback
    assert cursor.units == 1 == raw_count(path)


@pytest.mark.parametrize(
    "content", [b"", b"{trunc", b"\xff\xfe\xfd", b"[1]", b'{"requests": 5}', b"null"]
)
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_bad_session_files_never_raise(tmp_path: Path, content: bytes, suffix: str) -> None:
    path = tmp_path / f"s{suffix}"
    path.write_bytes(content)
    records, cursor, _ = parse(path)
    assert records == [] and cursor.units == 0
    assert raw_count(path) == 0


def test_non_utf8_session_is_read_leniently(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    body = json.dumps(session(request("r", "caf\u00e9"))).replace("\\u00e9", "\udce9")
    path.write_bytes(body.encode("utf-8", "surrogateescape"))
    records, cursor, _ = parse(path)
    assert [r.text for r in records] == ["caf\ufffd"]
    assert cursor.units == 1 == raw_count(path)


def test_directory_where_a_file_should_be(tmp_path: Path) -> None:
    for name, parser_id in [("s.json", CHAT), ("s.jsonl", CHAT), ("state.vscdb", INLINE)]:
        path = tmp_path / name
        path.mkdir()
        records, _, diagnostics = parse(path, parser_id)
        assert records == []
        assert "not a regular file" in diagnostics.items[0].message
        assert raw_count(path, parser_id) == 0


# --------------------------------------------------------------------------- cwd


def storage_session(user: Path, workspace: object, name: str = "s.json") -> Path:
    storage = user / "workspaceStorage" / "0123456789abcdef0123456789abcdef"
    (storage / "chatSessions").mkdir(parents=True)
    if isinstance(workspace, bytes):
        (storage / "workspace.json").write_bytes(workspace)
    elif workspace is not None:
        (storage / "workspace.json").write_text(json.dumps(workspace))
    path = storage / "chatSessions" / name
    path.write_text(json.dumps(session(request("r", "hi"))))
    return path


@pytest.mark.parametrize(
    ("workspace", "cwd"),
    [
        ({"folder": "file:///home/alex/my%20shop"}, "/home/alex/my shop"),
        ({"folder": "vscode-remote://wsl%2Bubuntu/home/alex/proj"}, "/home/alex/proj"),
        ({"folder": "file:///c%3A/Users/alex/site"}, "/mnt/c/Users/alex/site"),
        ({"workspace": "file:///home/alex/all.code-workspace"}, "/home/alex"),
        ({"workspace": "file:///home/alex/.config/Code/Workspaces/1/workspace.json"}, None),
        ({"folder": "untitled:Untitled-1"}, None),
        ({"folder": 42}, None),
        (b"{not json", None),
        (None, None),
    ],
)
def test_cwd_from_workspace_json(tmp_path: Path, workspace: object, cwd: str | None) -> None:
    path = storage_session(tmp_path / "User", workspace)
    records, _, _ = parse(path, host="windows:alex")
    assert records[0].cwd == cwd
    assert records[0].host == "windows:alex"


def test_empty_window_session_has_no_cwd(tmp_path: Path) -> None:
    folder = tmp_path / "User" / "globalStorage" / "emptyWindowChatSessions"
    folder.mkdir(parents=True)
    (folder.parent.parent / "workspace.json").write_text('{"folder": "file:///wrong"}')
    path = folder / "e.json"
    path.write_text(json.dumps(session(request("r", "no folder open"))))
    records, _, _ = parse(path)
    assert [(r.text, r.cwd) for r in records] == [("no folder open", None)]


# --------------------------------------------------------------------------- inline history


def make_state_db(path: Path, value: object = None, *, table: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    if table:
        conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        conn.execute(
            "INSERT INTO ItemTable VALUES (?, ?)",
            ("secret://github.auth", '{"token": "must-never-be-read"}'),
        )
        conn.execute("INSERT INTO ItemTable VALUES (?, ?)", ("workbench.panel", "{}"))
        if value is not None:
            stored = value if isinstance(value, str | bytes) else json.dumps(value)
            conn.execute("INSERT INTO ItemTable VALUES (?, ?)", ("inline-chat-history", stored))
    conn.commit()
    conn.close()
    return path


def test_inline_history_reads_only_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = make_state_db(
        tmp_path / "globalStorage" / "state.vscdb",
        ["rename this variable", "", {"text": "add docstrings"}, 7],
    )
    statements: list[str] = []
    real_connect = _vscode_inline.connect_readonly

    def traced(path: Path) -> sqlite3.Connection:
        conn = real_connect(path)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(_vscode_inline, "connect_readonly", traced)
    records, cursor, diagnostics = parse(db, INLINE, host="windows:alex")
    assert summary(records) == [
        ("row:ItemTable/inline-chat-history/0", "user", "prompt", "rename this variable"),
        ("row:ItemTable/inline-chat-history/2", "user", "prompt", "add docstrings"),
    ]
    assert {r.host for r in records} == {"windows:alex"}
    assert {r.timestamp for r in records} == {1.8e9}  # the source mtime: none is stored
    assert cursor.units == 2 == raw_count(db, INLINE)
    assert diagnostics.count == 0
    selects = [s for s in statements if not s.startswith("PRAGMA")]
    assert selects == ["SELECT value FROM ItemTable WHERE key = 'inline-chat-history'"]
    assert not any("secret" in s for s in statements)


def test_inline_history_absent_key_and_bad_values(tmp_path: Path) -> None:
    assert parse(make_state_db(tmp_path / "a" / "state.vscdb"), INLINE)[0] == []
    records, _, diagnostics = parse(make_state_db(tmp_path / "b" / "state.vscdb", "{nope"), INLINE)
    assert records == [] and "not a JSON array" in diagnostics.items[0].message
    blob = make_state_db(tmp_path / "c" / "state.vscdb", json.dumps(["from a blob"]).encode())
    assert [r.text for r in parse(blob, INLINE)[0]] == ["from a blob"]
    assert raw_count(blob, INLINE) == 1


@pytest.mark.parametrize("kind", ["garbage", "no-table", "empty"])
def test_inline_history_corrupt_database(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "state.vscdb"
    if kind == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    elif kind == "no-table":
        make_state_db(db, table=False)
    else:
        db.write_bytes(b"")
    records, _, diagnostics = parse(db, INLINE)
    assert records == []
    assert raw_count(db, INLINE) == 0
    if kind != "empty":  # an empty file is a valid empty SQLite db without the table
        assert "database skipped" in diagnostics.items[0].message


def test_inline_history_locked_database_is_skipped_quickly(tmp_path: Path) -> None:
    db = make_state_db(tmp_path / "state.vscdb", ["locked away"])
    holder = sqlite3.connect(db)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        records, _, diagnostics = parse(db, INLINE)
        elapsed = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert records == []
    assert "locked" in diagnostics.items[0].message
    assert elapsed < 1.5
    # Once the writer is gone the same file reads normally, and nothing was modified.
    assert [r.text for r in parse(db, INLINE)[0]] == ["locked away"]


# --------------------------------------------------------------------------- properties

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_text = st.sampled_from(["", "  ", "fix it", "why?", "caf\u00e9"])
_request = st.builds(
    lambda rid, text: {"requestId": rid, "message": {"text": text}, "response": []},
    st.sampled_from(["a", "b", "c"]),
    _text,
)
_index = st.integers(min_value=0, max_value=4)
_entry = st.one_of(
    st.builds(lambda reqs: {"kind": 0, "v": session(*reqs)}, st.lists(_request, max_size=3)),
    st.builds(
        lambda reqs, i: {"kind": 2, "k": ["requests"], "v": reqs, **i},
        st.lists(_request, max_size=3),
        st.one_of(st.just({}), st.builds(lambda n: {"i": n}, _index)),
    ),
    st.builds(
        lambda reqs: {"kind": 1, "k": ["requests"], "v": reqs}, st.lists(_request, max_size=3)
    ),
    st.builds(lambda n, r: {"kind": 1, "k": ["requests", n], "v": r}, _index, _request),
    st.builds(
        lambda n, t: {"kind": 1, "k": ["requests", n, "message"], "v": {"text": t}}, _index, _text
    ),
    st.builds(
        lambda n, t: {"kind": 1, "k": ["requests", n, "message", "text"], "v": t}, _index, _text
    ),
    st.builds(
        lambda n, tail: {"kind": 3, "k": ["requests", n, *tail]},
        _index,
        # Not [] or ["message"]: VS Code truncates requests rather than deleting slots.
        st.sampled_from([["message", "text"], ["response"]]),
    ),
    st.builds(
        lambda n: {"kind": 2, "k": ["requests", n, "response"], "v": [{"value": "ok"}]}, _index
    ),
    st.just({"kind": 3, "k": ["requests"]}),
    st.just({"kind": 1, "k": ["customTitle"], "v": "T"}),
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.lists(_entry, max_size=12))
def test_replay_and_raw_count_agree(tmp_path: Path, entries: list[dict[str, Any]]) -> None:
    """Two independent readings of any request-shaped log agree on the prompt count."""
    path = write_log(tmp_path / "prop.jsonl", *entries)
    records, cursor, _ = parse(path)
    assert cursor.units == raw_count(path)
    assert cursor.units == sum(r.kind == "prompt" for r in records)


_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["kind", "k", "v", "i", "requests", "message", "text", "response"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_junk, max_size=8), raw=st.binary(max_size=40))
def test_arbitrary_logs_never_raise(tmp_path: Path, lines: list[object], raw: bytes) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in lines) + raw)
    parse(path)
    raw_count(path)
    as_json = tmp_path / "junk.json"
    as_json.write_bytes(json.dumps(lines[0] if lines else None).encode())
    parse(as_json)
    raw_count(as_json)


def test_registry_resolves_every_id_of_both_modules() -> None:
    from agentdex.parsers._registry import PARSER_MODULES

    ours = [pid for pid in PARSER_MODULES if pid.startswith(("gemini-cli.", "vscode-copilot."))]
    assert len(ours) == 4
    for parser_id in ours:
        spec = get_parser(parser_id)
        assert spec.id == parser_id and spec.count_raw is not None and not spec.resumable


# --------------------------------------------------------------------------- real agent-mode shape

CHATS = Path(__file__).parent / "fixtures/vscode/workspaceStorage/8c1f3e2a9d4b7c6e5f0a1b2c3d4e5f60"
AGENT_SESSIONS = [
    CHATS / "chatSessions/4c1f7e2a-9b3d-4e5f-8a6b-7c8d9e0f1a2b.json",
    CHATS / "chatSessions/9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a.jsonl",
]


@pytest.mark.parametrize("path", AGENT_SESSIONS, ids=["json", "jsonl"])
def test_stream_fragments_join_one_reply_after_its_prompt(path: Path) -> None:
    """Markdown streamed around a code-block URI and an edit is one reply, placed at its first
    fragment; the closing ``\\n```\\n`` fragment is part of it, not a message. A tool call
    ends the model's round: the text before the read and the text after it are two replies."""
    records, cursor, diagnostics = parse(path)
    assert summary(records) == [
        ("json:/requests/0/message", "user", "prompt", "raise the retry cap in retry.go to 5"),
        ("json:/requests/0/response/0", "assistant", "reasoning", "The cap lives in retry.go."),
        (
            "json:/requests/0/response/2",
            "assistant",
            "message",
            "I'll read `/work/shop/src/retry.go` first.",
        ),
        ("json:/requests/0/response/6", "assistant", "tool_call", "Read /work/shop/src/retry.go"),
        (
            "json:/requests/0/response/7",
            "assistant",
            "message",
            "Changing the cap:\n```\n\n```\n\nThe cap is now 5.",
        ),
        (
            "json:/requests/0/response/10",
            "assistant",
            "tool_call",
            "Edited /work/shop/src/retry.go",
        ),
        ("json:/requests/1/message", "user", "prompt", "and add a test"),
        ("json:/requests/1/response/0", "assistant", "message", "Added `TestRetryCap`."),
    ]
    # One timestamp per request: prompt and reply share it, the parts give the order.
    assert records[0].timestamp == records[2].timestamp == 1795168800.0
    assert {r.cwd for r in records} == {"/work/shop"}
    assert cursor.units == raw_count(path) == 2 and diagnostics.count == 0
    count_roles = get_parser(CHAT).count_roles
    assert count_roles is not None
    assert count_roles(path) == {records[0].session_id: {"prompts": 2, "replies": 3}}

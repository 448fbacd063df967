"""Gemini CLI parser: corpus files, .jsonl replay, logs.json, project roots, bad input."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from agentdex import parsers
from agentdex.discovery import discover
from agentdex.parsers import ParseCursor, SourceRef, get_parser
from agentdex.readers import Diagnostics
from agentdex.records import Record

CHAT = "gemini-cli.chat.v1"
LOGS = "gemini-cli.logs_json.v1"


def parse(
    path: Path, parser_id: str = CHAT, root: Path | None = None
) -> tuple[list[Record], ParseCursor, Diagnostics]:
    spec = get_parser(parser_id)
    ref = SourceRef(path, "gemini-cli", "gemini-cli.chats", None, 0.0, root or path.parent)
    cursor, diagnostics = ParseCursor(), Diagnostics()
    records = list(spec.parse(ref, cursor, diagnostics))
    return records, cursor, diagnostics


def raw_count(path: Path, parser_id: str = CHAT) -> int:
    count_raw = get_parser(parser_id).count_raw
    assert count_raw is not None
    return count_raw(path)


def kinds(records: list[Record]) -> list[tuple[str, str]]:
    return [(r.role, r.kind) for r in records]


def write_jsonl(path: Path, *lines: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


HEADER = {
    "sessionId": "s-1",
    "projectHash": "h",
    "startTime": "2026-11-03T09:00:00Z",
    "lastUpdated": "2026-11-03T09:00:00Z",
    "kind": "main",
}


def msg(mid: str, type_: str, content: object, **more: object) -> dict[str, object]:
    return {
        "id": mid,
        "timestamp": "2026-11-03T09:00:01Z",
        "type": type_,
        "content": content,
        **more,
    }


# --------------------------------------------------------------------------- corpus


def test_agentgrep_sample_jsonl(corpus: Path) -> None:
    # agentgrep-samples/gemini/gemini.tmp.chats/session-…-example.jsonl (MANIFEST §5: "JSONL,
    # 4 lines"): header, one user record ([{text}] content), one gemini record with one
    # thought, then a $set of lastUpdated.
    path = corpus / "agentgrep-samples/gemini/gemini.tmp.chats"
    path = path / "session-2026-05-17T12-00-00-example.jsonl"
    records, cursor, diagnostics = parse(path)
    assert kinds(records) == [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
    ]
    assert records[0].text == "<redacted user prompt>"
    assert records[0].locator == "line:2"
    assert records[1].text == "approach: <redacted reasoning>"
    assert records[1].locator == "line:3#/thoughts/0"
    assert records[2].model == "gemini-3-flash-preview"
    assert {r.session_id for r in records} == {"00000000-0000-0000-0000-000000000300"}
    assert records[0].timestamp == pytest.approx(1779019205.0)  # 2026-05-17T12:00:05Z
    assert records[0].offset == len(path.read_bytes().split(b"\n")[0]) + 1
    assert cursor.units == 2 == raw_count(path)
    assert diagnostics.count == 0


def test_agrep_fixture_json(corpus: Path) -> None:
    # agrep-fixtures/gemini/.../session-2026-01-02T10-00-55555555.json: 5 messages — info,
    # user, gemini (1 thought, 1 write_file call with a functionResponse result), user, gemini.
    path = corpus / "agrep-fixtures/gemini/home/.gemini/tmp/hash5555synthetic/chats"
    path = path / "session-2026-01-02T10-00-55555555.json"
    records, cursor, _ = parse(path, root=path.parents[3])
    assert kinds(records) == [
        ("system", "message"),
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("user", "prompt"),
        ("assistant", "message"),
    ]
    by_kind = {r.kind: r for r in records}
    assert by_kind["tool_call"].text.startswith('write_file({"file_path":"Cargo.toml"')
    assert by_kind["tool_call"].locator == "json:/messages/2/toolCalls/0"
    assert by_kind["tool_result"].text == "wrote Cargo.toml"
    assert [r.text for r in records if r.kind == "prompt"] == [
        "scaffold a rust cli with clap",
        "add a --verbose flag",
    ]
    assert cursor.units == 5 == raw_count(path)
    # "hash5555synthetic" is neither a sha256 nor a registered slug: no cwd, never a guess.
    assert {r.cwd for r in records} == {None}


def test_agentgrep_logs_json(corpus: Path) -> None:
    # agentgrep-samples/gemini/gemini.tmp.logs/logs.json: an array of two user prompts.
    path = corpus / "agentgrep-samples/gemini/gemini.tmp.logs/logs.json"
    records, cursor, diagnostics = parse(path, LOGS)
    assert [r.text for r in records] == ["<redacted user prompt>", "<redacted second prompt>"]
    assert [r.locator for r in records] == ["json:/0", "json:/1"]
    assert kinds(records) == [("user", "prompt")] * 2
    assert cursor.units == 2 == raw_count(path, LOGS)
    assert diagnostics.count == 0


def test_corpus_home_discovered_and_run(corpus: Path, home: Path) -> None:
    """The agrep fixture home, copied into the test HOME, flows through discovery and run()."""
    shutil.copytree(corpus / "agrep-fixtures/gemini/home/.gemini", home / ".gemini")
    found = discover(home, agents=["gemini-cli"])
    assert [s.path.name for s in found.sources] == ["session-2026-01-02T10-00-55555555.json"]
    records = list(parsers.run(found.sources[0]))
    assert len(records) == 8


# --------------------------------------------------------------------------- replay


def test_jsonl_upsert_keeps_first_position_and_newest_body(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "session-a.jsonl",
        HEADER,
        msg("u1", "user", "first"),
        msg("g1", "gemini", "", toolCalls=[{"id": "c1", "name": "ls", "args": {}}]),
        msg("u2", "user", "second"),
        # g1 re-emitted with its result: must replace the earlier body, in place.
        msg(
            "g1",
            "gemini",
            "done",
            toolCalls=[
                {
                    "id": "c1",
                    "name": "ls",
                    "args": {},
                    "result": [{"functionResponse": {"response": {"output": "a.txt"}}}],
                }
            ],
        ),
    )
    records, cursor, _ = parse(path)
    assert [(r.kind, r.text) for r in records] == [
        ("prompt", "first"),
        ("message", "done"),
        ("tool_call", "ls()"),
        ("tool_result", "a.txt"),
        ("prompt", "second"),
    ]
    assert records[1].locator == "line:5"  # the line that last wrote g1
    assert cursor.units == 3 == raw_count(path)


def test_jsonl_rewind_removes_target_and_later(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "session-b.jsonl",
        HEADER,
        msg("u1", "user", "keep me"),
        msg("g1", "gemini", "kept reply"),
        msg("u2", "user", "edited away"),
        msg("g2", "gemini", "gone too"),
        {"$rewindTo": "u2"},
        msg("u3", "user", "the retry"),
    )
    records, cursor, _ = parse(path)
    assert [r.text for r in records] == ["keep me", "kept reply", "the retry"]
    assert cursor.units == 3 == raw_count(path)


def test_jsonl_rewind_to_unknown_id_clears(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "session-c.jsonl",
        HEADER,
        msg("u1", "user", "before"),
        {"$rewindTo": "nope"},
        msg("u2", "user", "after"),
    )
    records, cursor, _ = parse(path)
    assert [r.text for r in records] == ["after"]
    assert cursor.units == 1 == raw_count(path)


def test_jsonl_set_updates_metadata_summary_and_title(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "session-d.jsonl",
        HEADER,
        msg("u1", "user", "hello"),
        {"$set": {"summary": "Greeting the model", "lastUpdated": "2026-11-03T09:05:00Z"}},
        {"$set": {"sessionId": "s-renamed"}},
    )
    records, cursor, _ = parse(path)
    assert kinds(records) == [("user", "prompt"), ("system", "summary")]
    assert {r.session_id for r in records} == {"s-renamed"}
    assert records[1].text == "Greeting the model"
    assert records[1].locator == "line:3"
    assert cursor.titles == {"s-renamed": "Greeting the model"}


def test_jsonl_set_messages_only_used_without_records(tmp_path: Path) -> None:
    masked = {"$set": {"messages": [msg("u1", "user", "masked view"), msg("x", "user", "synth")]}}
    path = write_jsonl(tmp_path / "session-e.jsonl", HEADER, msg("u1", "user", "real"), masked)
    records, _, _ = parse(path)
    assert [r.text for r in records] == ["real"]
    only = write_jsonl(
        tmp_path / "session-f.jsonl", {**HEADER, "messages": [msg("m", "user", "x")]}
    )
    records, cursor, _ = parse(only)
    assert [r.text for r in records] == ["x"]
    assert cursor.units == 1 == raw_count(only)


def test_system_types_and_unknown_types(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "session-g.jsonl",
        HEADER,
        msg("i", "info", "Logged in"),
        msg("e", "error", [{"text": "quota "}, {"text": "exceeded"}]),
        msg("w", "warning", "slow"),
        msg("z", "compression", "???"),
    )
    records, cursor, diagnostics = parse(path)
    assert [(r.role, r.text, r.extra["type"]) for r in records] == [
        ("system", "Logged in", "info"),
        ("system", "quota exceeded", "error"),
        ("system", "slow", "warning"),
    ]
    assert cursor.units == 3 == raw_count(path)
    assert any("compression" in d.message for d in diagnostics.items)


def test_jsonl_corrupt_lines_are_skipped_with_diagnostics(tmp_path: Path) -> None:
    path = tmp_path / "session-h.jsonl"
    path.write_bytes(
        json.dumps(HEADER).encode()
        + b"\n"
        + b"{not json\n"
        + b"[1, 2]\n"
        + json.dumps(msg("u1", "user", "caf\u00e9")).encode().replace(b"caf\\u00e9", b"caf\xe9")
        + b"\n"
        + b'{"id": "u2", "type": "user", "content": "trunc'  # truncated last line
    )
    records, cursor, diagnostics = parse(path)
    assert [r.text for r in records] == ["caf\ufffd"]
    messages = " | ".join(d.message for d in diagnostics.items)
    assert "not JSON" in messages and "not an object" in messages
    assert "incomplete last line" in messages and "invalid UTF-8" in messages
    assert cursor.units == 1 == raw_count(path)


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage", b"\xff\xfe\x00", b"[]", b'{"sessionId": "x"}', b'{"messages": 3}'],
)
def test_bad_json_chat_never_raises(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "session-bad.json"
    path.write_bytes(content)
    records, cursor, diagnostics = parse(path)
    assert records == [] and cursor.units == 0
    assert diagnostics.count >= 1
    assert raw_count(path) == 0


def test_directory_where_a_file_should_be(tmp_path: Path) -> None:
    for name, parser_id in [
        ("session-dir.jsonl", CHAT),
        ("session-dir.json", CHAT),
        ("logs.json", LOGS),
    ]:
        path = tmp_path / name
        path.mkdir()
        records, _, diagnostics = parse(path, parser_id)
        assert records == []
        assert "not a regular file" in diagnostics.items[0].message
        assert raw_count(path, parser_id) == 0


def test_logs_json_skips_non_prompts(tmp_path: Path) -> None:
    path = tmp_path / "logs.json"
    path.write_text(
        json.dumps(
            [
                {
                    "sessionId": "a",
                    "messageId": 0,
                    "timestamp": "2026-11-01T10:00:00Z",
                    "type": "user",
                    "message": "/help",
                },
                {"sessionId": "a", "messageId": 1, "type": "gemini", "message": "not a prompt"},
                {"sessionId": "b", "messageId": 0, "type": "user", "message": "   "},
                "junk",
                {"messageId": 2, "type": "user", "message": "no session id"},
            ]
        )
    )
    records, cursor, diagnostics = parse(path, LOGS)
    assert [(r.session_id, r.text) for r in records] == [("a", "/help"), ("logs", "no session id")]
    assert cursor.units == 2 == raw_count(path, LOGS)
    assert "3 entries" in diagnostics.items[0].message
    obj = tmp_path / "o" / "logs.json"
    obj.parent.mkdir()
    obj.write_text('{"a": 1}')
    assert parse(obj, LOGS)[0] == []


# --------------------------------------------------------------------------- project root


def _chat_in(gemini: Path, dirname: str) -> Path:
    return write_jsonl(
        gemini / "tmp" / dirname / "chats" / "session-x.jsonl", HEADER, msg("u1", "user", "hi")
    )


def test_project_root_marker(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    chat = _chat_in(gemini, "notes-api")
    (gemini / "tmp/notes-api/.project_root").write_text("/home/alex/src/notes-api\n")
    records, _, _ = parse(chat, root=gemini)
    assert records[0].cwd == "/home/alex/src/notes-api"
    logs = gemini / "tmp/notes-api/logs.json"
    logs.write_text(json.dumps([{"sessionId": "s", "type": "user", "message": "m"}]))
    assert parse(logs, LOGS, root=gemini)[0][0].cwd == "/home/alex/src/notes-api"


def test_project_root_from_registry_slug(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    chat = _chat_in(gemini, "shop-1")
    (gemini / "projects.json").write_text(
        json.dumps({"projects": {"/srv/shop": "shop-1", "/srv/other": "other"}})
    )
    assert parse(chat, root=gemini)[0][0].cwd == "/srv/shop"


def test_project_root_from_sha256_of_a_known_root(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    # Old-style hash dir; the same project got a slug dir (with marker) in a newer install.
    hashed = hashlib.sha256(b"/work/api").hexdigest()
    chat = _chat_in(gemini, hashed)
    (gemini / "tmp/api").mkdir(parents=True)
    (gemini / "tmp/api/.project_root").write_text("/work/api")
    assert parse(chat, root=gemini)[0][0].cwd == "/work/api"
    # The home directory itself is a known root.
    home_hash = hashlib.sha256(str(tmp_path).encode()).hexdigest()
    assert parse(_chat_in(gemini, home_hash), root=gemini)[0][0].cwd == str(tmp_path)
    # A hash nothing matches stays unresolved.
    unknown = hashlib.sha256(b"/nowhere").hexdigest()
    assert parse(_chat_in(gemini, unknown), root=gemini)[0][0].cwd is None


def test_project_root_from_session_directories(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    hashed = hashlib.sha256(b"/p/lib").hexdigest()
    chat = write_jsonl(
        gemini / "tmp" / hashed / "chats" / "session-d.jsonl",
        {**HEADER, "directories": ["/p/lib"]},
        msg("u", "user", "x"),
    )
    assert parse(chat, root=gemini)[0][0].cwd == "/p/lib"


def test_bad_marker_and_registry_do_not_raise(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    chat = _chat_in(gemini, "weird")
    (gemini / "tmp/weird/.project_root").write_bytes(b"\xff\xfe relative/path")
    (gemini / "projects.json").write_text("{broken")
    assert parse(chat, root=gemini)[0][0].cwd is None


def test_absurd_timestamps_do_not_hang(tmp_path: Path) -> None:
    # A 400-digit numeric string used to become float('inf') and loop forever.
    path = write_jsonl(
        tmp_path / "session-t.jsonl",
        HEADER,
        {**msg("u1", "user", "x"), "timestamp": "1" * 400},
    )
    records, _, _ = parse(path)
    assert [(r.text, r.timestamp) for r in records] == [("x", None)]


# --------------------------------------------------------------------------- properties

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ids = st.sampled_from(["m1", "m2", "m3", "m4"])
_message = st.builds(
    lambda mid, type_, text, thoughts, calls: {
        "id": mid,
        "type": type_,
        "content": text,
        **({"thoughts": [{"subject": "s", "description": "d"}]} if thoughts else {}),
        **({"toolCalls": [{"id": "c", "name": "ls", "args": {}}]} if calls else {}),
    },
    _ids,
    st.sampled_from(["user", "gemini", "info", "error", "warning", "other"]),
    st.sampled_from(["", "hello", [{"text": "part"}]]),
    st.booleans(),
    st.booleans(),
)
_line = st.one_of(
    _message,
    st.builds(lambda mid: {"$rewindTo": mid}, st.sampled_from(["m1", "m2", "m3", "m4", "zz"])),
    st.just({"$set": {"lastUpdated": "2026-11-03T10:00:00Z"}}),
    st.just({"$set": {"summary": "S"}}),
    st.builds(lambda msgs: {"$set": {"messages": msgs}}, st.lists(_message, max_size=2)),
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_line, max_size=12), with_header=st.booleans())
def test_replay_and_raw_count_agree(tmp_path: Path, lines: list[object], with_header: bool) -> None:
    """Parser units equal the independent count for any mix of upserts, rewinds and $set."""
    path = write_jsonl(tmp_path / "session-p.jsonl", *([HEADER] if with_header else []), *lines)
    records, cursor, _ = parse(path)
    assert cursor.units == raw_count(path)
    producing = {
        re.match(r"line:\d+|meta:/messages/\d+", r.locator).group()  # type: ignore[union-attr]
        for r in records
        if r.kind != "summary"
    }
    assert len(producing) == cursor.units  # one unit per message that produced records


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "id",
                        "type",
                        "content",
                        "$set",
                        "$rewindTo",
                        "messages",
                        "toolCalls",
                        "thoughts",
                        "sessionId",
                        "result",
                        "text",
                        "args",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=15,
    )
)
def test_arbitrary_json_never_raises(tmp_path: Path, data: object) -> None:
    for name, parser_id in [
        ("session-j.json", CHAT),
        ("session-j.jsonl", CHAT),
        ("logs.json", LOGS),
    ]:
        path = tmp_path / name
        path.write_text(json.dumps(data) + "\n" + json.dumps([data]) + "\n")
        parse(path, parser_id)
        raw_count(path, parser_id)


def test_line_rewritten_between_passes_is_skipped(tmp_path: Path) -> None:
    big = "x" * 20000  # past the reader's buffer, so the second pass really reads the disk
    path = write_jsonl(
        tmp_path / "session-r.jsonl",
        HEADER,
        msg("u1", "user", "one"),
        msg("p", "info", big),
        msg("u2", "user", "two"),
    )
    cursor, diagnostics = ParseCursor(), Diagnostics()
    ref = SourceRef(path, "gemini-cli", "gemini-cli.chats", None, 0.0, tmp_path)
    stream = get_parser(CHAT).parse(ref, cursor, diagnostics)
    first = next(stream)  # pass 1 is done; pass 2 has re-read line 2 only
    path.write_bytes(path.read_bytes().replace(b'"u2"', b'"zz"'))  # the agent rewrote it
    rest = [r.text for r in stream]
    assert (first.text, rest) == ("one", [big])
    assert [d.message for d in diagnostics.items] == ["changed while reading; skipped"]


def test_subagent_sessions_are_discovered_with_the_parent_project(home: Path) -> None:
    gemini = home / ".gemini"
    write_jsonl(
        gemini / "tmp/api/chats/session-2026-11-03T09-00-s1.jsonl",
        HEADER,
        msg("u1", "user", "delegate the search"),
    )
    write_jsonl(
        gemini / "tmp/api/chats/s-1/sub-9.jsonl",
        {**HEADER, "sessionId": "sub-9", "kind": "subagent", "directories": ["/w/api"]},
        msg("u1", "user", "find every caller"),
    )
    (gemini / "tmp/api/.project_root").write_text("/w/api")
    found = discover(home, agents=["gemini-cli"])
    records = [r for source in found.sources for r in parsers.run(source)]
    assert sorted((r.session_id, r.text, r.cwd) for r in records) == [
        ("s-1", "delegate the search", "/w/api"),
        ("sub-9", "find every caller", "/w/api"),
    ]


def test_migrated_json_chat_is_read_once(tmp_path: Path) -> None:
    legacy = tmp_path / "session-2026-11-01T10-00-abcd1234.json"
    legacy.write_text(json.dumps({**HEADER, "messages": [msg("u1", "user", "hi")]}))
    assert [r.text for r in parse(legacy)[0]] == ["hi"]
    # Resuming it makes the CLI copy it into "<name>.jsonl" and continue there.
    write_jsonl(Path(f"{legacy}l"), HEADER, msg("u1", "user", "hi"), msg("u2", "user", "more"))
    records, cursor, diagnostics = parse(legacy)
    assert records == [] and cursor.units == 0 == raw_count(legacy)
    assert "migrated to" in diagnostics.items[0].message
    assert [r.text for r in parse(Path(f"{legacy}l"))[0]] == ["hi", "more"]

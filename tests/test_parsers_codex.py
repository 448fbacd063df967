"""Codex parsers: corpus counts, injected context, user-once, eras, bad input, resume."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdex.parsers import get_parser
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.codex import (
    count_history,
    count_legacy,
    count_rollout,
    parse_history,
    parse_legacy,
    parse_rollout,
)
from agentdex.readers import Diagnostics
from agentdex.records import Record

SID = "019a0000-1111-7000-8000-000000000001"
ROLLOUT = f"rollout-2026-11-20T09-00-00-{SID}.jsonl"


def _ref(path: Path) -> SourceRef:
    return SourceRef(
        path=path, agent="codex", store="codex.sessions", host=None, mtime=0, root=path
    )


def _write(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def _parse(
    path: Path, cursor: ParseCursor | None = None, fn: Any = parse_rollout
) -> tuple[list[Record], ParseCursor, Diagnostics]:
    cursor = cursor or ParseCursor()
    diag = Diagnostics()
    return list(fn(_ref(path), cursor, diag)), cursor, diag


def _line(ltype: str, payload: dict[str, Any], ts: str = "2026-11-20T09:00:00Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": ltype, "payload": payload}


def _meta(sid: str = SID, **extra: Any) -> dict[str, Any]:
    payload = {"id": sid, "cwd": "/w/api", "git": {"branch": "main"}, **extra}
    return _line("session_meta", payload)


def _msg(role: str, text: str) -> dict[str, Any]:
    block = "output_text" if role == "assistant" else "input_text"
    payload = {"type": "message", "role": role, "content": [{"type": block, "text": text}]}
    return _line("response_item", payload)


def _event_user(text: str) -> dict[str, Any]:
    return _line("event_msg", {"type": "user_message", "message": text, "images": []})


def _kinds(records: list[Record]) -> list[tuple[str, str, str]]:
    return [(r.role, r.kind, r.text) for r in records]


# ----------------------------------------------------------------------------- corpus

AGREP = "agrep-fixtures/codex/home/.codex/sessions/2026/01/02/"

#: Per rollout: MANIFEST counts (response_item message user, message assistant, event
#: user_message; for §5 rows the "role but no type" counts), then what the parser must
#: give after its rules: (typed prompts, other user-role records, system records,
#: assistant messages). Differences are explained per row.
MANIFEST_ROLLOUTS: dict[str, tuple[tuple[int, int, int], tuple[int, int, int, int]]] = {
    # §5 agentgrep codex.sessions sample: role-without-type user=1, assistant=1
    "agentgrep-samples/codex/codex.sessions/rollout-2026-05-17T12-00-00-example.jsonl": (
        (1, 1, 0), (1, 0, 0, 1),
    ),
    # §5 docs/codex-session.jsonl: role-without-type user=1, assistant=1
    "agentgrep-samples/docs/codex-session.jsonl": ((1, 1, 0), (1, 0, 0, 1)),
    # §6 22222222: msg user=3 (1 is <environment_context>), assistant=2, event user_message=2
    # (twins of the 2 typed messages: counted once)
    AGREP + "rollout-2026-01-02T10-00-00-22222222-2222-4222-8222-222222222222.jsonl": (
        (3, 2, 2), (2, 0, 1, 2),
    ),
    # §6 33333333 (subagent): msg user=1, assistant=3; 1 user + 1 assistant are the copied
    # parent history after the parent's session_meta; 2 agent_message items are user/message
    AGREP + "rollout-2026-01-02T11-00-00-33333333-3333-4333-8333-333333333333.jsonl": (
        (1, 3, 0), (0, 2, 0, 2),
    ),
    # §6 01990003 (subagent): msg user=3 (1 copied parent), assistant=2; subagent users are
    # user/message
    AGREP + "rollout-2026-01-02T12-00-00-01990003-0003-7000-8000-000000000003.jsonl": (
        (3, 2, 0), (0, 2, 0, 2),
    ),
    # §6 01990001: msg user=2 (1 is "# AGENTS.md instructions"), assistant=1
    AGREP + "rollout-2026-01-02T13-00-00-01990001-0002-7000-8000-000000000002.jsonl": (
        (2, 1, 0), (0, 1, 1, 1),
    ),
    # §6 01990002: msg user=2 (<environment_context> + <codex_delegation>), assistant=1
    AGREP + "rollout-2026-01-02T14-00-00-01990002-0002-7000-8000-000000000002.jsonl": (
        (2, 1, 0), (0, 1, 1, 1),
    ),
    # §6 01990005 (guardian subagent): msg user=1, assistant=1
    AGREP + "rollout-2026-01-02T15-00-00-01990005-0001-7000-8000-000000000001.jsonl": (
        (1, 1, 0), (0, 1, 0, 1),
    ),
    # §6 44444444: msg user=1, all of it copied history after a second session_meta
    AGREP + "rollout-2026-01-02T16-00-00-44444444-4444-4444-8444-444444444444.jsonl": (
        (1, 0, 0), (0, 0, 0, 0),
    ),
}  # fmt: skip


def _raw_counts(path: Path) -> tuple[int, int, int]:
    """The MANIFEST's own definition, recomputed here to pin the table to the file."""
    counts: Counter[str] = Counter()
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        payload = line["payload"]
        if line["type"] == "response_item" and payload.get("type", "message") == "message":
            counts[payload["role"]] += 1
        if line["type"] == "event_msg" and payload.get("type") == "user_message":
            counts["event"] += 1
    return counts["user"], counts["assistant"], counts["event"]


@pytest.mark.parametrize("relpath", sorted(MANIFEST_ROLLOUTS))
def test_corpus_rollouts_match_manifest(corpus: Path, relpath: str) -> None:
    path = corpus / relpath
    manifest, expected = MANIFEST_ROLLOUTS[relpath]
    assert _raw_counts(path) == manifest
    records, cursor, diag = _parse(path)
    prompts = sum(r.kind == "prompt" for r in records)
    other_user = sum(r.role == "user" and r.kind != "prompt" for r in records)
    system = sum(r.role == "system" for r in records)
    assistant = sum(r.role == "assistant" and r.kind == "message" for r in records)
    assert (prompts, other_user, system, assistant) == expected
    assert cursor.units == len(records) == count_rollout(path)
    assert diag.count == 0
    # typed text is never duplicated
    typed = [r.text for r in records if r.role == "user"]
    assert len(typed) == len(set(typed))
    assert not any("must not" in r.text or "replayed parent" in r.text for r in records)


def test_corpus_rollout_metadata(corpus: Path) -> None:
    path = (
        corpus / "agentgrep-samples/codex/codex.sessions/rollout-2026-05-17T12-00-00-example.jsonl"
    )
    records, _, _ = _parse(path)
    assert {(r.session_id, r.cwd, r.branch, r.model) for r in records} == {
        ("00000000-0000-0000-0000-000000000100", "/work/example", "main", "o4-mini")
    }
    assert records[0].timestamp is not None  # from payload.timestamp when the line has none


@pytest.mark.parametrize(
    "relpath, lines",
    [
        ("agentgrep-samples/codex/codex.history/example.jsonl", 3),  # §5: JSONL, 3 lines
        ("agentgrep-samples/docs/codex-history.jsonl", 2),  # §5: JSONL, 2 lines
    ],
)
def test_corpus_history(corpus: Path, relpath: str, lines: int) -> None:
    records, cursor, _ = _parse(corpus / relpath, fn=parse_history)
    assert len(records) == cursor.units == count_history(corpus / relpath) == lines
    assert all(r.kind == "prompt" and r.timestamp for r in records)


# ----------------------------------------------------------------------------- rules


def test_injected_context_is_not_a_prompt(tmp_path: Path) -> None:
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _msg("developer", "<permissions instructions>sandboxed</permissions instructions>"),
            _msg("user", "# AGENTS.md instructions for /w/api\n\n<INSTRUCTIONS>be tidy"),
            _msg("user", "<environment_context>\n  <cwd>/w/api</cwd>\n</environment_context>"),
            _msg("user", "<user_instructions>always test</user_instructions>"),
            _msg("user", "add a migration"),
            _event_user("add a migration"),
            _msg("assistant", "Done."),
        ],
    )
    records, cursor, _ = _parse(path)
    assert [(r.role, r.kind) for r in records] == [
        ("system", "message"),
        ("system", "message"),
        ("system", "message"),
        ("system", "message"),
        ("user", "prompt"),
        ("assistant", "message"),
    ]
    assert [r.extra.get("injected") for r in records[1:4]] == [True, True, True]
    assert cursor.units == count_rollout(path) == 6


def test_user_text_counted_once_in_either_order_and_repeats_survive(tmp_path: Path) -> None:
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _msg("user", "continue"),
            _event_user("continue"),
            _msg("assistant", "ok"),
            _event_user("continue"),  # typed again; this time the event comes first
            _msg("user", "continue"),
            _msg("assistant", "ok"),
            _event_user("only logged as an event"),
            _msg("assistant", "ok"),
            _msg("user", "  spaced\ntext "),
            _event_user("spaced text"),
        ],
    )
    records, cursor, _ = _parse(path)
    assert [(r.locator, r.text) for r in _prompts(records)] == [
        ("line:2", "continue"),
        ("line:5", "continue"),
        ("line:8", "only logged as an event"),
        ("line:10", "  spaced\ntext "),
    ]
    assert [r.extra.get("from_event", False) for r in _prompts(records)] == [
        False,
        True,
        True,
        False,
    ]
    assert cursor.units == count_rollout(path) == 7


def _prompts(records: list[Record]) -> list[Record]:
    return [r for r in records if r.kind == "prompt"]


def test_ide_wrapper_and_redacted_twins_pair_by_position(tmp_path: Path) -> None:
    """The IDE's context is not the prompt, and a twin that differs (the event lacks the
    wrapper, one side is redacted) is still the same typed text, counted once."""
    ide = (
        "# Context from my IDE setup:\n\n## Active file: src/pay.ts\n\n## Open tabs:\n"
        "- pay.ts: src/pay.ts\n\n## My request for Codex:\nadd retry to charge\n"
        '<image name=[Image #1] path="/tmp/shot.png">\n</image>'
    )
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _msg("user", "<environment_context>\n  <cwd>/w/api</cwd>\n</environment_context>"),
            _msg("user", ide),
            _event_user("add retry to charge"),
            _msg("assistant", "Adding retry."),
            _msg("user", "make the cap configurable"),
            _event_user("[redacted]"),
            _line("response_item", {"type": "function_call", "name": "shell", "arguments": "{}"}),
            _event_user("# Files mentioned by the user:\n\n## spec.txt: /tmp/spec.txt\n"),
            _event_user("# Files mentioned by the user:\n\n## My request:\nread the spec"),
            _msg("user", "read   the spec"),
            _msg("assistant", "Read it."),
        ],
    )
    records, cursor, _ = _parse(path)
    assert [(r.locator, r.role, r.kind, r.text) for r in records if r.role != "system"] == [
        ("line:3", "user", "prompt", "add retry to charge"),
        ("line:5", "assistant", "message", "Adding retry."),
        ("line:6", "user", "prompt", "make the cap configurable"),
        ("line:8", "assistant", "tool_call", "shell {}"),
        ("line:10", "user", "prompt", "read the spec"),
        ("line:12", "assistant", "message", "Read it."),
    ]
    context = [r for r in records if r.extra.get("ide_context")]
    assert [(r.locator, r.role, r.kind) for r in context] == [
        ("line:3#1", "system", "message"),
        ("line:9", "system", "message"),  # a wrapper with no request: context only
        ("line:10#1", "system", "message"),
    ]
    assert context[0].text.startswith("# Context from my IDE setup:")
    assert "<image name=[Image #1]" in context[0].text
    assert cursor.units == count_rollout(path) == 8
    count_roles = get_parser("codex.rollout_jsonl.v1").count_roles
    assert count_roles is not None
    assert count_roles(path) == {SID: {"prompts": 3, "replies": 2}}


def test_structure_decides_what_was_typed_once_a_rollout_has_user_events(tmp_path: Path) -> None:
    """Codex writes a user event for each typed text (its own titles read only those): a
    user item no event of its turn vouches for is context Codex added, whatever its text."""
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _msg("developer", "<permissions instructions>sandboxed</permissions instructions>"),
            _msg("user", "[REDACTED]"),  # the AGENTS.md block, redacted by whoever shared it
            _msg("user", "<skill>\n<name>deploy</name>\nRun make deploy.\n</skill>"),
            _line("turn_context", {"cwd": "/w/api", "model": "m1"}),
            _msg("user", "ship the fix"),
            _event_user("ship the fix"),
            _msg("user", "The hook says: the tests are red."),  # a hook's added context
            _line("event_msg", {"type": "token_count", "info": None}),
            _msg("assistant", "Shipping."),
            _msg("user", "Here is what changed in the environment: cwd /w/api/b"),
            _msg("user", "<image name=[Image #1]>\n</image>\nwhy is this red?"),
            _event_user("why is this red?"),
            _msg("assistant", "A failing test."),
        ],
    )
    records, cursor, _ = _parse(path)
    assert [(r.locator, r.text) for r in _prompts(records)] == [
        ("line:6", "ship the fix"),
        ("line:12", "<image name=[Image #1]>\n</image>\nwhy is this red?"),
    ]
    context = [r for r in records if r.extra.get("no_event")]
    assert [(r.locator, r.role, r.kind) for r in context] == [
        ("line:3", "system", "message"),
        ("line:4", "system", "message"),
        ("line:8", "system", "message"),
        ("line:11", "system", "message"),
    ]
    assert [r.locator for r in records] == sorted(
        (r.locator for r in records), key=lambda loc: int(loc.split(":")[1])
    )  # decided at the turn's end, still given in line order
    assert cursor.units == count_rollout(path) == 9
    count_roles = get_parser("codex.rollout_jsonl.v1").count_roles
    assert count_roles is not None
    assert count_roles(path) == {SID: {"prompts": 2, "replies": 2}}


def test_before_any_user_event_the_text_rules_decide(tmp_path: Path) -> None:
    """A rollout (or its older part) without user events: every user item not known as
    injected is typed; from the first event on, items need a twin."""
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _msg("user", "<environment_context>x</environment_context>"),
            _msg("user", "old era prompt"),
            _msg("assistant", "ok"),
            _msg("user", "[redacted context]"),
            _msg("user", "new era prompt"),
            _event_user("new era prompt"),
            _msg("assistant", "ok"),
        ],
    )
    records, cursor, _ = _parse(path)
    assert [r.text for r in _prompts(records)] == ["old era prompt", "new era prompt"]
    assert [r.locator for r in records if r.extra.get("no_event")] == ["line:5"]
    assert cursor.units == count_rollout(path) == 6
    count_roles = get_parser("codex.rollout_jsonl.v1").count_roles
    assert count_roles is not None
    assert count_roles(path) == {SID: {"prompts": 2, "replies": 2}}


def test_a_turn_holds_a_bounded_number_of_texts(tmp_path: Path) -> None:
    """Memory stays flat: a turn of endless user texts is decided every HELD_MAX of them."""
    from agentdex.parsers.codex._items import HELD_MAX

    lines: list[Any] = [_meta(), _event_user("go")]
    lines += [_msg("user", f"note {n}") for n in range(HELD_MAX * 2 + 3)]
    path = _write(tmp_path / ROLLOUT, lines)
    records, cursor, _ = _parse(path)
    assert cursor.units == count_rollout(path) == len(records) == HELD_MAX * 2 + 3
    assert [r.text for r in _prompts(records)] == ["go"]
    assert cursor.resume_offset < path.stat().st_size  # the last, undecided texts: re-read


def test_item_completed_and_echo_events(tmp_path: Path) -> None:
    item = {"type": "UserMessage", "content": [{"type": "text", "text": "from the app"}]}
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _line("event_msg", {"type": "item_completed", "item": item}),
            _msg("user", "from the app"),
            _line("event_msg", {"type": "agent_message", "message": "echo"}),
            _line("event_msg", {"type": "agent_reasoning", "text": "echo"}),
            _line("event_msg", {"type": "token_count", "info": None}),
        ],
    )
    records, cursor, _ = _parse(path)
    assert [(r.locator, r.kind, r.text) for r in records] == [("line:2", "prompt", "from the app")]
    assert cursor.units == count_rollout(path) == 1


def test_tool_calls_reasoning_and_compaction(tmp_path: Path) -> None:
    reasoning = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "**Planning** the change"}],
        "encrypted_content": "opaque",
    }
    path = _write(
        tmp_path / ROLLOUT,
        [
            _meta(),
            _line("turn_context", {"cwd": "/w/api/sub", "model": "gpt-test"}),
            _line("response_item", reasoning),
            _line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"}),
            _line(
                "response_item",
                {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}',
                 "call_id": "c1"},
            ),
            _line(
                "response_item",
                {"type": "function_call_output", "call_id": "c1",
                 "output": '{"output":"a.py\\n","metadata":{"exit_code":0}}'},
            ),
            _line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                    "input": "*** Begin Patch", "call_id": "c2"}),
            _line("response_item", {"type": "custom_tool_call_output", "call_id": "c2",
                                    "output": "Success"}),
            _line("response_item", {"type": "local_shell_call", "call_id": "c3",
                                    "action": {"type": "exec", "command": ["git", "status"]}}),
            _line("response_item", {"type": "web_search_call",
                                    "action": {"type": "search", "query": "sqlite alter"}}),
            _line("response_item", {"type": "ghost_snapshot", "ghost_commit": {}}),
            _line("compacted", {"message": "Earlier: planned the migration"}),
            _line("brand_new_type", {"x": 1}),
        ],
    )  # fmt: skip
    records, cursor, diag = _parse(path)
    assert _kinds(records) == [
        ("assistant", "reasoning", "**Planning** the change"),
        ("assistant", "tool_call", 'shell {"command":["ls"]}'),
        ("tool", "tool_result", "a.py\n"),
        ("assistant", "tool_call", "apply_patch *** Begin Patch"),
        ("tool", "tool_result", "Success"),
        ("assistant", "tool_call", "shell git status"),
        ("assistant", "tool_call", "web_search sqlite alter"),
        ("system", "summary", "Earlier: planned the migration"),
    ]
    assert {(r.cwd, r.model, r.branch) for r in records} == {("/w/api/sub", "gpt-test", "main")}
    assert records[1].extra == {"call_id": "c1"}
    assert cursor.units == count_rollout(path) == 8 and diag.count == 0


def test_early_unwrapped_era_and_session_from_file_name(tmp_path: Path) -> None:
    path = _write(
        tmp_path / ROLLOUT,
        [
            {"id": SID, "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "hello"}]},
        ],
    )  # fmt: skip
    records, cursor, _ = _parse(path)
    assert [(r.session_id, r.kind, r.text) for r in records] == [
        (SID, "prompt", "hi"),
        (SID, "message", "hello"),
    ]
    assert cursor.units == count_rollout(path) == 2
    # no session_meta at all: the uuid in the file name
    bare = _write(tmp_path / "b" / ROLLOUT, [_msg("user", "x")])
    assert _parse(bare)[0][0].session_id == SID


def test_legacy_json_rollout(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2025-04-01-legacy.json"
    doc = {
        "session": {"id": "legacy-1", "timestamp": "2025-04-01T10:00:00Z", "model": "o3"},
        "items": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "a"}]},
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "1"},
            "junk",
            {"type": "message", "role": "user", "content": []},
        ],
    }  # fmt: skip
    path.write_text(json.dumps(doc))
    records, cursor, _ = _parse(path, fn=parse_legacy)
    assert [(r.locator, r.kind, r.model, r.session_id) for r in records] == [
        ("json:/items/0", "prompt", "o3", "legacy-1"),
        ("json:/items/1", "message", "o3", "legacy-1"),
        ("json:/items/2", "tool_call", "o3", "legacy-1"),
    ]
    assert records[0].timestamp is not None and records[0].offset == -1
    assert cursor.units == count_legacy(path) == 3
    for broken in ("{not json", "[1, 2]", ""):
        path.write_text(broken)
        records, cursor, diag = _parse(path, fn=parse_legacy)
        assert records == [] and cursor.units == 0 and count_legacy(path) == 0
        assert diag.count == 1


# ----------------------------------------------------------------------------- bad input


def test_bad_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / ROLLOUT
    path.write_bytes(
        b"\n".join(
            [
                json.dumps(_meta()).encode(),
                b"\x00\x01 binary \xff",
                b"not json at all",
                b'"a string"',
                json.dumps(_line("response_item", "payload is a string")).encode(),  # type: ignore[arg-type]
                json.dumps(_msg("user", "caf\u00e9")).encode().replace(b"\\u00e9", b"\xe9"),
                json.dumps(_msg("assistant", "kept")).encode(),
                b'{"timestamp":"2026-11-20T09:00:00Z","type":"response_item","payl',
            ]
        )
    )
    records, cursor, diag = _parse(path)
    assert [r.text for r in records] == ["caf\ufffd", "kept"]
    assert [d.locator for d in diag.items if "line" in d.locator] == [
        "line:2", "line:3", "line:4", "line:5", "line:8"
    ]  # fmt: skip
    assert "payload is not an object" in diag.items[3].message
    assert any("invalid UTF-8" in d.message for d in diag.items)
    assert "incomplete" in diag.items[-1].message
    assert cursor.units == count_rollout(path) == 2


def test_fifty_megabyte_line_and_unreadable_paths(tmp_path: Path) -> None:
    path = _write(
        tmp_path / ROLLOUT,
        [_meta(), json.dumps(_msg("user", "y" * (50 * 1024 * 1024))), _msg("user", "after")],
    )
    records, _, diag = _parse(path)
    assert [r.text for r in records] == ["after"] and "too long" in diag.items[0].message
    directory = tmp_path / "d.jsonl"
    directory.mkdir()
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere")
    secret = tmp_path / "auth.json"
    secret.write_text('{"items": []}')
    for bad in (directory, dangling, secret):
        for fn in (parse_rollout, parse_history, parse_legacy):
            records, cursor, diag = _parse(bad, fn=fn)
            assert records == [] and cursor.units == 0 and diag.count == 1
        assert count_rollout(bad) == count_history(bad) == count_legacy(bad) == 0


# ----------------------------------------------------------------------------- resume


def _session() -> list[Any]:
    return [
        _meta(),
        _line("turn_context", {"cwd": "/w/api", "model": "m1"}),
        _msg("user", "<environment_context>x</environment_context>"),
        _msg("user", "first"),
        _event_user("first"),
        _msg("assistant", "ok"),
        _line("turn_context", {"cwd": "/w/api/b", "model": "m2"}),
        _msg("user", "second"),
        _event_user("second"),
        _line("response_item", {"type": "function_call", "name": "f", "arguments": "{}"}),
        _meta("parent-thread"),
        _msg("user", "copied from the parent"),
        _line("turn_context", {"cwd": "/w/api/c", "model": "m3"}),
        _msg("assistant", "done"),
    ]


def _kept(first: list[Record], cursor: ParseCursor) -> list[Record]:
    """What the index keeps of a parse before resuming: records before the resume point."""
    return [r for r in first if r.offset is None or r.offset < cursor.resume_offset]


@pytest.mark.parametrize("cut", [1, 4, 8, 11, 12])
def test_resume_gives_the_same_records_as_a_full_parse(tmp_path: Path, cut: int) -> None:
    lines = _session()
    full, full_cursor, _ = _parse(_write(tmp_path / "full" / ROLLOUT, lines))
    path = _write(tmp_path / "grow" / ROLLOUT, lines[:cut])
    first, cursor, _ = _parse(path)
    with open(path, "a") as handle:
        handle.write("\n".join(json.dumps(line) for line in lines[cut:]) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    second, resumed, _ = _parse(path, resumed)
    first = _kept(first, cursor)
    strip = [(r.to_json() | {"source_path": ""}, r.offset, r.extra) for r in first + second]
    assert strip == [(r.to_json() | {"source_path": ""}, r.offset, r.extra) for r in full]
    assert [r.text for r in full] == [
        "<environment_context>x</environment_context>",
        "first",
        "ok",
        "second",
        "f {}",
        "done",
    ]
    assert resumed.units == full_cursor.units == count_rollout(path) == 6


def test_history_resume(tmp_path: Path) -> None:
    path = _write(tmp_path / "history.jsonl", [{"session_id": SID, "ts": 1795000000, "text": "a"}])
    _, cursor, _ = _parse(path, fn=parse_history)
    with open(path, "a") as handle:
        handle.write(json.dumps({"session_id": SID, "ts": 1795000060, "text": "b"}) + "\n")
        handle.write(json.dumps({"session_id": SID, "ts": 1795000061, "text": ""}) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    records, resumed, _ = _parse(path, resumed, fn=parse_history)
    assert [(r.text, r.locator, r.timestamp) for r in records] == [
        ("b", "history.jsonl:line:2", 1795000060.0)
    ]
    assert resumed.units == count_history(path) == 2


def test_registry_resolves_codex_parsers() -> None:
    assert get_parser("codex.rollout_jsonl.v1").parse is parse_rollout
    assert get_parser("codex.rollout_json.v1").resumable is False
    assert get_parser("codex.history_jsonl.v1").count_raw is count_history


def test_sample_home_template_parses_cleanly() -> None:
    template = Path(__file__).resolve().parent.parent / "examples" / "home-template" / ".codex"
    (rollout,) = template.glob("sessions/2026/11/20/rollout-*.jsonl")
    records, cursor, diag = _parse(rollout)
    assert diag.count == 0 and cursor.units == count_rollout(rollout) == len(records)
    prompts = [r.text for r in records if r.kind == "prompt"]
    assert len(prompts) == 2 and all("<" not in text for text in prompts)
    assert [r.role for r in records[:2]] == ["system", "system"]  # permissions + environment
    assert {(r.cwd, r.branch) for r in records} == {("__HOME__/src/notes-api", "main")}
    assert all(r.timestamp and r.session_id == records[0].session_id for r in records)
    history, _, _ = _parse(template / "history.jsonl", fn=parse_history)
    assert [r.text for r in history] == prompts


# ----------------------------------------------------------------------------- properties

_TEXT = st.sampled_from(
    [
        "",
        " ",
        "go",
        "go ",
        "again",
        "<environment_context>e</environment_context>",
        "# Context from my IDE setup:\n## Open tabs:\n- a.py\n\n## My request for Codex:\ngo",
        "# Files mentioned by the user:\n## a.png: /a.png",
    ]
)
_PAYLOAD = st.one_of(
    st.builds(
        lambda role, text: {"type": "message", "role": role,
                            "content": [{"type": "input_text", "text": text}]},
        st.sampled_from(["user", "assistant", "developer", "other"]), _TEXT,
    ),
    st.builds(lambda text: {"role": "user", "content": [{"text": text}]}, _TEXT),
    st.builds(lambda text: {"type": "reasoning", "summary": [{"text": text}]}, _TEXT),
    st.just({"type": "function_call", "name": "f", "arguments": "{}"}),
    st.just({"type": "function_call_output", "output": "o"}),
    st.just({"type": "unknown_item"}),
)  # fmt: skip
_EVENT = st.one_of(
    st.builds(lambda text: {"type": "user_message", "message": text}, _TEXT),
    st.builds(
        lambda text: {"type": "item_completed",
                      "item": {"type": "UserMessage", "content": [{"text": text}]}},
        _TEXT,
    ),
    st.just({"type": "agent_message", "message": "echo"}),
)  # fmt: skip
_CODEX_LINE = st.one_of(
    st.builds(lambda p: _line("response_item", p), _PAYLOAD),
    st.builds(lambda p: _line("event_msg", p), _EVENT),
    st.builds(
        lambda i: _line("session_meta", {"id": i} if i else {}), st.sampled_from([SID, "p", ""])
    ),
    st.builds(lambda m: _line("turn_context", {"model": m}), st.sampled_from(["m1", "m2"])),
    st.builds(lambda t: _line("compacted", {"message": t}), _TEXT),
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(_CODEX_LINE, max_size=14), cut=st.integers(min_value=1, max_value=14))
def test_units_always_equal_the_independent_raw_count(
    tmp_path_factory: pytest.TempPathFactory, lines: list[Any], cut: int
) -> None:
    folder = tmp_path_factory.mktemp("prop")
    path = _write(folder / ROLLOUT, lines)
    full, cursor, _ = _parse(path)
    assert cursor.units == count_rollout(path) == len({r.offset for r in full})
    assert len({r.locator for r in full}) == len(full)  # each record reopens exactly
    roles: dict[str, dict[str, int]] = {}
    for record in full:
        entry = roles.setdefault(record.session_id, {"prompts": 0, "replies": 0})
        entry["prompts"] += record.kind == "prompt"
        entry["replies"] += (record.role, record.kind) == ("assistant", "message")
    count_roles = get_parser("codex.rollout_jsonl.v1").count_roles
    assert count_roles is not None
    counted = count_roles(path)
    assert {s: c for s, c in roles.items() if any(c.values())} == {
        s: c for s, c in counted.items() if any(c.values())
    }
    grow = _write(folder / "grow" / ROLLOUT, lines[:cut])
    first, partial, _ = _parse(grow)
    with open(grow, "a") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines[cut:]))
    resumed = ParseCursor(
        offset=partial.resume_offset, line=partial.resume_line, state=partial.state
    )
    second, resumed, _ = _parse(grow, resumed)
    first = _kept(first, partial)
    assert [(r.locator, r.text, r.kind, r.model, r.session_id) for r in first + second] == [
        (r.locator, r.text, r.kind, r.model, r.session_id) for r in full
    ]
    assert resumed.units == cursor.units


def test_discovery_and_pipeline_reach_these_parsers(home: Path) -> None:
    from agentdex.discovery import discover
    from agentdex.parsers import run

    codex = home / ".codex"
    _write(codex / "sessions" / "2026" / "11" / "20" / ROLLOUT, [_meta(), _msg("user", "a")])
    _write(codex / "archived_sessions" / ROLLOUT, [_meta(), _msg("assistant", "b")])
    (codex / "sessions" / "rollout-2025-04-01-legacy.json").write_text(
        json.dumps({"session": {"id": "L"}, "items": [{"role": "user", "content": "c"}]})
    )
    _write(codex / "history.jsonl", [{"session_id": SID, "ts": 1795000000, "text": "a"}])
    (codex / "auth.json").write_text("{}")
    found = discover(home, agents=["codex"])
    texts = {source.store: [r.text for r in run(source)] for source in found.sources}
    assert texts == {
        "codex.sessions": ["a"],
        "codex.archived_sessions": ["b"],
        "codex.legacy_sessions": ["c"],
        "codex.history": ["a"],
    }

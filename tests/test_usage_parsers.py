"""Token usage as the parsers read it: Claude Code per message id, Codex per rise of the total.

Real files where there are some (``shared/corpus``: five Claude Code sessions),
checked against an independent reading; the rules' edge cases on small files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.claude_code import parse_transcript
from agentdex.parsers.codex import parse_rollout
from agentdex.readers import Diagnostics
from agentdex.records import Usage


def _ref(path: Path, agent: str) -> SourceRef:
    return SourceRef(path=path, agent=agent, store="s", host=None, mtime=0, root=path.parent)


def _write(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text, encoding="utf-8")
    return path


def _usage(
    path: Path, agent: str, cursor: ParseCursor | None = None
) -> tuple[list[Usage], ParseCursor, Diagnostics]:
    cursor = cursor or ParseCursor()
    diag = Diagnostics()
    parse = parse_transcript if agent == "claude-code" else parse_rollout
    for _ in parse(_ref(path, agent), cursor, diag):
        pass
    return cursor.usage, cursor, diag


# -- Claude Code -------------------------------------------------------------------------------


def _assistant(mid: str, usage: Any, ts: str, *, model: str = "claude-opus-4-6", **kw: Any) -> Any:
    message = {"id": mid, "role": "assistant", "model": model, "usage": usage}
    message["content"] = kw.pop("content", [{"type": "text", "text": f"part of {mid}"}])
    return {"type": "assistant", "sessionId": "s1", "cwd": "/w", "timestamp": ts,
            "message": message, **kw}  # fmt: skip


def _u(inp: int, out: Any, read: int = 0, write: int = 0, **extra: Any) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write, **extra}  # fmt: skip


def _independent_claude(path: Path) -> dict[str, tuple[int, ...]]:
    """Per message id, the last line's counts (a reading written apart from the parser)."""
    last: dict[str, tuple[int, ...]] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(raw)
        message = obj.get("message") or {}
        if obj.get("type") != "assistant" or message.get("model") == "<synthetic>":
            continue
        u = message["usage"]
        one_hour = (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
        last[message["id"]] = (
            u["input_tokens"],
            u.get("cache_read_input_tokens", 0),
            u.get("cache_creation_input_tokens", 0),
            u["output_tokens"],
            0,
            one_hour,
        )
    return last


def test_claude_corpus_one_usage_per_message_with_its_last_counts(corpus: Path) -> None:
    files = sorted((corpus / "claude-code" / "projects").glob("*/*.jsonl"))
    assert len(files) == 5
    for path in files:
        usage, cursor, diag = _usage(path, "claude-code")
        expected = _independent_claude(path)
        assert {u.call_id: u.counts() for u in usage} == expected, path.name
        assert len(usage) == len(expected)  # one per message id
        assert cursor.usage_skipped == 0 and diag.count == 0
        # lines of one message repeat input and cache; the kept one is the largest output
        assert all(u.total_tokens > 0 and u.timestamp for u in usage)


def test_claude_last_line_of_a_message_wins_and_its_first_line_times_it(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s1.jsonl",
        [
            _assistant("m1", _u(4, 3, read=100, write=50), "2026-01-01T10:00:00Z"),
            _assistant("m1", _u(4, 136, read=100, write=50), "2026-01-01T10:00:02Z",
                       content=[{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]),
            _assistant("m2", _u(7, 9), "2026-01-01T10:01:00Z"),
            _assistant("m3", _u(0, 0), "2026-01-01T10:02:00Z", model="<synthetic>"),
        ],
    )  # fmt: skip
    usage, cursor, diag = _usage(path, "claude-code")
    assert [(u.call_id, u.output_tokens) for u in usage] == [("m1", 136), ("m2", 9)]
    first = usage[0]
    assert (first.input_tokens, first.cache_read_tokens, first.cache_write_tokens) == (4, 100, 50)
    assert first.total_tokens == 4 + 100 + 50 + 136
    assert first.timestamp == 1767261600.0 and first.locator == "line:2"
    assert first.session_id == "s1" and first.cwd == "/w" and first.model == "claude-opus-4-6"
    assert cursor.usage_skipped == 0 and diag.count == 0


def test_claude_one_hour_cache_writes_are_a_part_of_cache_writes(tmp_path: Path) -> None:
    split = {"ephemeral_1h_input_tokens": 30, "ephemeral_5m_input_tokens": 20}
    path = _write(
        tmp_path / "s1.jsonl",
        [_assistant("m1", _u(1, 2, write=50, cache_creation=split), "2026-01-01T10:00:00Z")],
    )
    (usage,), _, _ = _usage(path, "claude-code")
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (50, 30)


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (_u(5, -1), "output_tokens is negative"),
        (_u(5, "12"), "output_tokens is not a number"),
        (_u(5, 1.5), "output_tokens is not a whole number"),
        ({"input_tokens": 5}, "output_tokens is missing"),
        (_u(5, 20_000_000), "output_tokens is absurd"),
        (_u(5, 1, read=10_000_001), "cache_read_input_tokens is absurd"),
        ("lots", "usage is not an object"),
    ],
)
def test_claude_bad_counts_are_skipped_and_counted(tmp_path: Path, bad: Any, why: str) -> None:
    path = _write(
        tmp_path / "s1.jsonl",
        [
            _assistant("m1", _u(1, 2), "2026-01-01T10:00:00Z"),
            _assistant("m2", bad, "2026-01-01T10:01:00Z"),
        ],
    )
    usage, cursor, diag = _usage(path, "claude-code")
    assert [u.call_id for u in usage] == ["m1"]
    assert cursor.usage_skipped == 1
    assert diag.count == 1 and why in diag.items[0].message and diag.items[0].locator == "line:2"


def test_claude_resume_reads_the_rest_of_a_message_written_across_two_runs(
    tmp_path: Path,
) -> None:
    first = _assistant("m1", _u(4, 3), "2026-01-01T10:00:00Z")
    path = _write(tmp_path / "s1.jsonl", [first])
    usage, cursor, _ = _usage(path, "claude-code")
    assert [u.output_tokens for u in usage] == [3]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(_assistant("m1", _u(4, 136), "2026-01-01T10:00:02Z")) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    usage, _, _ = _usage(path, "claude-code", resumed)
    # this run's write of m1 (the index keeps the file's latest write of a call)
    assert [(u.call_id, u.output_tokens, u.locator) for u in usage] == [("m1", 136, "line:2")]


# -- Codex ---------------------------------------------------------------------------------------


def _line(ltype: str, payload: Any, ts: str = "2026-11-20T09:00:00Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": ltype, "payload": payload}


def _tc(total: tuple[int, ...] | None, last: tuple[int, ...] | None = None, ts: str = "") -> Any:
    def counts(v: tuple[int, ...]) -> dict[str, int]:
        names = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
        d = dict(zip(names, v, strict=True))
        d["total_tokens"] = v[0] + v[2]
        return d

    info = None if total is None else {"total_token_usage": counts(total)}
    if info is not None and last is not None:
        info["last_token_usage"] = counts(last)
    return _line("event_msg", {"type": "token_count", "info": info}, ts or "2026-11-20T09:01:00Z")


META = _line("session_meta", {"id": "parent", "cwd": "/w/api", "git": {"branch": "main"}})
TURN = _line("turn_context", {"cwd": "/w/api", "model": "gpt-5.5"})


def test_codex_calls_are_rises_of_the_cumulative_total(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "rollout-2026-11-20T09-00-00-parent.jsonl",
        [
            META,
            TURN,
            _tc(None),  # rate limits only
            _tc((100, 40, 20, 5), (100, 40, 20, 5)),
            _tc((100, 40, 20, 5), (100, 40, 20, 5)),  # the same event again: no call
            _tc((300, 140, 50, 5), (200, 100, 30, 0)),
        ],
    )
    usage, cursor, diag = _usage(path, "codex")
    got = [(u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens,
            u.reasoning_tokens) for u in usage]  # fmt: skip
    # cached input is part of input: fresh = input - cached
    assert got == [(60, 40, 0, 20, 5), (100, 100, 0, 30, 0)]
    assert sum(u.total_tokens for u in usage) == 300 + 50  # the final total: input + output
    assert {u.session_id for u in usage} == {"parent"} and usage[0].model == "gpt-5.5"
    assert usage[0].branch == "main" and usage[0].locator == "line:4"
    assert cursor.usage_skipped == 0 and diag.count == 0


def test_codex_a_fork_names_its_copied_calls_as_the_parent_does(tmp_path: Path) -> None:
    parent_lines = [
        META,
        TURN,
        _tc((100, 0, 10, 0), (100, 0, 10, 0)),
        _tc((250, 80, 30, 0), (150, 80, 20, 0)),
    ]
    parent = _write(tmp_path / "rollout-2026-11-20T09-00-00-parent.jsonl", parent_lines)
    copied = [{**line, "timestamp": "2026-11-21T08:00:00Z"} for line in parent_lines]
    child = _write(
        tmp_path / "rollout-2026-11-21T08-00-00-child.jsonl",
        [
            _line("session_meta", {"id": "child", "forked_from_id": "parent", "cwd": "/w/api"}),
            *copied,
            TURN,
            _tc((400, 200, 45, 0), (150, 120, 15, 0), ts="2026-11-21T08:05:00Z"),
        ],
    )
    mine, _, _ = _usage(parent, "codex")
    theirs, _, _ = _usage(child, "codex")
    assert [u.call_id for u in theirs[:2]] == [u.call_id for u in mine]
    assert [u.counts() for u in theirs[:2]] == [u.counts() for u in mine]
    own = theirs[2]  # the child's own call: counted from where the copied total stood
    assert (own.input_tokens, own.cache_read_tokens, own.output_tokens) == (30, 120, 15)
    assert own.session_id == "child" and own.call_id not in {u.call_id for u in mine}


def test_codex_carried_over_total_and_restarted_counter(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "rollout-2026-11-20T09-00-00-sub.jsonl",
        [
            META,
            TURN,
            _tc((28_000_000, 0, 700_000, 0), (0, 0, 0, 0)),  # carried over: no call
            _tc((28_030_000, 0, 701_000, 0), (30_000, 0, 1_000, 0)),
            _tc((500, 0, 10, 0), (500, 0, 10, 0)),  # a counter that restarted
        ],
    )
    usage, cursor, _ = _usage(path, "codex")
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [(30_000, 1_000), (500, 10)]
    assert cursor.usage_skipped == 0


@pytest.mark.parametrize(
    ("total", "why"),
    [
        ({"input_tokens": "9", "output_tokens": 1}, "input_tokens is not a number"),
        ({"input_tokens": -9, "output_tokens": 1}, "input_tokens is negative"),
        ({"output_tokens": 1}, "input_tokens is missing"),
        ({"input_tokens": 10, "cached_input_tokens": 11, "output_tokens": 1}, "cached_input"),
        ({"input_tokens": 12_000_000, "output_tokens": 1}, "input_tokens is absurd"),
    ],
)
def test_codex_bad_totals_are_skipped_and_counted(tmp_path: Path, total: Any, why: str) -> None:
    bad = _line("event_msg", {"type": "token_count", "info": {"total_token_usage": total}})
    path = _write(tmp_path / "rollout-2026-11-20T09-00-00-x.jsonl", [META, TURN, bad])
    usage, cursor, diag = _usage(path, "codex")
    assert usage == [] and cursor.usage_skipped == 1
    assert why in diag.items[0].message


def test_codex_resume_continues_from_the_stored_total(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "rollout-2026-11-20T09-00-00-parent.jsonl",
        [META, TURN, _tc((100, 0, 10, 0), (100, 0, 10, 0))],
    )
    _, cursor, _ = _usage(path, "codex")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(_tc((180, 50, 15, 0), (80, 50, 5, 0))) + "\n")
    resumed = ParseCursor(offset=cursor.resume_offset, line=cursor.resume_line, state=cursor.state)
    usage, _, _ = _usage(path, "codex", resumed)
    assert [(u.input_tokens, u.cache_read_tokens, u.output_tokens) for u in usage] == [(30, 50, 5)]


# -- Gemini CLI ----------------------------------------------------------------------------------


def _gemini(mid: str, tokens: Any) -> dict[str, Any]:
    at = "2026-05-17T12:00:05Z"
    base = {"id": mid, "timestamp": at, "type": "gemini", "content": f"reply {mid}"}
    return {**base, "model": "gemini-2.5-pro", "tokens": tokens}


def test_gemini_cached_is_part_of_input_thoughts_are_output(tmp_path: Path) -> None:
    from _agent_helpers import parse

    header = {"sessionId": "g1", "projectHash": "h", "startTime": "2026-05-17T12:00:00Z"}
    tok = {"input": 1000, "output": 50, "cached": 400, "thoughts": 20, "tool": 7, "total": 1077}
    path = _write(
        tmp_path / "chats" / "session-2026-05-17T12-00-g1.jsonl",
        [
            header,
            {"id": "u1", "timestamp": "2026-05-17T12:00:01Z", "type": "user", "content": "hi"},
            _gemini("a1", tok),
            _gemini("a1", tok),  # re-emitted: the same message, one call
            _gemini("a2", {"input": 10, "output": 1}),
            {"$rewindTo": "a2"},  # the CLI rewound: a2 is no longer in the chat
            _gemini("a3", {"input": 5, "output": -1}),
        ],
    )
    _, cursor, diag = parse("gemini-cli.chat.v1", path, agent="gemini-cli", store="s")
    (usage,) = cursor.usage
    assert (usage.call_id, usage.model) == ("a1", "gemini-2.5-pro")
    got = (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.reasoning_tokens)
    assert got == (1000 - 400 + 7, 400, 50 + 20, 20)
    assert usage.total_tokens == tok["total"]  # Gemini's own total, split without loss
    assert cursor.usage_skipped == 1 and "output is negative" in diag.items[-1].message


def test_gemini_corpus_sample(corpus: Path) -> None:
    from _agent_helpers import parse

    files = sorted((corpus / "agentgrep-samples" / "gemini" / "gemini.tmp.chats").glob("*.jsonl"))
    _, cursor, _ = parse("gemini-cli.chat.v1", files[0], agent="gemini-cli", store="s")
    assert [(u.input_tokens, u.output_tokens, u.reasoning_tokens) for u in cursor.usage] == [
        (1000, 70, 20)
    ]


# -- OpenCode --------------------------------------------------------------------------------------


def test_opencode_tokens_per_assistant_message(tmp_path: Path) -> None:
    from _agent_helpers import build_db, parse

    def msg(mid: str, data: dict[str, Any]) -> str:
        return f"INSERT INTO message VALUES ('{mid}', 's1', '{json.dumps(data)}', 1767323045000);"

    tokens = {"input": 120, "output": 30, "reasoning": 12, "cache": {"read": 900, "write": 64}}
    answer = {"role": "assistant", "modelID": "claude-sonnet-4-5"}
    sql = (
        "CREATE TABLE session(id TEXT PRIMARY KEY, directory TEXT, parent_id TEXT, title TEXT,"
        " time_created INTEGER);"
        "CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, data TEXT,"
        " time_created INTEGER);"
        "CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT,"
        " time_created INTEGER);"
        "INSERT INTO session VALUES ('s1', '/w/oc', NULL, 't', 1767323040000);"
        + msg("m1", {"role": "user", "time": {"created": 1767323041000}})
        + msg("m2", {**answer, "tokens": tokens, "time": {"created": 1767323045000}})
        + msg("m3", {"role": "assistant", "modelID": "x", "tokens": {"input": "a", "output": 1}})
    )
    db = build_db(tmp_path / "opencode.db", sql)
    _, cursor, diag = parse("opencode.sqlite.v1", db, agent="opencode", store="s")
    (usage,) = cursor.usage
    assert (usage.call_id, usage.session_id, usage.cwd, usage.model) == (
        "m2", "s1", "/w/oc", "claude-sonnet-4-5",
    )  # fmt: skip
    got = (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
           usage.output_tokens, usage.reasoning_tokens)  # fmt: skip
    assert got == (120, 900, 64, 30 + 12, 12)
    assert usage.timestamp == 1767323045.0
    assert cursor.usage_skipped == 1 and "input is not a number" in diag.items[-1].message


# -- Pi --------------------------------------------------------------------------------------------


def test_pi_usage_per_assistant_message(tmp_path: Path) -> None:
    from _agent_helpers import parse

    usage = {"input": 8914, "output": 51, "cacheRead": 1000, "cacheWrite": 20, "totalTokens": 9985}
    answer = {"role": "assistant", "model": "gpt-5.5", "responseId": "resp_1", "usage": usage,
              "content": [{"type": "text", "text": "done"}]}  # fmt: skip
    path = _write(
        tmp_path / "2026-09-02T17-29-08-224Z_sess-7.jsonl",
        [
            {
                "type": "session",
                "version": 3,
                "id": "sess-7",
                "cwd": "/w/pi",
                "timestamp": "2026-09-02T17:29:08.224Z",
            },
            {"type": "message", "id": "a1", "timestamp": "2026-09-02T17:29:12Z", "message": answer},
            {
                "type": "message",
                "id": "a2",
                "timestamp": "2026-09-02T17:29:13Z",
                "message": {**answer, "responseId": "resp_2", "usage": {"input": 1}},
            },
        ],
    )
    _, cursor, diag = parse("pi.session_jsonl.v1", path, agent="pi", store="s")
    (got,) = cursor.usage
    assert (got.call_id, got.session_id, got.cwd, got.model) == (
        "resp_1",
        "sess-7",
        "/w/pi",
        "gpt-5.5",
    )
    counts = (got.input_tokens, got.cache_read_tokens, got.cache_write_tokens, got.output_tokens)
    assert counts == (8914, 1000, 20, 51) and got.total_tokens == usage["totalTokens"]
    assert cursor.usage_skipped == 1 and "output is missing" in diag.items[-1].message

"""Cline's SDK-era sessions: ``<sessions dir>/<id>/<id>.messages.json`` + ``<id>.json``.

The files are written in the shape ``@cline/core`` writes them (its
``messages-contract-v1.md`` and its fixtures ``fixtures/session/session.json``,
``session.messages.json``): ids like ``msg_7mYEbh8N``, ``ts`` in ms, metrics on
every assistant message of a request, tool results as Cline's ``{query,
result, success}`` lists, a ``file`` block beside the typed text, the
``<user_input mode=...>`` wrapper and a ``<mode_notice>``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _agent_helpers import count_raw, parse
from agentdex.parsers._registry import get_parser

PID = "cline.sessions_json.v1"
TS = 1_793_696_400_000  # 2026-11-01T09:00:00Z in ms
SID = "1793696400000_k3x9q"
MODEL = {"id": "claude-sonnet-4-6", "provider": "anthropic", "family": "claude-sonnet"}


def roles(path: Path) -> dict[str, dict[str, int]]:
    count = get_parser(PID).count_roles
    assert count is not None
    return count(path)


def _metrics(inp: Any, out: Any, read: Any = 0, write: Any = 0) -> dict[str, Any]:
    return {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": read,
            "cacheWriteTokens": write, "cost": 0.01}  # fmt: skip


def _user(mid: str, ts: int, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": list(blocks), "ts": ts}


def _assistant(mid: str, ts: int, *blocks: dict[str, Any], metrics: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"id": mid, "role": "assistant", "content": list(blocks),
                               "ts": ts, "modelInfo": MODEL}  # fmt: skip
    if metrics is not None:
        message["metrics"] = metrics
    return message


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def conversation() -> list[dict[str, Any]]:
    """One turn with a tool round trip, then a second prompt after a mode switch."""
    return [
        _user("msg_mr9sjimy_1", TS,
              _text('<user_input mode="act">rename the sidebar filter</user_input>'),
              {"type": "file", "path": "/work/shop/sidebar.tsx", "content": "export const A = 1;"}),
        _assistant("msg_7mYEbh8N", TS + 4000,
                   {"type": "thinking", "thinking": "Read the file first."},
                   _text("I'll look at the sidebar."),
                   {"type": "tool_use", "id": "toolu_01", "name": "read_files",
                    "input": {"files": [{"path": "/work/shop/sidebar.tsx"}]}},
                   metrics=_metrics(34_334, 741, 0, 12_000)),
        _user("msg_qkyA1yfW_tool_toolu_01", TS + 4010,
              {"type": "tool_result", "tool_use_id": "toolu_01", "name": "read_files",
               "content": [{"query": "/work/shop/sidebar.tsx:1-1",
                            "result": "1 | export const A = 1;", "success": True}]}),
        _assistant("msg_WLUQWTo-", TS + 6000, {"type": "redacted_thinking", "data": "xyz"},
                   _text("Renamed it."), _text("Anything else?"),
                   metrics=_metrics(35_912, 164, 34_332)),
        _user("msg_mr9soyef_1", TS + 60_000,
              _text("<mode_notice>The user switched from act mode to plan mode before sending "
                    'this message.</mode_notice><user_input mode="plan">now plan the tests'
                    "</user_input>\n\n"
                    '<file_content path="/work/shop/a.ts">\nx\n</file_content>')),
        _user("msg_reminder", TS + 61_000,
              _text("[SYSTEM] This run is not complete until you call one of these terminal "
                    "completion tools: attempt_completion.")),
        _assistant("msg_iGShD_aA", TS + 65_000, _text("Plan: a test per rename."),
                   {"type": "widget", "x": 1}, metrics=_metrics(36_977, 209, 36_671)),
    ]  # fmt: skip


def write_session(sessions: Path, sid: str, messages: list[Any], **manifest: Any) -> Path:
    folder = sessions / sid
    folder.mkdir(parents=True)
    doc = {"version": 1, "updated_at": "2026-11-01T09:01:05.000Z", "agent": "lead",
           "sessionId": sid, "messages": messages}  # fmt: skip
    path = folder / f"{sid}.messages.json"
    path.write_text(json.dumps(doc, indent="\t"), encoding="utf-8")
    meta = {"version": 1, "session_id": sid, "source": "cli", "pid": 85916,
            "started_at": "2026-11-01T08:59:59.000Z", "status": "completed",
            "interactive": True, "provider": "cline", "model": MODEL["id"],
            "cwd": "/work/shop", "workspace_root": "/work/shop", "enable_tools": True,
            "enable_spawn": True, "enable_teams": False,
            "metadata": {"title": "rename the sidebar filter"},
            "messages_path": str(path), **manifest}  # fmt: skip
    (folder / f"{sid}.json").write_text(json.dumps(meta), encoding="utf-8")
    return path


def test_records_of_a_session(tmp_path: Path) -> None:
    path = write_session(tmp_path / "sessions", SID, conversation())
    records, cursor, diags = parse(PID, path, agent="cline", store="cline.sessions")
    assert [(r.locator, r.role, r.kind, r.text) for r in records] == [
        ("json:/messages/0/content/0", "user", "prompt", "rename the sidebar filter"),
        ("json:/messages/0/content/1", "system", "message",
         "/work/shop/sidebar.tsx\nexport const A = 1;"),
        ("json:/messages/1/content/0", "assistant", "reasoning", "Read the file first."),
        ("json:/messages/1/content/1", "assistant", "message", "I'll look at the sidebar."),
        ("json:/messages/1/content/2", "assistant", "tool_call",
         'read_files {"files":[{"path":"/work/shop/sidebar.tsx"}]}'),
        ("json:/messages/2/content/0", "tool", "tool_result",
         "/work/shop/sidebar.tsx:1-1\n1 | export const A = 1;"),
        ("json:/messages/3/content/1", "assistant", "message", "Renamed it.\n\nAnything else?"),
        ("json:/messages/4/content/0", "user", "prompt", "now plan the tests"),
        ("json:/messages/4/content/0#1", "system", "message",
         '<file_content path="/work/shop/a.ts">\nx\n</file_content>'),
        ("json:/messages/5/content/0", "system", "message",
         "[SYSTEM] This run is not complete until you call one of these terminal completion "
         "tools: attempt_completion."),
        ("json:/messages/6/content/0", "assistant", "message", "Plan: a test per rename."),
    ]  # fmt: skip
    assert {(r.session_id, r.cwd) for r in records} == {(SID, "/work/shop")}
    assert records[0].timestamp == TS / 1000 and records[-1].timestamp == (TS + 65_000) / 1000
    assert {r.model for r in records if r.role == "assistant"} == {MODEL["id"]}
    assert records[5].extra == {"call_id": "toolu_01", "tool": "read_files"}
    assert cursor.titles == {SID: "rename the sidebar filter"}
    assert cursor.units == count_raw(PID, path) == 7
    assert roles(path) == {SID: {"prompts": 2, "replies": 3}}
    drift = [(d.what, d.name, d.version, d.locator) for d in diags.drift.values()]
    assert drift == [("content block", "widget", "", "json:/messages/6/content/1")]


def test_usage_is_one_call_per_metrics_with_the_cache_taken_out_of_input(tmp_path: Path) -> None:
    path = write_session(tmp_path / "sessions", SID, conversation())
    _, cursor, _ = parse(PID, path, agent="cline", store="cline.sessions")
    got = [(u.call_id, u.input_tokens, u.cache_read_tokens, u.cache_write_tokens,
            u.output_tokens, u.timestamp, u.model, u.locator) for u in cursor.usage]  # fmt: skip
    assert got == [
        ("cline-sdk:msg_7mYEbh8N", 34_334 - 12_000, 0, 12_000, 741, (TS + 4000) / 1000,
         MODEL["id"], "json:/messages/1/metrics"),
        ("cline-sdk:msg_WLUQWTo-", 35_912 - 34_332, 34_332, 0, 164, (TS + 6000) / 1000,
         MODEL["id"], "json:/messages/3/metrics"),
        ("cline-sdk:msg_iGShD_aA", 36_977 - 36_671, 36_671, 0, 209, (TS + 65_000) / 1000,
         MODEL["id"], "json:/messages/6/metrics"),
    ]  # fmt: skip
    assert {(u.session_id, u.cwd, u.agent) for u in cursor.usage} == {(SID, "/work/shop", "cline")}


def test_input_smaller_than_the_cache_is_already_fresh(tmp_path: Path) -> None:
    """A host's own ApiHandler reports uncached input: kept as it is, never made negative."""
    messages = [
        _user("m1", TS, _text("hi")),
        _assistant("m2", TS + 1, _text("hello"), metrics=_metrics(40, 7, 3_000, 10)),
    ]
    path = write_session(tmp_path / "s", SID, messages)
    _, cursor, _ = parse(PID, path)
    assert [(u.input_tokens, u.cache_read_tokens, u.cache_write_tokens) for u in cursor.usage] == [
        (40, 3_000, 10)
    ]


@pytest.mark.parametrize(
    ("metrics", "why"),
    [
        (_metrics(-5, 10), "inputTokens is negative"),
        (_metrics(10, "7"), "outputTokens is not a number"),
        (_metrics(10, 20_000_000), "outputTokens is absurd"),
        ({"outputTokens": 3}, "inputTokens is missing"),
        ("lots", "usage is not an object"),
    ],
)
def test_bad_metrics_are_skipped_and_counted(tmp_path: Path, metrics: Any, why: str) -> None:
    messages = [_user("m1", TS, _text("hi")),
                _assistant("m2", TS + 1, _text("hello"), metrics=metrics),
                _assistant("m3", TS + 2, _text("again"), metrics=_metrics(10, 2))]  # fmt: skip
    path = write_session(tmp_path / "s", SID, messages)
    records, cursor, diags = parse(PID, path)
    assert [u.call_id for u in cursor.usage] == ["cline-sdk:m3"]
    assert cursor.usage_skipped == 1
    assert any(why in d.message for d in diags.items)
    assert [r.text for r in records] == ["hi", "hello", "again"]


def test_a_task_carried_over_from_the_task_folders_is_not_read_twice(tmp_path: Path) -> None:
    """Cline 4.x converts a legacy task into a session with the task's id, ending the copy
    with its warning and stamping the task's whole totals on the last copied reply: the
    task folder holds those messages and their per-request usage, so only what follows
    the warning comes from the session file."""
    task_id = "1767348000000"
    copied = [
        {"id": "V1StGXR8_Z", "role": "user", "content": [_text("build a cli flag parser")]},
        {"id": "3bqF8kVn0X", "role": "assistant", "content": [_text("Added it.")],
         "modelInfo": {"id": "claude-sonnet-4-5", "provider": "unknown"},
         "metrics": _metrics(90_000, 4_000, 60_000, 20_000)},
        {"id": "p2Lw9QmZ1c", "role": "user",
         "content": "Warning: this is a legacy conversation, which means tool names may have "
                    "changed. Please use the most up-to-date tools you are aware of."},
    ]  # fmt: skip
    after = [
        _user("msg_new_1", TS, _text('<user_input mode="act">also handle --help</user_input>')),
        _assistant("msg_new_2", TS + 3000, _text("Added --help."), metrics=_metrics(500, 20, 400)),
    ]
    path = write_session(tmp_path / "sessions", task_id, copied + after)
    records, cursor, diags = parse(PID, path)
    assert [(r.locator, r.kind, r.text) for r in records] == [
        ("json:/messages/3/content/0", "prompt", "also handle --help"),
        ("json:/messages/4/content/0", "message", "Added --help."),
    ]
    assert [(u.call_id, u.input_tokens) for u in cursor.usage] == [("cline-sdk:msg_new_2", 100)]
    assert cursor.units == count_raw(PID, path) == 2
    assert roles(path) == {task_id: {"prompts": 1, "replies": 1}}
    assert diags.count == 0


def test_a_subagent_file_belongs_to_its_session_and_its_prompts_are_not_typed(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    write_session(sessions, SID, conversation())
    sub = sessions / SID / "researcher.messages.json"
    doc = {"version": 1, "agent": "subagent", "sessionId": f"{SID}__researcher",
           "messages": [_user("s1", TS + 7000, _text("find every use of Filter")),
                        _assistant("s2", TS + 9000, _text("Three uses."),
                                   metrics=_metrics(1_000, 50))]}  # fmt: skip
    sub.write_text(json.dumps(doc), encoding="utf-8")
    records, cursor, _ = parse(PID, sub)
    assert [(r.session_id, r.locator, r.role, r.kind) for r in records] == [
        (SID, "researcher.messages.json:json:/messages/0/content/0", "user", "message"),
        (SID, "researcher.messages.json:json:/messages/1/content/0", "assistant", "message"),
    ]
    assert cursor.titles == {}  # the session's title comes from its own file
    assert [(u.session_id, u.call_id) for u in cursor.usage] == [(SID, "cline-sdk:s2")]
    assert roles(sub) == {SID: {"prompts": 0, "replies": 1}}


def test_broken_and_foreign_files_are_diagnostics(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / SID
    folder.mkdir(parents=True)
    path = folder / f"{SID}.messages.json"
    for body, message in (
        ('{"version": 1, "messages": [', "JSON"),
        ('{"version": 1, "sessionId": "x"}', "not a Cline session messages file"),
    ):
        path.write_text(body, encoding="utf-8")
        records, cursor, diags = parse(PID, path)
        assert records == [] and cursor.usage == []
        assert diags.count == 1 and message in diags.items[0].message
        assert count_raw(PID, path) == 0


def test_a_newer_file_version_is_drift_and_still_read(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s", SID, conversation()[:2])
    doc = json.loads(path.read_text())
    doc["version"] = 2
    path.write_text(json.dumps(doc))
    (path.parent / f"{SID}.json").unlink()  # no manifest: no cwd, no title, still read
    records, cursor, diags = parse(PID, path)
    assert [r.kind for r in records] == ["prompt", "message", "reasoning", "message", "tool_call"]
    assert {r.cwd for r in records} == {None} and cursor.titles == {}
    assert [(d.what, d.name) for d in diags.drift.values()] == [("file version", "2")]


def test_through_the_index_a_fork_counts_its_copied_calls_once(home: Path, run_cli: Any) -> None:
    """A session, its fork (a new id holding a copy of the messages, ids and metrics
    included) and a legacy task carried into a session: each call counted once, the
    conversations listed with their titles, the prompts searchable."""
    sessions = home / ".cline" / "data" / "sessions"
    write_session(sessions, SID, conversation())
    fork = "1793696500000_p8pzo"
    extra = [_user("msg_fork_1", TS + 100_000, _text("and rename the icon")),
             _assistant("msg_fork_2", TS + 103_000, _text("Renamed the icon."),
                        metrics=_metrics(2_000, 30, 1_500))]  # fmt: skip
    write_session(sessions, fork, conversation() + extra,
                  metadata={"title": "rename the sidebar filter (fork)",
                            "fork": {"forkedFromSessionId": SID}})  # fmt: skip
    done = run_cli("usage", "--by", "session", "--json")
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    rows = {r["session_id"]: r for r in view["rows"]}
    own = (34_334 + 741) + (35_912 + 164) + (36_977 + 209)
    assert rows[SID]["total_tokens"] == own  # the fork's copies are the same calls
    assert rows[fork]["total_tokens"] == 2_000 + 30
    assert view["totals"]["total_tokens"] == own + 2_030
    by_model = json.loads(run_cli("usage", "--by", "model", "--json").stdout)
    assert [r["model"] for r in by_model["rows"]] == [MODEL["id"]]
    assert by_model["rows"][0]["cost_usd"] is not None  # a model of the price table
    listing = json.loads(run_cli("conversations", "--json").stdout)
    titles = {c["session_id"]: c["title"] for c in listing["conversations"]}
    assert titles == {SID: "rename the sidebar filter", fork: "rename the sidebar filter (fork)"}
    hits = json.loads(run_cli("search", "plan the tests", "--json").stdout)
    assert {h["session_id"] for h in hits["results"]} == {SID, fork}


def test_through_the_index_a_carried_over_task_is_one_conversation(
    home: Path, run_cli: Any
) -> None:
    """The task folder (VS Code global storage) and the session Cline 4.x made of it share
    the task's id: one conversation, its copied messages and calls once."""
    task_id = "1793600000000"
    task = home / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks" / task_id
    task.mkdir(parents=True)
    history = [{"role": "user", "content": [_text("<task>\nbuild a cli flag parser\n</task>")]},
               {"role": "assistant", "content": [_text("Added it.")]}]  # fmt: skip
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    request = {"tokensIn": 12, "tokensOut": 300, "cacheWrites": 9_000, "cacheReads": 0}
    ui = [
        {
            "ts": 1_793_600_001_000,
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(request),
            "modelInfo": {"modelId": "claude-sonnet-4-6", "providerId": "anthropic"},
        }
    ]
    (task / "ui_messages.json").write_text(json.dumps(ui))
    copied = [
        {"id": "V1StGXR8_Z", "role": "user", "content": [_text("build a cli flag parser")]},
        {"id": "3bqF8kVn0X", "role": "assistant", "content": [_text("Added it.")],
         "modelInfo": {"id": "claude-sonnet-4-6", "provider": "unknown"},
         "metrics": _metrics(9_012, 300, 0, 9_000)},
        {"id": "p2Lw9QmZ1c", "role": "user", "content": [_text(
            "Warning: this is a legacy conversation, which means tool names may have changed. "
            "Please use the most up-to-date tools you are aware of.")]},
        _user("msg_new_1", TS, _text('<user_input mode="act">also handle --help</user_input>')),
        _assistant("msg_new_2", TS + 3000, _text("Added --help."), metrics=_metrics(500, 20, 400)),
    ]  # fmt: skip
    write_session(home / ".cline" / "data" / "sessions", task_id, copied)
    view = json.loads(run_cli("usage", "--by", "session", "--json").stdout)
    assert [(r["session_id"], r["total_tokens"]) for r in view["rows"]] == [
        (task_id, 12 + 300 + 9_000 + 500 + 20)
    ]
    listing = json.loads(run_cli("conversations", "--json").stdout)
    assert [c["session_id"] for c in listing["conversations"]] == [task_id]
    shown = json.loads(run_cli("show", task_id, "--json").stdout)
    texts = [r["text"] for r in shown["records"]]
    assert texts == ["build a cli flag parser", "Added it.", "also handle --help", "Added --help."]


def test_the_session_dir_override_and_show_with_a_subagent(
    home: Path, run_cli: Any, tmp_path: Path
) -> None:
    """``CLINE_SESSION_DATA_DIR`` moves the store (as it moves Cline's); ``show`` gives the
    session's records with its subagent's, which sit in the session's folder."""
    sessions = tmp_path / "elsewhere" / "sessions"
    write_session(sessions, SID, conversation()[:2])
    sub = {"version": 1, "agent": "subagent", "sessionId": f"{SID}__researcher",
           "messages": [_user("s1", TS + 2000, _text("find every use of Filter")),
                        _assistant("s2", TS + 3000, _text("Three uses."))]}  # fmt: skip
    (sessions / SID / "researcher.messages.json").write_text(json.dumps(sub), encoding="utf-8")
    env = {"CLINE_SESSION_DATA_DIR": str(sessions)}
    shown = run_cli("show", SID, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    got = [(r["store"], r["kind"], r["text"]) for r in json.loads(shown.stdout)["records"]]
    assert ("cline.sessions", "prompt", "rename the sidebar filter") in got
    assert ("cline.sessions", "message", "find every use of Filter") in got
    assert ("cline.sessions", "message", "Three uses.") in got

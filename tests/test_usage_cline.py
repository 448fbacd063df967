"""Token usage of Cline, Roo Code and Kilo Code tasks, from the task's ``ui_messages.json``.

The files are written in the shape the agents write them (compact JSON arrays of
``ClineMessage``: ``ts`` in ms, ``type``, ``say``, ``text`` holding the request's
JSON, Cline's per-entry ``modelInfo`` and ``conversationHistoryIndex``;
``task_metadata.json``'s ``model_usage``), the counts chosen so that each rule
of ``docs/usage.md`` decides a different number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _agent_helpers import parse
from agentdex.records import Usage

TS = 1_793_696_400_000  # 2026-11-01T09:00:00Z in ms
STORAGE = ".config/Code/User/globalStorage"
EXT = {"cline": "saoudrizwan.claude-dev", "roo-code": "rooveterinaryinc.roo-cline",
       "kilo-code": "kilocode.kilo-code"}  # fmt: skip


def _req(ts: int, info: dict[str, Any] | str, *, say: str = "api_req_started", **kw: Any) -> Any:
    text = info if isinstance(info, str) else json.dumps(info, separators=(",", ":"))
    return {"ts": ts, "type": "say", "say": say, "text": text, **kw}


def _counts(tin: Any, tout: Any, reads: Any = 0, writes: Any = 0, **kw: Any) -> dict[str, Any]:
    return {"tokensIn": tin, "tokensOut": tout, "cacheWrites": writes, "cacheReads": reads,
            "cost": 0.01, **kw}  # fmt: skip


def _task(root: Path, task_id: str, ui: list[Any], *, metadata: Any = None,
          history: list[Any] | None = None) -> Path:  # fmt: skip
    task = root / "tasks" / task_id
    task.mkdir(parents=True)
    if history is None:
        prompt = {"type": "text", "text": "<task>\nfix it\n</task>"}
        answer = {"type": "text", "text": "Done."}
        history = [
            {"role": "user", "content": [prompt]},
            {"role": "assistant", "content": [answer]},
        ]
    dump = json.dumps
    (task / "api_conversation_history.json").write_text(dump(history), encoding="utf-8")
    (task / "ui_messages.json").write_text(dump(ui, separators=(",", ":")), encoding="utf-8")
    if metadata is not None:
        (task / "task_metadata.json").write_text(dump(metadata), encoding="utf-8")
    return task / "api_conversation_history.json"


def _usage(path: Path, agent: str) -> tuple[list[Usage], int, list[str]]:
    parser = f"{agent}.api_history_json.v1"
    _, cursor, diag = parse(parser, path, root=path.parents[2], agent=agent, store=f"{agent}.tasks")
    return cursor.usage, cursor.usage_skipped, [d.message for d in diag.items]


def _split(u: Usage) -> tuple[int, int, int, int]:
    return (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens)


def test_cline_anthropic_counts_are_disjoint_and_each_request_is_one_call(tmp_path: Path) -> None:
    model = {"modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic", "mode": "act"}
    ui = [
        {"ts": TS, "type": "say", "say": "task", "text": "fix it", "modelInfo": model,
         "conversationHistoryIndex": -1},
        _req(TS + 1000, {"request": "<task>\nfix it\n</task>"}, modelInfo=model),  # not answered
        _req(TS + 2000, {"request": "...", **_counts(3, 190, 0, 15_911)}, modelInfo=model,
             conversationHistoryIndex=0),
        {"ts": TS + 2500, "type": "say", "say": "text", "text": "Reading", "partial": True},
        _req(TS + 3000, _counts(5, 402, 15_911, 1_204), modelInfo=model),
        _req(TS + 4000, _counts(0, 0, 0, 0, cancelReason="streaming_failed")),  # failed: nothing
        {"ts": TS + 4100, "type": "say", "say": "api_req_retried"},
    ]  # fmt: skip
    usage, skipped, _ = _usage(_task(tmp_path, str(TS), ui), "cline")
    assert skipped == 0
    assert [_split(u) for u in usage] == [(3, 0, 15_911, 190), (5, 15_911, 1_204, 402)]
    first = usage[0]
    assert first.timestamp == (TS + 2000) / 1000 and first.session_id == str(TS)
    assert first.model == "claude-sonnet-4-5-20250929"
    assert first.call_id == f"{TS}/api_req_started/{TS + 2000}"
    assert first.locator == "ui_messages.json:json:/2" and first.reasoning_tokens == 0


def test_the_same_request_written_twice_is_counted_once_with_its_last_counts(
    tmp_path: Path,
) -> None:
    """An entry is rewritten in place as the request streams; a file that kept two writes of
    one ``ts`` (or a partial one) holds one call, in its final state."""
    ui = [
        _req(TS, _counts(4, 10, 900, 0), partial=True),
        _req(TS, _counts(4, 50, 900, 0)),
        _req(TS, _counts(4, 120, 900, 0)),
        _req(TS + 1000, _counts(2, 7, 0, 0)),
    ]
    usage, skipped, _ = _usage(_task(tmp_path, str(TS), ui), "cline")
    assert [_split(u) for u in usage] == [(4, 900, 0, 120), (2, 0, 0, 7)] and skipped == 0


def test_cline_provider_decides_whether_tokens_in_holds_the_cache(tmp_path: Path) -> None:
    """Cline's OpenAI-compatible handler passes ``prompt_tokens`` (cache included) as
    ``tokensIn``; the provider comes from the entry or from ``model_usage`` at its time."""
    grok = {"modelId": "grok-4", "providerId": "xai"}
    metadata = {"files_in_context": [], "model_usage": [
        {"ts": TS, "model_id": "gpt-4.1", "model_provider_id": "openai", "mode": "act"},
        {"ts": TS + 5000, "model_id": "claude-opus-4-6", "model_provider_id": "anthropic",
         "mode": "act"}]}  # fmt: skip
    ui = [
        _req(TS + 1000, _counts(12_000, 300, 10_000)),  # openai: 2,000 fresh
        _req(TS + 6000, _counts(6, 80, 12_000, 400)),  # anthropic: fresh as written
        # an entry's own modelInfo wins over the timeline
        _req(TS + 7000, _counts(9_000, 20, 8_000), modelInfo=grok),
    ]
    usage, _, _ = _usage(_task(tmp_path, str(TS), ui, metadata=metadata), "cline")
    assert [(_split(u), u.model) for u in usage] == [
        ((2_000, 10_000, 0, 300), "gpt-4.1"),
        ((6, 12_000, 400, 80), "claude-opus-4-6"),
        ((1_000, 8_000, 0, 20), "grok-4"),
    ]


@pytest.mark.parametrize("agent", ["roo-code", "kilo-code"])
def test_roo_and_kilo_tokens_in_is_the_whole_prompt(tmp_path: Path, agent: str) -> None:
    ui = [
        _req(TS, {"apiProtocol": "anthropic"}),  # the placeholder before the request answers
        _req(TS + 1000, _counts(20_000, 500, 18_000, 1_500, apiProtocol="anthropic")),
        _req(TS + 2000, _counts(15_000, 200, 12_000, apiProtocol="openai")),
        # written before Roo 3.30 (Anthropic: fresh input only): cannot hold the cache
        _req(TS + 3000, _counts(7, 90, 30_000, 2_000, apiProtocol="anthropic")),
    ]
    root = tmp_path / EXT[agent]
    usage, _, _ = _usage(_task(root, "0b7c6c1e-5d0e-4a53-9a55-3f1f4b1e2d10", ui), agent)
    assert [_split(u) for u in usage] == [
        (500, 18_000, 1_500, 500),
        (3_000, 12_000, 0, 200),
        (7, 30_000, 2_000, 90),
    ]
    assert {u.model for u in usage} == {None}  # Roo and Kilo record no model: unpriced
    assert {u.total_tokens for u in usage[:2]} == {20_500, 15_200}


def test_deleted_subagent_and_legacy_finished_entries(tmp_path: Path) -> None:
    """Cline's task totals also count ``deleted_api_reqs`` and ``subagent_usage``; in 2024
    the counts came on an ``api_req_finished`` after the request's ``api_req_started``."""
    ui = [
        _req(TS, {"request": "<task>\nold task\n</task>"}),
        _req(TS + 900, _counts(10, 4, 3, 2), say="api_req_finished"),
        _req(TS + 2000, _counts(100, 40), say="deleted_api_reqs"),
        _req(TS + 3000, {"source": "subagents", **_counts(50, 5, 20)}, say="subagent_usage"),
    ]
    usage, _, _ = _usage(_task(tmp_path, str(TS), ui), "cline")
    assert [_split(u) for u in usage] == [(10, 3, 2, 4), (100, 0, 0, 40), (50, 20, 0, 5)]
    legacy = usage[0]
    assert legacy.timestamp == TS / 1000 and legacy.call_id == f"{TS}/api_req_started/{TS}"


@pytest.mark.parametrize(
    ("info", "why"),
    [
        (_counts(-5, 10), "tokensIn"),
        (_counts(10, "12"), "tokensOut is not a number"),
        (_counts(10, 20, 40_000_000), "cacheReads"),
        ({"tokensIn": 10, "cacheReads": 5}, "tokensOut is missing"),
        (_counts(1.5, 3), "tokensIn"),
    ],
)
def test_bad_counts_are_skipped_and_counted(tmp_path: Path, info: Any, why: str) -> None:
    ui = [_req(TS, info), _req(TS + 1000, _counts(2, 7))]
    usage, skipped, diags = _usage(_task(tmp_path, str(TS), ui), "cline")
    assert [_split(u) for u in usage] == [(2, 0, 0, 7)]
    assert skipped == 1 and any(why in d and "usage skipped" in d for d in diags)


def test_a_missing_or_broken_ui_log_gives_no_usage_and_no_error(tmp_path: Path) -> None:
    path = _task(tmp_path, str(TS), [])
    (path.parent / "ui_messages.json").write_text('[{"ts": 1, "say": "api_req_st', "utf-8")
    records, cursor, _ = parse("cline.api_history_json.v1", path, agent="cline")
    assert records and cursor.usage == [] and cursor.usage_skipped == 0
    (path.parent / "ui_messages.json").unlink()
    records, cursor, _ = parse("cline.api_history_json.v1", path, agent="cline")
    assert records and cursor.usage == []
    # text that is not JSON, or JSON without counts, is no call either
    _task(tmp_path / "b", str(TS), [_req(TS, "{not json"), _req(TS + 1, "[1, 2]")])
    usage, skipped, _ = _usage(tmp_path / "b/tasks" / str(TS) / "api_conversation_history.json",
                               "cline")  # fmt: skip
    assert usage == [] and skipped == 0


def test_usage_by_agent_and_by_day_add_up_with_the_cline_family(home: Path, run_cli: Any) -> None:
    """Through the index and the CLI: each agent's calls once, every view the same totals."""
    anthropic = {"modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic"}
    _task(home / STORAGE / EXT["cline"], str(TS), [
        _req(TS + 1000, _counts(3, 190, 0, 15_911), modelInfo=anthropic),
        _req(TS + 86_400_000, _counts(5, 402, 15_911, 1_204), modelInfo=anthropic),
    ])  # fmt: skip
    _task(home / STORAGE / EXT["roo-code"], "0b7c6c1e-5d0e-4a53-9a55-3f1f4b1e2d10", [
        _req(TS + 2000, _counts(20_000, 500, 18_000, 1_500, apiProtocol="anthropic")),
        _req(TS + 3000, _counts(-1, 500, apiProtocol="anthropic")),  # bad: skipped
    ])  # fmt: skip
    views = {}
    for by in ("agent", "day", "session", "model"):
        done = run_cli("usage", "--by", by, "--json")
        assert done.returncode == 0, done.stderr
        views[by] = json.loads(done.stdout)
    by_agent = {r["agent"]: r for r in views["agent"]["rows"]}
    assert by_agent["cline"]["total_tokens"] == 3 + 190 + 15_911 + 5 + 402 + 15_911 + 1_204
    assert by_agent["cline"]["cost_usd"] is not None
    roo = by_agent["roo-code"]
    assert (roo["input_tokens"], roo["total_tokens"]) == (500, 20_500)
    assert roo["cost_usd"] is None  # no model recorded: unpriced, never 0
    totals = {by: view["totals"]["total_tokens"] for by, view in views.items()}
    assert set(totals.values()) == {by_agent["cline"]["total_tokens"] + 20_500}
    assert len(views["day"]["rows"]) == 2
    audit = json.loads(run_cli("audit", "--json").stdout)
    usage = {s["agent"]: s["usage"] for s in audit["sources"] if s["agent"] in EXT}
    assert usage == {"cline": {"calls": 2, "skipped": 0}, "roo-code": {"calls": 1, "skipped": 1}}
    assert "usage skipped: tokensIn is negative" in json.dumps(audit)

"""Copilot CLI token usage: the per-model totals of ``session.shutdown`` events.

The event logs are written in Copilot CLI's shape (``{type, data, id, timestamp,
parentId}`` lines; ``session.start`` with ``copilotVersion`` and ``context``;
``session.shutdown`` with ``modelMetrics``), with the counts of shutdowns users
published (71,282 input = 35,495 cache reads + 35,783 cache writes + 4 fresh).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _agent_helpers import parse
from agentdex.records import Usage

SID = "0faecbdf-b889-4bca-a51a-5254f5488cb6"
PARSER = "copilot-cli.events_jsonl.v1"


def _ev(kind: str, data: dict[str, Any], n: int, ts: str) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": f"e{n:04d}-7283e3ac", "timestamp": ts,
            "parentId": f"e{n - 1:04d}-7283e3ac" if n else None}  # fmt: skip


def _metric(inp: Any, out: Any, read: Any = 0, write: Any = 0, *, count: Any = 1,
            reasoning: Any = None) -> dict[str, Any]:  # fmt: skip
    usage = {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": read,
             "cacheWriteTokens": write}  # fmt: skip
    if reasoning is not None:
        usage["reasoningTokens"] = reasoning
    return {"requests": {"count": count, "cost": 1}, "usage": usage}


def _shutdown(n: int, ts: str, metrics: dict[str, Any]) -> dict[str, Any]:
    data = {"shutdownType": "routine", "totalPremiumRequests": 2, "totalApiDurationMs": 389114,
            "sessionStartTime": 1772896520265, "codeChanges": {"linesAdded": 1,
            "linesRemoved": 0, "filesModified": []}, "modelMetrics": metrics,
            "currentModel": next(iter(metrics), None)}  # fmt: skip
    return _ev("session.shutdown", data, n, ts)


def _start(n: int = 0) -> dict[str, Any]:
    return _ev("session.start", {"sessionId": SID, "version": 1, "producer": "copilot-agent",
               "copilotVersion": "1.0.2", "startTime": "2026-03-07T15:15:20.265Z",
               "context": {"cwd": "/home/dev/shop", "branch": "main"}}, n,
               "2026-03-07T15:15:20.267Z")  # fmt: skip


def _turn(n: int, ts: str) -> list[dict[str, Any]]:
    return [_ev("user.message", {"content": "fix the tests"}, n, ts),
            _ev("assistant.message", {"messageId": f"m{n}", "content": "Fixed.",
                "toolRequests": [], "outputTokens": 373}, n + 1, ts)]  # fmt: skip


def _log(tmp_path: Path, events: list[Any]) -> Path:
    path = tmp_path / "session-state" / SID / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((e if isinstance(e, str) else json.dumps(e, separators=(",", ":"))) + "\n"
                   for e in events)  # fmt: skip
    path.write_text(text, encoding="utf-8")
    return path


def _usage(path: Path) -> tuple[list[Usage], int, list[str]]:
    _, cursor, diag = parse(PARSER, path, agent="copilot-cli", store="copilot-cli.session_state")
    return cursor.usage, cursor.usage_skipped, [d.message for d in diag.items]


def _sum(usage: list[Usage], model: str | None = None) -> tuple[int, ...]:
    mine = [u for u in usage if model is None or u.model == model]
    return tuple(sum(getattr(u, f) for u in mine) for f in
                 ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
                  "reasoning_tokens"))  # fmt: skip


def test_shutdown_totals_are_spread_over_the_runs_requests(tmp_path: Path) -> None:
    path = _log(tmp_path, [
        _start(), *_turn(1, "2026-03-07T15:20:00Z"),
        _ev("assistant.usage", {"model": "claude-sonnet-4.5", "inputTokens": 9}, 3,
            "2026-03-07T15:20:01Z") | {"ephemeral": True},  # never on disk; ignored if it were
        _shutdown(4, "2026-03-07T17:08:10.988Z", {
            "claude-sonnet-4.5": _metric(71_282, 900, 35_495, 35_783, count=10),
            "gpt-5-mini": _metric(1_000, 300, 200, count=2, reasoning=120)}),
    ])  # fmt: skip
    usage, skipped, _ = _usage(path)
    assert skipped == 0
    assert _sum(usage, "claude-sonnet-4.5") == (4, 35_495, 35_783, 900, 0)
    assert _sum(usage, "gpt-5-mini") == (800, 200, 0, 300, 120)
    sonnet = [u for u in usage if u.model == "claude-sonnet-4.5"]
    assert len(sonnet) == 10 and len({u.call_id for u in usage}) == 12
    assert {(u.session_id, u.cwd, u.branch, u.timestamp) for u in usage} == {
        (SID, "/home/dev/shop", "main", 1772903290.988)
    }
    assert [u.output_tokens for u in sonnet] == [90] * 10


def _resume(n: int, ts: str) -> dict[str, Any]:
    return _ev("session.resume", {"resumeTime": ts, "eventCount": n}, n, ts)


def test_a_resumed_sessions_running_totals_count_once(tmp_path: Path) -> None:
    """Copilot CLI 1.x carries a session's totals over a resume: each shutdown is the running
    total of every run so far (the shape of a published three-run session: cache reads
    1.85 M, then 14.06 M), so only each rise is new, and the session's calls count once."""
    opus = "claude-opus-4.7"
    path = _log(tmp_path, [
        _start(), *_turn(1, "2026-08-10T04:20:00Z"),
        _shutdown(3, "2026-08-10T04:56:31Z", {opus: _metric(1_900_000, 13_465, 1_853_542,
                                                            count=20)}),
        _resume(4, "2026-08-10T05:00:00Z"), *_turn(5, "2026-08-10T05:01:00Z"),
        _shutdown(7, "2026-08-10T05:32:54Z", {opus: _metric(14_200_000, 59_156, 14_060_000,
                                                            count=130),
                                              "gpt-5-mini": _metric(3_000, 40, count=2)}),
        _resume(8, "2026-08-10T08:00:00Z"), *_turn(9, "2026-08-10T08:01:00Z"),
        _shutdown(11, "2026-08-10T08:08:15Z", {opus: _metric(14_300_000, 60_000, 14_150_000,
                                                             count=131),
                                               "gpt-5-mini": _metric(3_000, 40, count=2)}),
    ])  # fmt: skip
    usage, skipped, _ = _usage(path)
    assert skipped == 0
    # the session's whole usage, as its last shutdown says: once, not 1 + 2 + 3 runs' sum
    assert _sum(usage) == (150_000 + 3_000, 14_150_000, 0, 60_000 + 40, 0)
    assert len(usage) == 131 + 2
    by_day = {}
    for u in usage:
        by_day[u.timestamp] = by_day.get(u.timestamp, 0) + u.output_tokens
    assert sorted(by_day.values()) == [844, 13_465, 45_691 + 40]  # each run's own rise


def test_a_resumed_session_whose_totals_restart_adds_each_run(tmp_path: Path) -> None:
    """An older CLI (0.0.x) started a resumed session at zero: a shutdown with a count below
    the one before, or without a model the one before had, is a restart, all new."""
    path = _log(tmp_path, [
        _start(), *_turn(1, "2026-03-07T15:20:00Z"),
        _shutdown(3, "2026-03-07T15:30:00Z", {"claude-sonnet-4.5": _metric(5_000, 100, 4_000)}),
        _ev("session.resume", {"resumeTime": "2026-03-09T09:00:00Z", "eventCount": 4}, 4,
            "2026-03-09T09:00:00Z"),
        *_turn(5, "2026-03-09T09:01:00Z"),
        _shutdown(7, "2026-03-09T09:30:00Z", {"claude-sonnet-4.5": _metric(6_000, 50, 5_500)}),
        _resume(8, "2026-03-10T09:00:00Z"), *_turn(9, "2026-03-10T09:01:00Z"),
        # every count above the run before, but its model is gone: a restart too
        _shutdown(11, "2026-03-10T09:30:00Z", {"gpt-5-mini": _metric(7_000, 60, 6_000)}),
    ])  # fmt: skip
    usage, _, _ = _usage(path)
    assert _sum(usage) == (1_000 + 500 + 1_000, 9_500 + 6_000, 0, 150 + 60, 0)
    assert sorted({u.timestamp for u in usage})[:2] == [1772897400.0, 1773048600.0]


def test_a_second_shutdown_of_one_run_counts_only_its_rise(tmp_path: Path) -> None:
    """Within one run the tracker only adds: a repeated shutdown is counted once, a later
    larger one for what it adds; a run whose totals fall is a restarted counter."""
    sonnet = "claude-sonnet-4.5"
    path = _log(tmp_path, [
        _start(), *_turn(1, "2026-03-07T15:20:00Z"),
        _shutdown(3, "2026-03-07T15:30:00Z", {sonnet: _metric(5_000, 100, 4_000, count=2)}),
        _shutdown(4, "2026-03-07T15:30:01Z", {sonnet: _metric(5_000, 100, 4_000, count=2)}),
        _shutdown(5, "2026-03-07T16:00:00Z", {sonnet: _metric(8_000, 160, 6_000, count=3)}),
        _shutdown(6, "2026-03-07T17:00:00Z", {sonnet: _metric(700, 10, 0, count=1)}),
    ])  # fmt: skip
    usage, skipped, _ = _usage(path)
    assert skipped == 0 and len(usage) == 4  # 2 + 0 + 1 + 1 requests
    assert _sum(usage) == (1_000 + 1_000 + 700, 6_000, 0, 170, 0)


def test_a_resumed_parse_keeps_the_runs_totals(tmp_path: Path) -> None:
    """The parser is resumable: a second shutdown appended later is compared with the first
    one read before."""
    sonnet = "claude-sonnet-4.5"
    events = [
        _start(),
        *_turn(1, "2026-03-07T15:20:00Z"),
        _shutdown(3, "2026-03-07T15:30:00Z", {sonnet: _metric(5_000, 100, 4_000)}),
    ]
    path = _log(tmp_path, events)
    _, cursor, _ = parse(PARSER, path, agent="copilot-cli")
    first = list(cursor.usage)
    cursor.offset, cursor.line = cursor.resume_offset, cursor.resume_line
    cursor.usage = []
    later = _shutdown(4, "2026-03-07T16:30:00Z", {sonnet: _metric(9_000, 300, 7_000, count=2)})
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(later) + "\n")
    _, cursor, _ = parse(PARSER, path, agent="copilot-cli", cursor=cursor)
    assert _sum(first) == (1_000, 4_000, 0, 100, 0)
    assert _sum(cursor.usage) == (1_000, 3_000, 0, 200, 0)


def test_a_long_session_passes_the_per_call_bound_only_in_total(tmp_path: Path) -> None:
    """A published run of 121 requests read 11,027,120 cached tokens: over 10 M in total,
    about 91 k a request."""
    path = _log(tmp_path, [_start(), _shutdown(1, "2026-05-02T10:00:00Z", {
        "claude-opus-4.7": _metric(11_538_077, 72_829, 11_027_120, 0, count=121)})])  # fmt: skip
    usage, skipped, _ = _usage(path)
    assert skipped == 0 and len(usage) == 121
    assert _sum(usage) == (510_957, 11_027_120, 0, 72_829, 0)


@pytest.mark.parametrize(
    ("metric", "why"),
    [
        (_metric(-5, 10), "inputTokens is negative"),
        (_metric(100, "12"), "outputTokens is not a number"),
        ({"requests": {"count": 1}, "usage": {"inputTokens": 100}}, "outputTokens is missing"),
        ({"requests": {"count": 1}}, "usage is not an object"),
        (_metric(40_000_000, 10, count=1), "is absurd"),
    ],
)
def test_bad_counts_are_skipped_and_counted(tmp_path: Path, metric: Any, why: str) -> None:
    path = _log(tmp_path, [_start(), _shutdown(1, "2026-03-07T15:30:00Z", {
        "bad-model": metric, "gpt-5-mini": _metric(1_000, 30)})])  # fmt: skip
    usage, skipped, diags = _usage(path)
    assert {u.model for u in usage} == {"gpt-5-mini"} and _sum(usage)[0] == 1_000
    assert skipped == 1 and any(why in d and "usage skipped" in d for d in diags)


def test_a_shutdown_without_metrics_and_older_logs_give_nothing(tmp_path: Path) -> None:
    path = _log(tmp_path, [_start(), *_turn(1, "2026-03-07T15:20:00Z"),
                           _ev("session.shutdown", {"shutdownType": "error"}, 3,
                               "2026-03-07T15:30:00Z")])  # fmt: skip
    records, cursor, diag = parse(PARSER, path, agent="copilot-cli")
    assert records and cursor.usage == [] and cursor.usage_skipped == 0 and diag.count == 0

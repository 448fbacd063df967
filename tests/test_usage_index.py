"""Usage in the index: stored at refresh, one counted row per call, kept level through
appends, rewrites, deletes, copies, forget and the archive; every view sums to one total."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.api.usage import BY, usage
from agentdex.index.store import Location, index_root
from agentdex.ingest import manifest
from usage_support import assert_usage_level

#: small refreshes keep their records out of tantivy (the default): usage needs no postings
pytestmark = pytest.mark.deferred_postings

FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def _claude(
    session: str,
    mid: str,
    ts: str,
    counts: tuple[int, int, int, int],
    model: str = "claude-opus-4-6",
    cwd: str = "/w/app",
) -> dict[str, Any]:
    inp, read, write, out = counts
    return {
        "type": "assistant",
        "sessionId": session,
        "cwd": cwd,
        "gitBranch": "main",
        "timestamp": ts,
        "message": {
            "id": mid,
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": f"reply {mid}"}],
            "usage": {"input_tokens": inp, "cache_read_input_tokens": read,
                      "cache_creation_input_tokens": write, "output_tokens": out},
        },
    }  # fmt: skip


def _transcript(
    home: Path, session: str, lines: list[dict[str, Any]], slug: str = "-w-app"
) -> Path:
    path = home / ".claude" / "projects" / slug / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _totals(home: Path, **kw: Any) -> dict[str, Any]:
    result = usage("day", home=str(home), **kw)
    return result["totals"]


def _counts(totals: dict[str, Any]) -> tuple[int, ...]:
    return (totals["calls"], *(totals[f] for f in FIELDS))


def _archive_off() -> None:
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("archive = false\n")


def test_refresh_stores_usage_and_every_view_adds_up(home: Path) -> None:
    _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (10, 100, 50, 5)),
        _claude("s1", "m1", "2026-03-01T10:00:01Z", (10, 100, 50, 40)),  # same message, grown
        _claude("s1", "m2", "2026-03-02T10:00:00Z", (3, 0, 0, 7), model="mystery-model"),
    ])  # fmt: skip
    result = usage("day", home=str(home))
    assert result["status"] == "ok"
    assert [r["day"] for r in result["rows"]] == ["2026-03-01", "2026-03-02"]
    assert _counts(result["totals"]) == (2, 13, 100, 50, 47)
    assert result["totals"]["total_tokens"] == 13 + 100 + 50 + 47
    # m1 is priced (opus 4.6: $5 in, $25 out, $0.5 read, $6.25 write per million)
    day1 = result["rows"][0]
    assert day1["cost_usd"] == pytest.approx((10 * 5 + 100 * 0.5 + 50 * 6.25 + 40 * 25) / 1e6)
    # the unknown model: no cost, listed, never 0
    day2 = result["rows"][1]
    assert day2["cost_usd"] is None and day2["priced_cost_usd"] == 0 and day2["unpriced_calls"] == 1
    assert result["unpriced"] == [{"model": "mystery-model", "calls": 1, "tokens": 10}]
    assert result["totals"]["cost_usd"] is None
    for by in BY:
        view = usage(by, home=str(home), refresh_first=False)
        assert view["totals"] == result["totals"], by
        for field in ("calls", *FIELDS, "total_tokens"):
            assert sum(r[field] for r in view["rows"]) == result["totals"][field], (by, field)


def test_a_copied_history_counts_once_and_survives_its_original(home: Path) -> None:
    _archive_off()
    original = [_claude("s1", f"m{i}", f"2026-03-01T10:0{i}:00Z", (i, 10, 0, 2)) for i in range(3)]
    first = _transcript(home, "s1", original)
    once = _counts(_totals(home))
    # a resumed session copies the history into a new file, re-stamped, then goes on
    copied = [{**x, "sessionId": "s2", "timestamp": "2026-03-05T09:00:00Z"} for x in original]
    _transcript(home, "s2", [*copied, _claude("s2", "m9", "2026-03-05T09:01:00Z", (1, 0, 0, 1))])
    both = usage("session", home=str(home))
    assert _counts(both["totals"]) == (once[0] + 1, once[1] + 1, once[2], once[3], once[4] + 1)
    by_session = {r["session_id"]: r["calls"] for r in both["rows"]}
    assert by_session == {"s1": 3, "s2": 1}  # the copies stay the original's
    days = {r["day"]: r["calls"] for r in usage("day", home=str(home))["rows"]}
    assert days == {"2026-03-01": 3, "2026-03-05": 1}
    first.unlink()  # the original goes (no archive): its calls are still in the copy
    gone = usage("session", home=str(home))
    assert _counts(gone["totals"]) == _counts(both["totals"])
    assert {r["session_id"]: r["calls"] for r in gone["rows"]} == {"s2": 4}


def test_an_append_that_finishes_a_message_replaces_its_earlier_counts(home: Path) -> None:
    path = _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (4, 0, 0, 3))])
    assert _counts(_totals(home)) == (1, 4, 0, 0, 3)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(_claude("s1", "m1", "2026-03-01T10:00:02Z", (4, 0, 0, 136))) + "\n")
        handle.write(json.dumps(_claude("s1", "m2", "2026-03-01T10:01:00Z", (1, 0, 0, 1))) + "\n")
    stats = api.refresh(home=str(home))
    assert stats.files_resumed == 1
    assert _counts(_totals(home, refresh_first=False)) == (2, 5, 0, 0, 137)


def test_a_rewritten_file_is_counted_as_it_is_now_without_the_archive(home: Path) -> None:
    _archive_off()
    lines = [_claude("s1", f"m{i}", "2026-03-01T10:00:00Z", (1, 0, 0, 1)) for i in range(4)]
    path = _transcript(home, "s1", lines)
    assert _totals(home)["calls"] == 4
    path.write_text(json.dumps(lines[0]) + "\n", encoding="utf-8")  # truncated to one call
    assert _totals(home)["calls"] == 1
    path.unlink()
    assert _totals(home)["calls"] == 0


def test_with_the_archive_a_deleted_source_stays_counted(home: Path) -> None:
    path = _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 6, 7, 8))])
    before = _counts(_totals(home))
    path.unlink()
    stats = api.refresh(home=str(home))
    assert stats.files_removed == 1
    assert _counts(_totals(home, refresh_first=False)) == before


def test_forget_removes_a_conversations_usage(home: Path, run_cli: Any) -> None:
    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5))])
    _transcript(home, "s2", [_claude("s2", "m2", "2026-03-01T10:00:00Z", (1, 0, 0, 1))])
    assert _totals(home)["calls"] == 2
    done = run_cli("forget", "--yes", "--session", "s1")
    assert done.returncode == 0, done.stderr
    result = usage("session", home=str(home))
    assert [r["session_id"] for r in result["rows"]] == ["s2"]
    assert result["totals"]["calls"] == 1


def test_filters_since_until_agent(home: Path) -> None:
    _transcript(home, "s1", [
        _claude("s1", "a", "2026-03-01T12:00:00Z", (1, 0, 0, 1)),
        _claude("s1", "b", "2026-03-02T12:00:00Z", (2, 0, 0, 2)),
        _claude("s1", "c", "2026-03-03T12:00:00Z", (4, 0, 0, 4)),
    ])  # fmt: skip
    assert _totals(home, since="2026-03-02")["input_tokens"] == 6
    assert _totals(home, until="2026-03-02")["input_tokens"] == 3
    assert _totals(home, since="2026-03-02", until="2026-03-02")["input_tokens"] == 2
    assert _totals(home, agent="codex")["calls"] == 0
    assert _totals(home, agent="claude-code")["calls"] == 3


def test_an_index_from_before_usage_reads_it_at_the_next_refresh(home: Path) -> None:
    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5))])
    api.refresh(home=str(home))
    gen = Location(index_root(None, home=str(home))).current()
    assert gen is not None
    db = sqlite3.connect(gen / "index.db")  # as a generation written before m005_usage
    db.executescript(
        "DROP TABLE usage_calls; DROP TABLE usage_rollup; DROP TABLE usage_contexts;"
        " DELETE FROM migrations WHERE name IN ('m005_usage', 'm007_usage_contexts');"
    )
    db.commit()
    db.close()
    manifest.discard(Location(index_root(None, home=str(home))).root)  # written by that version
    assert usage("day", home=str(home), refresh_first=False)["status"] == "no-index"
    assert _counts(_totals(home)) == (1, 5, 0, 0, 5)  # the refresh migrated and read it
    assert len(assert_usage_level(home)) == 1
    assert _counts(usage("session", home=str(home))["totals"]) == (1, 5, 0, 0, 5)


_EXAMPLES = itertools.count()


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),  # file
            st.integers(0, 6),  # message id
            st.integers(0, 5),  # day offset
            st.integers(0, 23),  # hour
            st.sampled_from(["claude-opus-4-6", "claude-sonnet-4-5", "nobody-knows"]),
            st.tuples(*(st.integers(0, 5000) for _ in range(4))),
            st.sampled_from(["/w/app", "/w/lib"]),  # one conversation, two projects
        ),
        min_size=1,
        max_size=30,
    )
)
def test_every_view_adds_up_to_the_same_total(home: Path, calls: list[Any]) -> None:
    """Random calls across files that share message ids: the views agree with each other
    and with an oracle that keeps, per message id, the first-written file's last write."""
    _archive_off()  # the files of earlier examples go for good
    root = home / ".claude" / "projects"
    shutil.rmtree(root, ignore_errors=True)
    run = next(_EXAMPLES)  # new paths each example: a rewrite never looks unchanged
    files: dict[int, list[dict[str, Any]]] = {}
    for file, mid, day, hour, model, counts, cwd in calls:
        ts = f"2026-04-{day + 1:02d}T{hour:02d}:{file:02d}:00Z"  # no ties across files
        line = _claude(f"s{file}", f"m{mid}", ts, counts, model, cwd)
        files.setdefault(file, []).append(line)
    for file, lines in files.items():
        _transcript(home, f"s{file}", lines, slug=f"-w-p{file % 2}-{run}")
    oracle: dict[str, tuple[str, tuple[int, ...]]] = {}
    for file in sorted(files):
        last: dict[str, tuple[str, tuple[int, ...]]] = {}
        for line in files[file]:
            mid = line["message"]["id"]
            u = line["message"]["usage"]
            counts = (u["input_tokens"], u["cache_read_input_tokens"],
                      u["cache_creation_input_tokens"], u["output_tokens"])  # fmt: skip
            first_ts = last[mid][0] if mid in last else line["timestamp"]
            last[mid] = (first_ts, counts)
        for mid, (ts, counts) in last.items():
            if sum(counts) and (mid not in oracle or ts < oracle[mid][0]):
                oracle[mid] = (ts, counts)
    want = (len(oracle), *(sum(c[i] for _, c in oracle.values()) for i in range(4)))
    totals = None
    for by in BY:
        view = usage(by, home=str(home), refresh_first=totals is None)
        if totals is None:
            totals = view["totals"]
            assert _counts(totals) == want
        assert view["totals"] == totals, by
        assert sum(r["calls"] for r in view["rows"]) == totals["calls"], by
        assert sum(r["total_tokens"] for r in view["rows"]) == totals["total_tokens"], by
        if by == "session":  # its own row builder == the generic one (the slot rollup's)
            generic = usage(by, home=str(home), refresh_first=False, since="2000-01-01")
            assert (view["rows"], view["totals"], view["unpriced"]) == (
                generic["rows"], generic["totals"], generic["unpriced"])  # fmt: skip
            for n in (1, 2):  # the largest n, titles and projects as the generic view's
                assert (
                    usage(by, home=str(home), refresh_first=False, limit=n)["rows"]
                    == (
                        usage(by, home=str(home), refresh_first=False, limit=n, since="2000-01-01")[
                            "rows"
                        ]
                    )
                )
    assert_usage_level(home)  # the per-context sums (views without a range) too


def test_bad_counts_are_skipped_counted_in_audit_and_never_reach_a_total(home: Path) -> None:
    bad = _claude("s1", "m2", "2026-03-01T10:01:00Z", (1, 0, 0, 1))
    bad["message"]["usage"]["output_tokens"] = -40
    absurd = _claude("s1", "m3", "2026-03-01T10:02:00Z", (1, 0, 0, 1))
    absurd["message"]["usage"]["cache_read_input_tokens"] = 10_000_001
    _transcript(
        home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (2, 0, 0, 3)), bad, absurd]
    )
    assert _counts(_totals(home)) == (1, 2, 0, 0, 3)
    from agentdex.api.audit import audit

    report = audit(str(home))
    (source,) = [s for s in report["sources"] if s["path"].endswith("s1.jsonl")]
    assert source["usage"] == {"calls": 1, "skipped": 2}
    assert report["totals"]["usage_skipped"] == 2 and report["totals"]["usage_calls"] == 1
    assert source["status"] == "diagnostics"
    assert any(
        "usage skipped: output_tokens is negative" in d["message"] for d in source["diagnostics"]
    )


def test_http_usage_answers_what_the_cli_does(home: Path) -> None:
    from fastapi.testclient import TestClient

    from agentdex.asgi import build_app

    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 6, 7, 8))])
    want = usage("model", home=str(home))
    client = TestClient(build_app("usage-token", home=str(home)))
    auth = {"Authorization": "Bearer usage-token"}
    got = client.get("/api/v0/usage?by=model", headers=auth)
    assert got.status_code == 200
    body = got.json()
    assert body["rows"] == want["rows"] and body["totals"] == want["totals"]
    assert client.get("/api/v0/usage?since=2026-02-30", headers=auth).status_code == 400
    assert client.get("/api/v0/usage?since=yesterday", headers=auth).status_code == 400
    assert client.get("/api/v0/usage", headers={}).status_code == 401


def test_conversations_carry_their_tokens_and_cost(home: Path) -> None:
    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 6, 7, 8))])
    _transcript(home, "s2", [_claude("s2", "m2", "2026-03-01T11:00:00Z", (1, 0, 0, 1), "odd")])
    listed = api.conversations(home=str(home)).to_json()["conversations"]
    got = {c["session_id"]: (c["total_tokens"], c["cost_usd"]) for c in listed}
    by_session = {r["session_id"]: r for r in usage("session", home=str(home))["rows"]}
    assert got["s1"] == (26, by_session["s1"]["cost_usd"]) and got["s1"][1] > 0
    assert got["s2"] == (2, None)  # a model without a price: no cost, never 0

"""agentdex usage and ccusage side by side on the same files (docs/usage.md, "ccusage").

    python scripts/compare_ccusage.py CCUSAGE_BIN HOME [HOME ...] [--cases DIR]

``CCUSAGE_BIN`` is ``node_modules/.bin/ccusage`` of ``npm install ccusage@20.0.24``
in a scratch folder (never inside this repository). Each HOME is read by both
tools: ccusage with ``HOME=HOME ... daily --json --offline`` per agent it
knows (claude, codex, gemini, opencode), agentdex with ``--home HOME usage
--by day --json`` (its own data dir in a temporary folder). ``--cases DIR``
first writes, into DIR, a home of small histories that show each rule where
the tools can differ (a resumed Claude Code conversation, bad counts, a
forked Codex rollout with repeated events, Gemini tool-use tokens, OpenCode
reasoning), and compares it too. Prints one line per agent and day where
the two disagree, then the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
AGENTS = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli", "opencode": "opencode"}
FIELDS = ("input", "cache_read", "cache_write", "output", "total")
THEIRS = ("inputTokens", "cacheReadTokens", "cacheCreationTokens", "outputTokens", "totalTokens")
OURS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "total_tokens")


def _lines(path: Path, rows: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # compact, as the agents write it (a tool may look for "type":"assistant" byte for byte)
    path.write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8"
    )


def _claude(session: str, mid: str, ts: str, usage: dict[str, Any], **kw: Any) -> dict[str, Any]:
    message = {"id": mid, "role": "assistant", "model": kw.pop("model", "claude-sonnet-4-5"),
               "content": [{"type": "text", "text": "ok"}], "usage": usage}  # fmt: skip
    return {"type": "assistant", "sessionId": session, "cwd": "/w/app", "timestamp": ts,
            "requestId": f"req_{mid}", "message": message, **kw}  # fmt: skip


def _u(inp: int, out: int, read: int = 0, write: int = 0) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write}  # fmt: skip


def _codex_tc(ts: str, total: tuple[int, int, int], last: tuple[int, int, int]) -> dict[str, Any]:
    def counts(v: tuple[int, int, int]) -> dict[str, int]:
        return {"input_tokens": v[0], "cached_input_tokens": v[1], "output_tokens": v[2],
                "reasoning_output_tokens": 0, "total_tokens": v[0] + v[2]}  # fmt: skip

    info = {"total_token_usage": counts(total), "last_token_usage": counts(last)}
    return {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": info}}


def write_cases(home: Path) -> None:
    """Small histories, one per rule where the tools can differ (docs/usage.md)."""
    projects = home / ".claude" / "projects" / "-w-app"
    original = [
        _claude("s-orig", "m1", "2026-03-01T10:00:00Z", _u(10, 3, 1000, 500)),
        _claude("s-orig", "m1", "2026-03-01T10:00:02Z", _u(10, 300, 1000, 500)),  # grown output
        _claude("s-orig", "m2", "2026-03-01T10:05:00Z", _u(5, 50, 2000, 0)),
    ]
    _lines(projects / "s-orig.jsonl", original)
    # the conversation resumed two days later: its history copied, re-stamped, in a new file
    copied = [
        {**x, "sessionId": "s-resumed", "timestamp": "2026-03-03T09:00:00Z"} for x in original
    ]
    bad = _claude("s-resumed", "m4", "2026-03-03T09:02:00Z", _u(5, 1))
    bad["message"]["usage"]["output_tokens"] = -50  # a corrupt count
    huge = _claude("s-resumed", "m5", "2026-03-03T09:03:00Z", _u(5, 1, 40_000_000))
    _lines(
        projects / "s-resumed.jsonl",
        [*copied, _claude("s-resumed", "m3", "2026-03-03T09:01:00Z", _u(7, 70, 3000)), bad, huge],
    )
    sessions = home / ".codex" / "sessions" / "2026" / "03" / "01"
    meta = {"timestamp": "2026-03-01T11:00:00Z", "type": "session_meta",
            "payload": {"id": "parent", "cwd": "/w/api"}}  # fmt: skip
    turn = {"timestamp": "2026-03-01T11:00:01Z", "type": "turn_context",
            "payload": {"cwd": "/w/api", "model": "gpt-5"}}  # fmt: skip
    parent = [
        meta,
        turn,
        _codex_tc("2026-03-01T11:00:05Z", (1000, 200, 50), (1000, 200, 50)),
        _codex_tc("2026-03-01T11:00:05Z", (1000, 200, 50), (1000, 200, 50)),  # repeated
        _codex_tc("2026-03-01T11:01:00Z", (2500, 1200, 90), (1500, 1000, 40)),
    ]
    _lines(sessions / "rollout-2026-03-01T11-00-00-parent.jsonl", parent)
    child = {"id": "child", "forked_from_id": "parent", "cwd": "/w/api"}
    child_meta = {"timestamp": "2026-03-02T08:00:00Z", "type": "session_meta", "payload": child}
    replay = [{**x, "timestamp": "2026-03-02T08:00:00.010Z"} for x in parent]
    own = _codex_tc("2026-03-02T08:03:00Z", (4000, 2400, 130), (1500, 1200, 40))
    _lines(
        home
        / ".codex"
        / "sessions"
        / "2026"
        / "03"
        / "02"
        / "rollout-2026-03-02T08-00-00-child.jsonl",
        [child_meta, *replay, {**turn, "timestamp": "2026-03-02T08:01:00Z"}, own],
    )
    chats = home / ".gemini" / "tmp" / "app" / "chats"
    tokens = {"input": 1000, "output": 50, "cached": 400, "thoughts": 20, "tool": 30, "total": 1100}
    _lines(
        chats / "session-2026-03-01T12-00-g1.jsonl",
        [
            {"sessionId": "g1", "projectHash": "h", "startTime": "2026-03-01T12:00:00Z"},
            {"id": "u1", "timestamp": "2026-03-01T12:00:01Z", "type": "user", "content": "hi"},
            {
                "id": "a1",
                "timestamp": "2026-03-01T12:00:05Z",
                "type": "gemini",
                "content": "ok",
                "model": "gemini-2.5-pro",
                "tokens": tokens,
            },
        ],
    )
    db_path = home / ".local" / "share" / "opencode" / "opencode.db"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(db_path)
    db.executescript(
        "CREATE TABLE session(id TEXT PRIMARY KEY, directory TEXT, parent_id TEXT, title TEXT,"
        " time_created INTEGER);"
        "CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, data TEXT,"
        " time_created INTEGER);"
        "CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT,"
        " time_created INTEGER);"
    )
    counts = {"input": 800, "output": 60, "reasoning": 40, "cache": {"read": 5000, "write": 0}}
    data = {"role": "assistant", "modelID": "gpt-5", "providerID": "openai", "tokens": counts,
            "time": {"created": 1772366400000}}  # fmt: skip
    db.execute("INSERT INTO session VALUES ('oc1', '/w/oc', NULL, 't', 1772366400000)")
    db.execute("INSERT INTO message VALUES ('m1', 'oc1', ?, 1772366400000)", (json.dumps(data),))
    db.execute(
        "INSERT INTO part VALUES ('p1', 'm1', 'oc1', ?, 1772366400000)",
        (json.dumps({"type": "text", "text": "done"}),),
    )
    db.commit()
    db.close()


def ccusage_days(binary: str, home: Path, agent: str) -> dict[str, dict[str, Any]]:
    env = {**os.environ, "HOME": str(home), "TZ": "UTC"}
    done = subprocess.run(
        [binary, agent, "daily", "--json", "--offline"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    try:
        data = json.loads(done.stdout or "{}")
    except ValueError:
        return {}
    rows = data.get("daily") or data.get("days") or []
    return {str(r.get("date")): r for r in rows if isinstance(r, dict)}


def agentdex_days(home: Path, agent: str, data_dir: Path) -> dict[str, dict[str, Any]]:
    env = {**os.environ, "AGENTDEX_DATA_DIR": str(data_dir), "TZ": "UTC",
           "PYTHONPATH": str(REPO / "src")}  # fmt: skip
    env.pop("AGENTDEX_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-m", "agentdex", "--home", str(home), "usage", "--by", "day",
         "--agent", agent, "--json"],
        env=env, capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    return {str(r["day"]): r for r in json.loads(done.stdout)["rows"]}


def compare(binary: str, home: Path) -> list[str]:
    out = [f"## {home}"]
    with tempfile.TemporaryDirectory() as data:
        for theirs_name, ours_name in AGENTS.items():
            theirs = ccusage_days(binary, home, theirs_name)
            ours = agentdex_days(home, ours_name, Path(data))
            for day in sorted(set(theirs) | set(ours)):
                a = [ours.get(day, {}).get(f, 0) for f in OURS]
                b = [theirs.get(day, {}).get(f, 0) for f in THEIRS]
                cost_a = ours.get(day, {}).get("priced_cost_usd", 0.0)
                cost_b = theirs.get(day, {}).get("totalCost", 0.0)
                same = a == b and abs(cost_a - cost_b) < 0.005
                mark = "same" if same else "DIFF"
                pairs = " ".join(f"{n}={x}/{y}" for n, x, y in zip(FIELDS, a, b, strict=True))
                out.append(
                    f"{mark} {theirs_name:8} {day}  agentdex/ccusage {pairs}"
                    f" cost={cost_a:.4f}/{cost_b:.4f}"
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ccusage")
    parser.add_argument("homes", nargs="*", type=Path)
    parser.add_argument("--cases", type=Path, help="write the rule cases home here and compare it")
    args = parser.parse_args()
    homes = list(args.homes)
    if args.cases:
        write_cases(args.cases)
        homes.append(args.cases)
    for home in homes:
        print("\n".join(compare(args.ccusage, home)))


if __name__ == "__main__":
    main()

"""What reading usage costs the parsers that gained it (Cline tasks and sessions, Copilot CLI).

    python bench/parse_task_usage.py --work /tmp/adx-usage-parse [--requests 2000] [--runs 7]

Writes, in the agents' shapes, one Cline task of ``--requests`` API requests
(``api_conversation_history.json`` of user/assistant messages with tool calls and
``environment_details``, ``ui_messages.json`` with an ``api_req_started`` entry per
request among the usual ``text``/``tool`` entries) and one Copilot CLI event log of
``--requests`` turns ending in a ``session.shutdown`` (``requests.count`` = that
many), and one Cline SDK-era session (``<id>/<id>.messages.json`` + manifest) of
``--requests`` requests, each an assistant message with ``metrics`` and a tool round
trip. Parses each ``--runs`` times with the usage reading on and with it replaced
by a no-op, alternating, and prints the medians and their ratio as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agentdex.parsers import cline as cline_parser
from agentdex.parsers import copilot_cli
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.cline import sessions as cline_sessions
from agentdex.readers import Diagnostics

TS = 1_793_696_400_000
FILLER = "lorem ipsum dolor sit amet " * 40


def write_cline(root: Path, n: int) -> Path:
    task = root / "tasks" / str(TS)
    task.mkdir(parents=True, exist_ok=True)
    history: list[Any] = []
    ui: list[Any] = [{"ts": TS, "type": "say", "say": "task", "text": "fix it"}]
    for i in range(n):
        env = f"<environment_details>\n# Current Working Directory (/w/app) Files\n{FILLER}\n</environment_details>"  # noqa: E501
        history.append({"role": "user", "content": [
            {"type": "text", "text": f"[read_file for 'a{i}.py'] Result:\n{FILLER}"},
            {"type": "text", "text": env}]})  # fmt: skip
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {i}: {FILLER[:200]}"},
            {"type": "tool_use", "id": f"t{i}", "name": "read_file",
             "input": {"path": f"a{i + 1}.py"}}]})  # fmt: skip
        ts = TS + 1000 * (i + 1)
        counts = {"request": FILLER[:300], "tokensIn": 3 + i, "tokensOut": 150,
                  "cacheWrites": 900, "cacheReads": 12_000 + 50 * i, "cost": 0.01}  # fmt: skip
        model = {"modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic"}
        ui += [{"ts": ts, "type": "say", "say": "api_req_started",
                "text": json.dumps(counts), "modelInfo": model,
                "conversationHistoryIndex": 2 * i - 1},
               {"ts": ts + 1, "type": "say", "say": "text", "text": f"Step {i}",
                "conversationHistoryIndex": 2 * i},
               {"ts": ts + 2, "type": "ask", "ask": "tool",
                "text": json.dumps({"tool": "readFile", "path": f"a{i}.py"})}]  # fmt: skip
    (task / "api_conversation_history.json").write_text(json.dumps(history), encoding="utf-8")
    (task / "ui_messages.json").write_text(json.dumps(ui), encoding="utf-8")
    return task / "api_conversation_history.json"


def write_cline_session(root: Path, n: int) -> Path:
    sid = f"{TS}_bench"
    folder = root / "sessions" / sid
    folder.mkdir(parents=True, exist_ok=True)
    model = {"id": "claude-sonnet-4-6", "provider": "anthropic"}
    messages: list[Any] = [{"id": "u0", "role": "user", "ts": TS,
                            "content": [{"type": "text", "text": "<user_input mode=\"act\">fix it</user_input>"}]}]  # fmt: skip  # noqa: E501
    for i in range(n):
        ts = TS + 1000 * (i + 1)
        metrics = {"inputTokens": 12_000 + 60 * i, "outputTokens": 150, "cost": 0.01,
                   "cacheReadTokens": 11_000 + 50 * i, "cacheWriteTokens": 900}  # fmt: skip
        messages.append({"id": f"msg_a{i}", "role": "assistant", "ts": ts, "modelInfo": model,
                         "metrics": metrics, "content": [
            {"type": "text", "text": f"Step {i}: {FILLER[:200]}"},
            {"type": "tool_use", "id": f"t{i}", "name": "read_files",
             "input": {"files": [{"path": f"a{i}.py"}]}}]})  # fmt: skip
        messages.append({"id": f"msg_a{i}_tool_t{i}", "role": "user", "ts": ts + 5, "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "name": "read_files",
             "content": [{"query": f"a{i}.py", "result": FILLER, "success": True}]}]})  # fmt: skip
    doc = {"version": 1, "agent": "lead", "sessionId": sid, "messages": messages}
    path = folder / f"{sid}.messages.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    manifest = {"session_id": sid, "cwd": "/w/app", "model": model["id"],
                "started_at": "2026-11-01T09:00:00Z", "metadata": {"title": "fix it"}}  # fmt: skip
    (folder / f"{sid}.json").write_text(json.dumps(manifest), encoding="utf-8")
    return path


def write_copilot(root: Path, n: int) -> Path:
    path = root / "session-state" / "s1" / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session.start", "data": {"sessionId": "s1", "copilotVersion": "1.0.2",
              "context": {"cwd": "/w/app", "branch": "main"}}, "id": "e0",
              "timestamp": "2026-03-07T15:00:00Z"}]  # fmt: skip
    for i in range(n):
        lines += [{"type": "user.message", "data": {"content": f"step {i} {FILLER[:200]}"},
                   "id": f"u{i}", "timestamp": "2026-03-07T15:01:00Z"},
                  {"type": "assistant.message", "data": {"messageId": f"m{i}",
                   "content": FILLER[:400], "toolRequests": []}, "id": f"a{i}",
                   "timestamp": "2026-03-07T15:01:01Z"}]  # fmt: skip
    usage = {"inputTokens": 90_000_000, "outputTokens": 400_000, "cacheReadTokens": 85_000_000,
             "cacheWriteTokens": 1_000_000}  # fmt: skip
    lines.append({"type": "session.shutdown", "data": {"modelMetrics": {"claude-sonnet-4.5": {
        "requests": {"count": n, "cost": 1}, "usage": usage}}}, "id": "end",
        "timestamp": "2026-03-07T18:00:00Z"})  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def parse_once(parse: Any, path: Path, agent: str) -> tuple[float, int]:
    ref = SourceRef(path, agent, f"{agent}.s", None, 0.0, path.parents[2])
    cursor = ParseCursor()
    start = time.perf_counter()
    records = sum(1 for _ in parse(ref, cursor, Diagnostics()))
    return time.perf_counter() - start, records + len(cursor.usage)


def measure(name: str, parse: Any, path: Path, agent: str, module: Any, attr: str,
            runs: int) -> dict[str, Any]:  # fmt: skip
    real = getattr(module, attr)
    on: list[float] = []
    off: list[float] = []
    for _ in range(runs):
        for usage in (True, False):
            setattr(module, attr, real if usage else (lambda *a, **k: None))
            seconds, _ = parse_once(parse, path, agent)
            (on if usage else off).append(seconds)
    setattr(module, attr, real)
    _, items = parse_once(parse, path, agent)
    a, b = statistics.median(on), statistics.median(off)
    return {"case": name, "bytes": os.path.getsize(path) + sum(
        os.path.getsize(p) for p in path.parent.glob("ui_messages.json")),
        "items": items, "with_usage_s": round(a, 4), "without_usage_s": round(b, 4),
        "ratio": round(a / b, 3)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    cline_path = write_cline(args.work / "cline", args.requests)
    copilot_path = write_copilot(args.work / "copilot", args.requests)
    session_path = write_cline_session(args.work / "cline-sdk", args.requests)
    out = [
        measure("cline task", cline_parser.parse_task, cline_path, "cline", cline_parser,
                "note_task_usage", args.runs),
        measure("copilot-cli log", copilot_cli.parse_events, copilot_path, "copilot-cli",
                copilot_cli, "note_shutdown", args.runs),
        measure("cline session", cline_sessions.parse_session, session_path, "cline",
                cline_sessions, "note_call", args.runs),
    ]  # fmt: skip
    print(json.dumps({"requests": args.requests, "runs": args.runs, "results": out}, indent=1))


if __name__ == "__main__":
    main()

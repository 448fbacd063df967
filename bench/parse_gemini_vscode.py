#!/usr/bin/env python3
"""Throughput and peak memory of the Gemini CLI and VS Code Copilot Chat parsers.

Builds synthetic stores in a temporary folder (nothing real is read), then
parses each one and prints records/s, MB/s (timed without tracing) and the
tracemalloc peak of a second pass:

* a Gemini ``.jsonl`` chat with N turns (user + gemini with a thought and a
  tool call), every gemini message re-emitted once (upsert) and a rewind
  every 50 turns;
* a VS Code ``.jsonl`` mutation log with N requests pushed one by one, each
  response appended by a kind-2 push and a kind-1 result set;
* the same VS Code session as one ``.json`` document.

    python bench/parse_gemini_vscode.py            # N = 20000
    python bench/parse_gemini_vscode.py 5000
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from agentdex.parsers import ParseCursor, SourceRef, get_parser
from agentdex.readers import Diagnostics

FILLER = "lorem ipsum dolor sit amet " * 12


def gemini_log(path: Path, turns: int) -> None:
    with open(path, "w") as out:
        out.write(json.dumps({"sessionId": "bench", "projectHash": "x", "kind": "main"}) + "\n")
        for t in range(turns):
            out.write(
                json.dumps(
                    {
                        "id": f"u{t}",
                        "type": "user",
                        "content": [{"text": FILLER}],
                        "timestamp": "2026-11-20T10:00:00Z",
                    }
                )
                + "\n"
            )
            reply = {
                "id": f"g{t}",
                "type": "gemini",
                "content": FILLER,
                "model": "gemini-2.5-pro",
                "timestamp": "2026-11-20T10:00:01Z",
                "thoughts": [{"subject": "plan", "description": FILLER}],
                "toolCalls": [{"id": f"c{t}", "name": "read_file", "args": {"path": "a.py"}}],
            }
            out.write(json.dumps(reply) + "\n")
            reply["toolCalls"][0]["result"] = [
                {"functionResponse": {"response": {"output": FILLER}}}
            ]
            out.write(json.dumps(reply) + "\n")  # re-emitted with its result: an upsert
            out.write(json.dumps({"$set": {"lastUpdated": "2026-11-20T10:00:02Z"}}) + "\n")
            if t % 50 == 49:
                out.write(json.dumps({"id": f"x{t}", "type": "user", "content": "oops"}) + "\n")
                out.write(json.dumps({"$rewindTo": f"x{t}"}) + "\n")


def vscode_request(i: int) -> dict[str, object]:
    return {
        "requestId": f"r{i}",
        "message": {"text": FILLER},
        "timestamp": 1795210660000 + i,
        "modelId": "copilot/gpt-4.1",
        "response": [],
    }


def vscode_log(path: Path, requests: int) -> None:
    with open(path, "w") as out:
        out.write(
            json.dumps({"kind": 0, "v": {"version": 3, "sessionId": "bench", "requests": []}})
            + "\n"
        )
        for i in range(requests):
            out.write(json.dumps({"kind": 2, "k": ["requests"], "v": [vscode_request(i)]}) + "\n")
            parts = [
                {"value": FILLER},
                {
                    "kind": "toolInvocationSerialized",
                    "toolId": "t",
                    "pastTenseMessage": {"value": "Read [](file:///a.py)"},
                },
            ]
            out.write(json.dumps({"kind": 2, "k": ["requests", i, "response"], "v": parts}) + "\n")
            result = {"metadata": {"toolCallRounds": [{"toolCalls": [{"name": "t"}]}]}}
            out.write(json.dumps({"kind": 1, "k": ["requests", i, "result"], "v": result}) + "\n")


def vscode_json(path: Path, requests: int) -> None:
    reqs = []
    for i in range(requests):
        req = vscode_request(i)
        req["response"] = [{"value": FILLER}]
        reqs.append(req)
    path.write_text(json.dumps({"version": 3, "sessionId": "bench", "requests": reqs}))


def measure(label: str, path: Path, parser_id: str) -> None:
    spec = get_parser(parser_id)
    ref = SourceRef(path, "bench", "bench", None, 0.0, path.parent)
    cursor = ParseCursor()
    started = time.perf_counter()
    count = sum(1 for _ in spec.parse(ref, cursor, Diagnostics()))
    elapsed = time.perf_counter() - started
    tracemalloc.start()  # a second pass: tracemalloc slows the parse several times over
    sum(1 for _ in spec.parse(ref, ParseCursor(), Diagnostics()))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = path.stat().st_size / 1e6
    assert spec.count_raw is not None and cursor.units == spec.count_raw(path)
    print(
        f"{label:28} {size:7.1f} MB {count:8d} records {elapsed:6.2f} s "
        f"{count / elapsed:9.0f} rec/s {size / elapsed:6.1f} MB/s  peak {peak / 1e6:6.1f} MB"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        gemini_log(base / "session-bench.jsonl", n)
        vscode_log(base / "bench.jsonl", n // 4)
        vscode_json(base / "bench.json", n // 4)
        measure(f"gemini .jsonl ({n} turns)", base / "session-bench.jsonl", "gemini-cli.chat.v1")
        measure(
            f"vscode .jsonl ({n // 4} req)", base / "bench.jsonl", "vscode-copilot.chat_session.v1"
        )
        measure(
            f"vscode .json ({n // 4} req)", base / "bench.json", "vscode-copilot.chat_session.v1"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Throughput and memory of the Claude Code and Codex transcript parsers.

Writes a synthetic transcript of about ``--mb`` megabytes for each parser
in a temporary folder, parses it in a child process (so peak RSS is the
parser's own), and prints MB/s, records/s and the peak RSS. Run twice with
different sizes to see that memory stays flat as the file grows:

    python bench/parse_claude_codex.py --mb 50
    python bench/parse_claude_codex.py --mb 200
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _claude_lines(i: int) -> list[dict[str, object]]:
    base = {"sessionId": "bench", "cwd": "/w/bench", "gitBranch": "main"}
    ts = f"2026-11-20T10:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
    return [
        {**base, "type": "user", "timestamp": ts,
         "message": {"role": "user", "content": f"prompt {i} " + "words " * 40}},
        {**base, "type": "assistant", "timestamp": ts,
         "message": {"role": "assistant", "model": "m", "content": [
             {"type": "text", "text": "answer " * 60},
             {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls -la"}},
         ]}},
        {**base, "type": "user", "timestamp": ts, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "file.py\n" * 200}]}},
        {"type": "progress", "data": {"n": i}},
    ]  # fmt: skip


def _codex_lines(i: int) -> list[dict[str, object]]:
    ts = "2026-11-20T10:00:00.000Z"
    text = f"prompt {i} " + "words " * 40
    return [
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
        {"timestamp": ts, "type": "event_msg",
         "payload": {"type": "user_message", "message": text}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}',
            "call_id": f"c{i}"}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": f"c{i}", "output": "file.py\n" * 200}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "answer " * 60}]}},
    ]  # fmt: skip


def write(path: Path, mb: int, make: object) -> None:
    target = mb * 1024 * 1024
    size = 0
    i = 0
    with open(path, "w", encoding="utf-8") as handle:
        if "rollout" in path.name:
            meta = {"id": "bench", "cwd": "/w/bench"}
            handle.write(json.dumps({"type": "session_meta", "payload": meta}) + "\n")
        while size < target:
            for line in make(i):  # type: ignore[operator]
                encoded = json.dumps(line) + "\n"
                handle.write(encoded)
                size += len(encoded)
            i += 1


def child(parser_id: str, path: str) -> None:
    sys.path.insert(0, str(SRC))
    from agentdex.parsers import get_parser
    from agentdex.parsers.base import ParseCursor, SourceRef
    from agentdex.readers import Diagnostics

    spec = get_parser(parser_id)
    ref = SourceRef(Path(path), "bench", "bench", None, 0.0, Path(path).parent)
    cursor = ParseCursor()
    start = time.perf_counter()
    count = sum(1 for _ in spec.parse(ref, cursor, Diagnostics()))
    elapsed = time.perf_counter() - start
    parse_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    raw_start = time.perf_counter()
    raw = spec.count_raw(Path(path)) if spec.count_raw else -1
    raw_elapsed = time.perf_counter() - raw_start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = Path(path).stat().st_size / 1024 / 1024
    print(
        f"{parser_id:34} {size_mb:7.1f} MB  {elapsed:6.2f} s  {size_mb / elapsed:6.1f} MB/s  "
        f"{count / elapsed:9.0f} records/s  units={cursor.units} raw={raw} "
        f"(count_raw {raw_elapsed:.2f} s)  peak RSS parse {parse_peak_mb:.0f} MB, "
        f"after count_raw {peak_mb:.0f} MB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=50, help="size of each synthetic file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        claude = Path(tmp) / "bench-session.jsonl"
        codex = Path(tmp) / "rollout-2026-11-20T10-00-00-bench.jsonl"
        write(claude, args.mb, _claude_lines)
        write(codex, args.mb, _codex_lines)
        for parser_id, path in (
            ("claude-code.transcript_jsonl.v1", claude),
            ("codex.rollout_jsonl.v1", codex),
        ):
            subprocess.run([sys.executable, __file__, "--child", parser_id, str(path)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

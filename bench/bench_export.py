"""Time ``agentdex export`` of one long conversation, per format, with and without --redact.

Writes a synthetic Claude Code transcript of ``--messages`` records (prompts,
Markdown replies with code blocks, tool calls and results, reasoning, a few
secrets) into a temporary home, then times ``api.export.export`` for each
format (median of ``--runs``; the first run, which imports markdown-it, is
reported apart) and the size of each document.

    python bench/bench_export.py --messages 5000 --runs 5

Not a test: numbers depend on the machine (see docs/resume-and-export.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SESSION = "be0c0000-1111-4222-8333-444455556666"
REPLY = (
    "Here is the change:\n\n```python\ndef retry(fn, attempts=3):\n    for i in range(attempts):\n"
    "        try:\n            return fn()\n"
    "        except Exception:\n            time.sleep(2 ** i)\n"
    "```\n\n- keeps the **existing** API\n- adds `attempts`\n"
)


def _line(index: int, cwd: str) -> dict[str, object]:
    stamp = f"2026-11-20T{10 + index // 3600 % 10:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"
    base: dict[str, object] = {
        "sessionId": SESSION,
        "cwd": cwd,
        "timestamp": stamp,
        "uuid": f"u{index}",
    }
    step = index % 4
    if step == 0:
        text = f"step {index}: make the retry configurable; token=tkn-{index:06d}"
        return {**base, "type": "user", "message": {"role": "user", "content": text}}
    if step == 1:
        content = [
            {"type": "thinking", "thinking": "The caller passes attempts; keep the default."},
            {
                "type": "tool_use",
                "id": f"t{index}",
                "name": "Bash",
                "input": {"command": "pytest -q"},
            },
        ]
        return {**base, "type": "assistant", "message": {"role": "assistant", "content": content}}
    if step == 2:
        result = [
            {"type": "tool_result", "tool_use_id": f"t{index - 1}", "content": "12 passed\n" * 20}
        ]
        return {**base, "type": "user", "message": {"role": "user", "content": result}}
    return {**base, "type": "assistant", "message": {"role": "assistant", "content": REPLY}}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        project = home / "work" / "shop"
        project.mkdir(parents=True)
        slug = home / ".claude" / "projects" / "-work-shop"
        slug.mkdir(parents=True)
        lines = (json.dumps(_line(i, str(project))) for i in range(args.messages))
        (slug / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.environ["AGENTDEX_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["HOME"] = str(home)
        from agentdex.api import export

        report = []
        for fmt in export.FORMATS:
            for redact in (False, True):
                started = time.perf_counter()
                first = export.export(SESSION, str(home), format=fmt, redact=redact)
                cold = time.perf_counter() - started
                times = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    export.export(SESSION, str(home), format=fmt, redact=redact)
                    times.append(time.perf_counter() - started)
                report.append(
                    {
                        "format": fmt,
                        "redact": redact,
                        "first_s": round(cold, 3),
                        "median_s": round(statistics.median(times), 3),
                        "bytes": len(first.content.encode("utf-8")),
                        "redacted": first.redacted,
                    }
                )
        print(
            json.dumps({"messages": args.messages, "runs": args.runs, "results": report}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

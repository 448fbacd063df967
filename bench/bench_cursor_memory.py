"""Peak memory and throughput of the Cursor parser on a large ``state.vscdb``.

Generates a synthetic global ``state.vscdb`` of about ``--mb`` megabytes
(current era: ``composerData:*`` headers + ``bubbleId:*`` rows, plus
``agentKv`` noise the parser must skip), then parses it in a fresh child
process and reports that child's peak RSS (``resource.getrusage``) next to
its RSS after imports, so the difference is what parsing costs.

    python bench/bench_cursor_memory.py --mb 300
    python bench/bench_cursor_memory.py --mb 2000 --keep /tmp/big.vscdb

Not a test: numbers depend on the machine (see docs/performance-cursor.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUBBLES_PER_COMPOSER = 200
WORDS = (
    "cart",
    "session",
    "token",
    "retry",
    "worker",
    "cache",
    "schema",
    "route",
    "index",
    "commit",
    "branch",
    "lock",
    "queue",
    "parser",
    "bubble",
    "composer",
    "pytest",
    "async",
)


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)


def generate(path: Path, megabytes: int, seed: int = 7) -> dict[str, int]:
    """Write the synthetic store; returns how many composers/bubbles it holds."""
    rng = random.Random(seed)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    target = megabytes * 1024 * 1024
    written = composers = bubbles = 0
    while written < target:
        cid = f"{composers:08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
        headers = []
        rows = []
        # one composer in 20 is a long one (tool output heavy): exercises the batching
        count = BUBBLES_PER_COMPOSER * (10 if composers % 20 == 0 else 1)
        for i in range(count):
            bid = f"{i:08x}-{rng.getrandbits(32):08x}"
            kind = 1 if i % 3 == 0 else 2
            bubble: dict[str, object] = {
                "bubbleId": bid,
                "type": kind,
                "text": _text(rng, 300 if kind == 1 else 1200),
                "createdAt": 1794492000000 + i * 1000,
            }
            if kind == 2 and i % 4 == 1:
                bubble["toolFormerData"] = {
                    "toolCallId": bid,
                    "name": "run_terminal_cmd",
                    "rawArgs": json.dumps({"command": "pytest -q"}),
                    "status": "completed",
                    "result": _text(rng, 2000),
                }
            value = json.dumps(bubble)
            rows.append((f"bubbleId:{cid}:{bid}", value))
            headers.append({"bubbleId": bid, "type": kind})
            written += len(value)
        composer = {
            "composerId": cid,
            "name": f"composer {composers}",
            "createdAt": 1794492000000,
            "modelConfig": {"modelName": "claude-4.5-sonnet"},
            "fullConversationHeadersOnly": headers,
        }
        rows.append((f"composerData:{cid}", json.dumps(composer)))
        rows.append((f"agentKv:blob:{cid}", _text(rng, 4000)))
        conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
        composers += 1
        bubbles += count
    conn.commit()
    conn.close()
    return {"composers": composers, "bubbles": bubbles}


CHILD = r"""
import resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.cursor import PARSERS
from agentdex.readers import Diagnostics
path = Path(sys.argv[1])
def hwm():
    # VmHWM (KiB) from /proc: the same peak, per address space; -1 where absent
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[3] == "naive":  # the baseline the parser must beat: every value in memory at once
    import sqlite3
    start = time.perf_counter()
    rows = sqlite3.connect(path).execute("SELECT key, value FROM cursorDiskKV").fetchall()
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(before, peak, elapsed, len(rows), len(rows), 0, 0, hwm())
    raise SystemExit(0)
cursor, diags = ParseCursor(), Diagnostics()
ref = SourceRef(path, "cursor", "cursor.global_state", None, 0.0, path.parent)
start = time.perf_counter()
records = chars = 0
for record in PARSERS[0].parse(ref, cursor, diags):
    records += 1
    chars += len(record.text)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, peak, elapsed, records, cursor.units, chars, diags.count, hwm())
"""


def _child(path: Path, mode: str) -> list[str]:
    """Run the parse (or the naive load) in a fresh interpreter; its own ru_maxrss is reported."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(REPO / "src"), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300, help="approximate DB size (default 300)")
    parser.add_argument("--naive", action="store_true", help="also measure a whole-table load")
    parser.add_argument("--keep", type=Path, help="write the DB here (and reuse it if present)")
    parser.add_argument("--generate-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_only:
        print(generate(args.generate_only, args.mb))
        return 0
    tmp = None
    if args.keep:
        path = args.keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix="cursor-bench-")
        path = Path(tmp.name) / "state.vscdb"
    try:
        if not path.exists():
            # Generated in a child too: ru_maxrss survives fork+exec on Linux, so a big
            # parent would inflate the parse child's numbers.
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, __file__, "--generate-only", str(path), "--mb", str(args.mb)],
                capture_output=True,
                text=True,
                check=True,
            )
            print(f"generated {path} in {time.perf_counter() - t0:.1f}s: {done.stdout.strip()}")
        size = os.path.getsize(path)
        scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
        mib = 1024 * 1024
        if args.naive:
            naive = _child(path, "naive")
            print(
                f"naive fetchall()   peak RSS {int(naive[1]) * scale / mib:,.1f} MiB "
                f"(+{(int(naive[1]) - int(naive[0])) * scale / mib:,.1f} MiB): loading it whole"
            )
        out = _child(path, "parse")
        before, peak = int(out[0]), int(out[1])
        elapsed, records, units = float(out[2]), int(out[3]), int(out[4])
        print(f"db size            {size / mib:,.0f} MiB")
        print(f"records / bubbles  {records:,} / {units:,}  (diagnostics {out[6]})")
        print(
            f"parse time         {elapsed:.1f} s  ({size / mib / elapsed:,.1f} MiB/s, "
            f"{records / elapsed:,.0f} records/s)"
        )
        print(f"RSS after imports  {before * scale / mib:,.1f} MiB")
        print(
            f"peak RSS           {peak * scale / mib:,.1f} MiB  "
            f"(+{(peak - before) * scale / mib:,.1f} MiB while parsing; "
            f"VmHWM {int(out[7]) / 1024:,.1f} MiB)"
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Start-up cost of the CLI in a fresh process: median wall time over N runs.

Compares ``agentdex --help`` (and ``--version``) with the floor of starting
Python at all (``python -c pass``), and lists the slowest imports of the
``--help`` path from ``-X importtime``.

    python bench/bench_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _time(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(SRC))
    py = sys.executable
    floor = _time([py, "-c", "pass"], args.runs, env)
    rows = [
        ("python -c pass (floor)", floor),
        ("agentdex --version", _time([py, "-m", "agentdex", "--version"], args.runs, env)),
        ("agentdex --help", _time([py, "-m", "agentdex", "--help"], args.runs, env)),
        (
            "agentdex search --help",
            _time([py, "-m", "agentdex", "search", "--help"], args.runs, env),
        ),
    ]
    print(f"median of {args.runs} runs")
    for name, seconds in rows:
        print(f"  {name:<28} {seconds * 1000:7.1f} ms   {seconds / floor:4.1f}x floor")
    out = subprocess.run(
        [py, "-X", "importtime", "-m", "agentdex", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    ).stderr
    costs = []
    for line in out.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line.split("|")]
            try:
                costs.append((int(parts[1]), parts[2]))
            except ValueError:
                continue
    print("slowest imports on the --help path (cumulative us):")
    for micros, name in sorted(costs, reverse=True)[:8]:
        print(f"  {micros:>8}  {name}")


if __name__ == "__main__":
    main()
